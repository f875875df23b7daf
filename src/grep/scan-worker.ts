/**
 * A scan worker of `ScanPool` (SPEC §10, §16): a thread that reads and matches the files of one
 * search, so a costly regular expression blocks it, not the server's event loop, and two of them
 * use both cores. It never opens anything: files arrive as descriptors the main thread opened
 * through the sandbox, read with pread up to the size they had when opened (one handed over
 * unchecked is read whole here first when small, else checked by its handle and read up to its size
 * then); its replies keep the order of the files it was given.
 */
import { fstatSync, readSync } from "node:fs";
import { parentPort } from "node:worker_threads";
import { BINARY_PROBE_BYTES } from "../kernel/binary.js";
import { DEFAULT_CHUNK, memoryReader, scanFile, type ReadAt, type Scratch } from "./file-scan.js";
import { UNNAMED } from "./format.js";
import { LineFinder } from "./line-finder.js";
import {
  limitOf,
  packOutcomes,
  UNCHECKED,
  unpackFiles,
  type Checked,
  type CountJob,
  type FileFailure,
  type FileOutcome,
  type JobFile,
  type ScanJob,
  type ShowAhead,
  type WorkerReply,
} from "./protocol.js";
import { compileQuery, type Query, type QuerySpec } from "./query.js";
import type { FileRequest } from "./region-search.js";
import { countWholeLines } from "./whole-count.js";

const failure = (err: unknown): FileFailure => ({
  error: err instanceof Error ? err.message : String(err),
  code: (err as { code?: string }).code,
});

/** Reads a job file: pread on its descriptor, never past its limit (a file growing meanwhile is read as it was). */
function readerOf(file: JobFile): ReadAt {
  return (buf, offset, length, position) =>
    position >= file.limit ? 0 : readSync(file.fd, buf, offset, Math.min(length, file.limit - position), position);
}

/** What one served port keeps between its jobs (a port runs one job at a time): the last query compiled, the read buffers. */
interface ScanState {
  cached?: { key: string; query: Query; finder: LineFinder };
  small: Buffer;
  arena: Arena;
  scratch?: Scratch;
}

function queryOf(state: ScanState, spec: QuerySpec): { query: Query; finder: LineFinder } {
  const key = JSON.stringify(spec);
  if (state.cached?.key !== key) {
    const query = compileQuery(spec);
    state.cached = { key, query, finder: new LineFinder(query) };
  }
  return state.cached;
}

const countRequest = (occurrences: boolean): FileRequest => ({
  mode: "count",
  contextLines: 0,
  skip: 0,
  room: 0,
  displayPath: "" as FileRequest["displayPath"],
  blankFirst: false,
  forceFirst: false,
  occurrences,
});

// The buffers every scan of this port reads into (a port runs one job, and a job one scan, at a time).
function scratchOf(state: ScanState, chunkSize = DEFAULT_CHUNK): Scratch {
  const size = Math.max(chunkSize, 16);
  if (state.scratch?.chunk.length !== size) state.scratch = { probe: Buffer.allocUnsafe(BINARY_PROBE_BYTES), chunk: Buffer.allocUnsafe(size) };
  return state.scratch;
}

// Reads `fd` from its start into `buf` until `want` bytes or its end; the bytes read (`buf`'s length at most).
function readStart(fd: number, buf: Buffer, want: number): number {
  let length = 0;
  for (let n = -1; n !== 0 && length < want; length += n) n = readSync(fd, buf, length, buf.length - length, length);
  return length;
}

// A small file (its size when opened below BINARY_PROBE_BYTES) read whole, as it was when opened (its `limit`, as
// every read of a job file), or undefined when it has grown past that. Reads until the limit, not until a read
// returns nothing: one read for most files of a tree instead of two (a sixth of the scan worker's system calls).
function readSmall({ small }: ScanState, fd: number, limit: number): Buffer | undefined {
  const length = readStart(fd, small, Math.min(limit, small.length));
  return length < small.length ? small.subarray(0, Math.min(length, limit)) : undefined;
}

/**
 * A file of a job as the worker found it: one handed over unchecked with what its check found (`checked`, and its text
 * when it was read whole), one the walk checked as given; or why it is not read.
 */
type Found = { file: JobFile; checked?: Checked; whole?: Buffer } | FileFailure;

// Where small files handed over unchecked are read to their end: each in turn (then scanned while its bytes are still in
// the cache), or for a budgeted job all of its files before any is scanned (up to 256 of 8 KiB: 2 MiB), kept for the next.
const ARENA_BYTES = 512 * 1024;

class Arena {
  private readonly blocks: Buffer[] = [];
  private block = 0;
  private used = 0;

  /** Every block free again: what was read into them is no longer used. */
  reset(): void {
    this.block = 0;
    this.used = 0;
  }

  /** Room for one small file (BINARY_PROBE_BYTES), at the end of the current block or in the next. */
  room(): Buffer {
    if (this.used + BINARY_PROBE_BYTES > ARENA_BYTES) {
      this.block++;
      this.used = 0;
    }
    if (this.block === this.blocks.length) this.blocks.push(Buffer.allocUnsafe(ARENA_BYTES));
    return (this.blocks[this.block] as Buffer).subarray(this.used, this.used + BINARY_PROBE_BYTES);
  }

  /** Keeps the first `length` bytes of the room last given. */
  keep(length: number): void {
    this.used += length;
  }
}

// A file handed over unchecked, read to its end when that fits BINARY_PROBE_BYTES (most files of a tree: no fstat, 8-9%
// of a search's CPU over the bench's repository tree), else checked as the walk would have: a regular file (a directory or device
// swapped in since the walk read its directory is not read), read up to its size now. A read that fails or finds nothing
// is checked too, so a FIFO swapped in unwritten is refused as one rather than read as empty.
function find(file: JobFile, arena: Arena): Found {
  try {
    const room = arena.room();
    let length: number;
    try {
      // To its end: with no size to stop at, a read that returns nothing says where that is.
      length = readStart(file.fd, room, room.length);
    } catch (err) {
      if (!fstatSync(file.fd).isFile()) return { error: "not a regular file", code: "EINVAL" };
      throw err;
    }
    if (length > 0 && length < room.length) {
      arena.keep(length);
      return { file: { fd: file.fd, limit: length }, checked: { size: length }, whole: room.subarray(0, length) };
    }
    const st = fstatSync(file.fd);
    if (!st.isFile()) return { error: "not a regular file", code: "EINVAL" };
    return { file: { fd: file.fd, limit: limitOf(st.size) }, checked: { size: st.size } };
  } catch (err) {
    return failure(err);
  }
}

// Every file of a budgeted job handed over unchecked, found before any is scanned, so the call is credited their bytes
// before the scan they pay for starts; undefined for a file the walk checked.
function findAll(files: readonly JobFile[], arena: Arena, credit: (bytes: number) => void): (Found | undefined)[] {
  let bytes = 0;
  arena.reset();
  const results = files.map((f): Found | undefined => {
    if (f.limit !== UNCHECKED) return undefined;
    const got = find(f, arena);
    if (!("error" in got)) bytes += got.checked?.size ?? 0;
    return got;
  });
  if (bytes > 0) credit(bytes);
  return results;
}

// A file of a job, as the worker found it when it came unchecked (see `find`), else as the walk gave it.
function foundAt(files: readonly JobFile[], i: number, ahead: (Found | undefined)[] | undefined, arena: Arena): Found {
  const file = files[i] as JobFile;
  if (ahead !== undefined) return ahead[i] ?? { file };
  if (file.limit !== UNCHECKED) return { file };
  arena.reset();
  return find(file, arena);
}

/**
 * What a count job shows ahead (protocol.ts `ShowAhead`): the text of each file with matches, under no name, while the
 * texts so far fit in its room; then nothing more (the page is cut by then, or another file's scan shows it).
 */
class LinesAhead {
  private roomLeft: number;

  constructor(
    private readonly show: ShowAhead,
    private readonly query: Query,
    private readonly settings: Pick<CountJob, "chunkSize" | "maxLineBytes">,
  ) {
    this.roomLeft = show.room;
  }

  /** The text of a file's `matchingLines` matching lines, all of them, or undefined when they do not fit or the scan failed. */
  async text(read: ReadAt, matchingLines: number, scratch: Scratch): Promise<string | undefined> {
    if (matchingLines === 0 || this.roomLeft <= 0) return undefined;
    const req: FileRequest = {
      mode: "lines",
      contextLines: this.show.contextLines,
      skip: 0,
      room: this.roomLeft,
      displayPath: UNNAMED,
      blankFirst: false,
      forceFirst: false,
      knownLines: matchingLines,
    };
    try {
      const scan = await scanFile(read, this.query, req, { ...this.settings, scratch });
      if (scan.exhausted || scan.binary || scan.shown !== matchingLines) {
        this.roomLeft = 0;
        return undefined;
      }
      this.roomLeft -= scan.text.length;
      return scan.text;
    } catch {
      // The file's scan of its own, at the merge, says what went wrong.
      return undefined;
    }
  }
}

async function count(state: ScanState, job: CountJob, credit: (bytes: number) => void): Promise<FileOutcome[]> {
  const { query, finder } = queryOf(state, job.spec);
  const req = countRequest(job.occurrences);
  const ahead = job.show === undefined ? undefined : new LinesAhead(job.show, query, job);
  const out: FileOutcome[] = [];
  const given = unpackFiles(job.files);
  const foundAhead = job.credit === true ? findAll(given, state.arena, credit) : undefined;
  for (let i = 0; i < given.length; i++) {
    const got = foundAt(given, i, foundAhead, state.arena);
    if ("error" in got) {
      out.push(got);
      continue;
    }
    const { file, checked } = got;
    let whole = got.whole;
    try {
      if (whole === undefined && file.limit < BINARY_PROBE_BYTES) whole = readSmall(state, file.fd, file.limit);
    } catch (err) {
      out.push(failure(err));
      continue;
    }
    if (whole !== undefined) {
      // Most files of a tree: counted in place, without a scan's promises and buffers.
      const c = countWholeLines(finder, whole, job.occurrences);
      const lines = c.lines > 0 ? await ahead?.text(memoryReader(whole), c.lines, scratchOf(state, job.chunkSize)) : undefined;
      out.push({
        binary: c.lines < 0,
        matchingLines: Math.max(0, c.lines),
        occurrences: c.occurrences,
        bytes: c.lines < 0 ? 0 : whole.length,
        checked,
        ...(lines === undefined ? {} : { lines }),
      });
      continue;
    }
    try {
      const {
        text: _t,
        skipped: _s,
        shown: _w,
        exhausted: _e,
        ...figures
      } = await scanFile(readerOf(file), query, req, {
        chunkSize: job.chunkSize,
        // A literal is counted across a line longer than the chunk in pieces of the chunk, whose overlap keeps every
        // occurrence: grown to hold such a line whole, the buffer was copied at each doubling, a sixth of a worker's
        // time over installed packages (minified sources). A regex keeps the line whole, as its anchors need.
        maxLineBytes: query.mayBacktrack ? job.maxLineBytes : (job.chunkSize ?? DEFAULT_CHUNK),
        scratch: scratchOf(state, job.chunkSize),
      });
      const lines = figures.binary ? undefined : await ahead?.text(readerOf(file), figures.matchingLines, scratchOf(state, job.chunkSize));
      out.push({ ...figures, checked, ...(lines === undefined ? {} : { lines }) });
    } catch (err) {
      out.push(failure(err));
    }
  }
  return out;
}

/** The side of a channel that scan jobs arrive on: a worker thread's parentPort, or the in-thread stand-in (scan-thread.ts). */
export interface ScanPort {
  postMessage(reply: WorkerReply, transfer?: ArrayBuffer[]): void;
  on(event: "message", listener: (job: ScanJob) => void): unknown;
}

/** Answers the scan jobs that arrive on `port`, after saying it is ready. */
export function serveScans(port: ScanPort): void {
  const state: ScanState = { small: Buffer.allocUnsafe(BINARY_PROBE_BYTES), arena: new Arena() };
  const post = (reply: WorkerReply): void => port.postMessage(reply);
  port.on("message", (job: ScanJob) => {
    const started = performance.now();
    const ms = (): number => performance.now() - started;
    const done =
      job.kind === "count"
        ? count(state, job, (bytes) => post({ type: "credit", id: job.id, bytes })).then((files) => {
            const packed = packOutcomes(files);
            port.postMessage({ type: "counted", id: job.id, ms: ms(), ...packed } satisfies WorkerReply, [packed.figures.buffer as ArrayBuffer]);
          })
        : scanFile(readerOf(job.file), queryOf(state, job.spec).query, job.req, {
            chunkSize: job.chunkSize,
            maxLineBytes: job.maxLineBytes,
            scratch: scratchOf(state, job.chunkSize),
            onProgress: (n) => post({ type: "progress", id: job.id, bytes: n }),
          }).then((scan) => post({ type: "shown", id: job.id, ms: ms(), scan }));
    done.catch((err: unknown) => {
      const f = failure(err);
      post({ type: "failed", id: job.id, ms: ms(), message: f.error, code: f.code });
    });
  });
  post({ type: "ready" });
}

if (parentPort !== null) serveScans(parentPort);
