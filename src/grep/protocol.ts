/**
 * What the main thread and a scan worker say to each other (SPEC §10, §16): the jobs, the
 * replies, and the packing both sides share — a count job's files go as descriptor and limit
 * pairs, its outcomes come back as flags and figures in one typed array (cloning an object per
 * file cost as much as scanning small files), with the failures beside them.
 */
import type { FileScan } from "./file-scan.js";
import type { QuerySpec } from "./query.js";
import type { FileRequest } from "./region-search.js";

/** One file of a job: an open descriptor, read up to `limit` bytes; a limit of -1 says it came unchecked (the worker checks it). */
export interface JobFile {
  fd: number;
  limit: number;
}

/** The limit of a file handed over unchecked: the worker reads a small one whole, and checks a larger one is a regular file and reads it up to its size then. */
export const UNCHECKED = -1;

/** What every job of a call carries: the query, and the scanner's sizes. */
export interface JobSettings {
  spec: QuerySpec;
  chunkSize?: number;
  maxLineBytes?: number;
}

interface JobBase extends JobSettings {
  id: number;
}

/**
 * Lines mode while the page still shows lines and has none to skip: each file a count job finds matches in is scanned
 * again at once, by the worker that holds it, for the text the page would show of it (format.ts `UNNAMED`), while the
 * job's texts so far fit in `room`. The merge takes a text that fits where its file falls, in place of a scan of its own.
 */
export interface ShowAhead {
  room: number;
  contextLines: number;
}

/** Count the matching lines (and occurrences) of each file, in order. */
export interface CountJob extends JobBase {
  kind: "count";
  /** Descriptor and limit of each file, in pairs (see `packFiles`). */
  files: Float64Array;
  occurrences: boolean;
  show?: ShowAhead;
  /** Post the bytes of the files it checks (those handed over unchecked) before it scans any: the call's budget is credited with them. */
  credit?: boolean;
}

/** Scan one file as `req` asks (lines shown, or counted), with progress after each chunk. */
interface ShowJob extends JobBase {
  kind: "show";
  file: JobFile;
  req: FileRequest;
}

/** A job posted to the worker. */
export type ScanJob = CountJob | ShowJob;

/** A job before the pool numbers it. */
export type ScanRequest = Omit<CountJob, "id"> | Omit<ShowJob, "id">;

/** Why reading a file failed: the message, and the system's code when it gave one. */
export interface FileFailure {
  error: string;
  code?: string;
}

/** What the worker found of a file handed over unchecked: its size (the bytes it read of a small one, else its fstat's). */
export interface Checked {
  size: number;
}

/**
 * One file's figures in a count job (with what the worker's check found, for a file handed over unchecked, and the text
 * of its matching lines under no name when the job showed ahead), or why reading it failed.
 */
export type FileOutcome = (Omit<FileScan, "text" | "skipped" | "shown" | "exhausted"> & { checked?: Checked; lines?: string }) | FileFailure;

/** A count job's outcomes as sent back: FIGURES numbers a file, the failures and the texts shown ahead by index. */
export interface PackedOutcomes {
  figures: Float64Array;
  errors: (FileFailure & { at: number })[];
  texts: { at: number; text: string }[];
}

/**
 * What the worker posts: ready once started, progress of a show job or the bytes a count job checked (for the budget),
 * then the job's result or its error, with the milliseconds it worked on the job.
 */
export type WorkerReply =
  | { type: "ready" }
  | { type: "progress"; id: number; bytes: number }
  | { type: "credit"; id: number; bytes: number }
  | ({ type: "counted"; id: number; ms: number } & PackedOutcomes)
  | { type: "shown"; id: number; ms: number; scan: FileScan }
  | { type: "failed"; id: number; ms: number; message: string; code?: string };

/** Numbers per file in a count reply: flags, matching lines, occurrences, bytes, and the size a check found. */
const FIGURES = 5;
const BINARY = 1;
const FAILED = 2;
/** The worker checked the file: the last number holds the size it found. */
const CHECKED = 4;
/** How far a file is read: its size when opened, or to its end when that said 0 (pseudo files). */
export const limitOf = (size: number): number => (size > 0 ? size : Number.MAX_SAFE_INTEGER);

/** The files of a count job, from their descriptors and sizes when opened (-1: unchecked). */
export function packFiles(files: readonly { fd: number; size: number }[]): Float64Array {
  const packed = new Float64Array(2 * files.length);
  files.forEach((f, i) => {
    packed[2 * i] = f.fd;
    packed[2 * i + 1] = f.size < 0 ? UNCHECKED : limitOf(f.size);
  });
  return packed;
}

/** The files of a count job, back as descriptors and limits. */
export function unpackFiles(packed: Float64Array): JobFile[] {
  const files: JobFile[] = [];
  for (let i = 0; i + 1 < packed.length; i += 2) files.push({ fd: packed[i] as number, limit: packed[i + 1] as number });
  return files;
}

/** A count job's outcomes, packed to be sent back. */
export function packOutcomes(outcomes: readonly FileOutcome[]): PackedOutcomes {
  const figures = new Float64Array(FIGURES * outcomes.length);
  const errors: PackedOutcomes["errors"] = [];
  const texts: PackedOutcomes["texts"] = [];
  outcomes.forEach((o, i) => {
    const at = FIGURES * i;
    if ("error" in o) {
      figures[at] = FAILED;
      errors.push({ at: i, ...o });
      return;
    }
    const checked = o.checked;
    if (o.lines !== undefined) texts.push({ at: i, text: o.lines });
    figures[at] = (o.binary ? BINARY : 0) | (checked === undefined ? 0 : CHECKED);
    figures[at + 1] = o.matchingLines;
    figures[at + 2] = o.occurrences;
    figures[at + 3] = o.bytes;
    if (checked !== undefined) figures[at + 4] = checked.size;
  });
  return { figures, errors, texts };
}

/** A count job's outcomes, one per file given, in order. */
export function unpackOutcomes({ figures, errors, texts }: PackedOutcomes): FileOutcome[] {
  const failures = new Map(errors.map(({ at, ...f }) => [at, f]));
  const shown = new Map(texts.map(({ at, text }) => [at, text]));
  const out: FileOutcome[] = [];
  for (let at = 0; at + FIGURES <= figures.length; at += FIGURES) {
    const flags = figures[at] as number;
    if (flags & FAILED) {
      out.push(failures.get(at / FIGURES) ?? { error: "a scan worker gave no reason" });
      continue;
    }
    const lines = shown.get(at / FIGURES);
    out.push({
      binary: (flags & BINARY) !== 0,
      matchingLines: figures[at + 1] as number,
      occurrences: figures[at + 2] as number,
      bytes: figures[at + 3] as number,
      ...(flags & CHECKED ? { checked: { size: figures[at + 4] as number } } : {}),
      ...(lines === undefined ? {} : { lines }),
    });
  }
  return out;
}
