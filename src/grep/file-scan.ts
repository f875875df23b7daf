/**
 * Streams one file through a query (SPEC §10): binary check on the first
 * 8 KiB, then region by region of whole lines, holding one chunk plus the
 * context lines. Line numbers are counted only while lines are being shown;
 * after that, matching lines are only counted.
 */
import type { Shown } from "../escape.js";
import { clipLine, LinesOutput, MAX_LINE_CHARS, type ContextEntry } from "./format.js";
import { LineFinder } from "./line-finder.js";
import type { Query } from "./query.js";

/** What the tool shows: matching lines, matching files with counts, or totals only. */
export type OutputMode = "lines" | "files" | "count";

/** Reads up to `length` bytes at `position` into `buf` at `offset`; 0 at end of file. */
export type ReadAt = (buf: Buffer, offset: number, length: number, position: number) => Promise<number> | number;

/** How one file is to be searched and shown. */
export interface FileRequest {
  mode: OutputMode;
  /** Lines shown before and after each match (lines mode). */
  contextLines: number;
  /** Matching lines to count but not show, because an earlier page showed them. */
  skip: number;
  /** Characters this file may add (lines mode). */
  room: number;
  /** The path printed above the file's matches, and in errors. */
  displayPath: Shown;
  /** Whether text precedes this file's (a blank line then separates them). */
  blankFirst: boolean;
  /** Show the first match even past `room` (nothing was shown before it). */
  forceFirst: boolean;
}

/** Tuning and control of a scan. */
export interface ScanOptions {
  signal?: AbortSignal;
  /** Called after each chunk with the bytes read so far. */
  onProgress?: (bytesDone: number) => void;
  /** @default 262144 */
  chunkSize?: number;
  /** A line longer than this is matched piece by piece (pieces overlap by at least the literal's length). @default 16777216 */
  maxLineBytes?: number;
  /** The whole file, already read, when shorter than BINARY_PROBE_BYTES: scanned in place, `read` unused. */
  whole?: Buffer;
}

/** What one file's scan found. */
export interface FileScan {
  binary: boolean;
  matchingLines: number;
  /** Matching lines consumed by `skip`. */
  skipped: number;
  /** Match lines shown. */
  shown: number;
  /** True when a match or context line did not fit in `room`. */
  exhausted: boolean;
  text: string;
  bytes: number;
}

/** Bytes examined for NUL to call a file binary. */
export const BINARY_PROBE_BYTES = 8192;
const LF = 10;
const OVERLAP = 1024;

/** True for the first bytes of a binary file: a NUL, or a UTF-16 byte order mark. */
export function looksBinary(head: Buffer): boolean {
  const probe = head.subarray(0, BINARY_PROBE_BYTES);
  if (probe.length >= 2 && ((probe[0] === 0xff && probe[1] === 0xfe) || (probe[0] === 0xfe && probe[1] === 0xff))) return true;
  return probe.includes(0);
}

function countLF(buf: Buffer, from: number, to: number): number {
  let n = 0;
  for (let i = buf.indexOf(LF, from); i >= 0 && i < to; i = buf.indexOf(LF, i + 1)) n++;
  return n;
}

function contextText(r: Buffer, ls: number, le: number, finder: LineFinder): string {
  const te = finder.textEnd(ls, le);
  // Enough bytes for more than MAX_LINE_CHARS characters, so clipping still marks the cut.
  return clipLine(r.toString("utf8", ls, Math.min(te, ls + 4 * MAX_LINE_CHARS + 8)), 0);
}

/**
 * Searches one file read through `read`.
 * @throws the signal's reason when aborted, or what `read` throws
 */
export async function scanFile(read: ReadAt, query: Query, req: FileRequest, opts: ScanOptions = {}): Promise<FileScan> {
  const chunk = Math.max(opts.chunkSize ?? 256 * 1024, 16);
  const maxLine = Math.max(opts.maxLineBytes ?? 16 * 1024 * 1024, chunk);
  const ctx = req.mode === "lines" ? req.contextLines : 0;
  const out = req.mode === "lines" ? new LinesOutput(req.displayPath, req.room, req.blankFirst, req.forceFirst) : undefined;
  const finder = new LineFinder(query);
  const res: FileScan = { binary: false, matchingLines: 0, skipped: 0, shown: 0, exhausted: false, text: "", bytes: 0 };
  let buf: Buffer;
  let filled = 0;
  let eof = false;
  let skip = req.skip;
  let lineNo = 1;
  let midLine = false;
  let prevMatched = false;
  let afterLeft = 0;
  let lastSkipped = 0;
  let tail: ContextEntry[] = [];
  const given = opts.whole !== undefined && opts.whole.length < BINARY_PROBE_BYTES ? opts.whole : undefined;
  const head = given ?? Buffer.allocUnsafe(BINARY_PROBE_BYTES);
  let headBytes = given?.length ?? 0;
  for (let n = -1; given === undefined && n !== 0 && headBytes < head.length; headBytes += n) {
    n = await read(head, headBytes, head.length - headBytes, headBytes);
  }
  if (looksBinary(head.subarray(0, headBytes))) return { ...res, binary: true };
  // Reuse the probe rather than read it again: most files are smaller than it, and then it is
  // the whole file, so no chunk buffer is allocated (a fresh 256 KiB per file cost a fifth of a
  // tree search in garbage collection).
  if (headBytes < BINARY_PROBE_BYTES && headBytes <= chunk) {
    buf = head.subarray(0, headBytes);
    filled = headBytes;
    eof = true;
  } else {
    buf = Buffer.allocUnsafe(chunk);
    filled = Math.min(headBytes, buf.length);
    head.copy(buf, 0, 0, filled);
    eof = headBytes < BINARY_PROBE_BYTES && filled === headBytes;
  }
  res.bytes = filled;

  while (!eof || filled > 0) {
    while (filled < buf.length && !eof) {
      const n = await read(buf, filled, buf.length - filled, res.bytes);
      if (n === 0) eof = true;
      filled += n;
      res.bytes += n;
    }
    opts.signal?.throwIfAborted();
    opts.onProgress?.(res.bytes);
    if (filled === 0) break;
    let end = filled;
    let forced = false;
    if (!eof) {
      const lastNl = buf.lastIndexOf(LF, filled - 1);
      if (lastNl >= 0) end = lastNl + 1;
      else if (buf.length < maxLine) {
        const bigger = Buffer.allocUnsafe(Math.min(buf.length * 2, maxLine));
        buf.copy(bigger, 0, 0, filled);
        buf = bigger;
        continue;
      } else {
        forced = true;
        // Cut before a lead byte so both pieces decode as the whole line would.
        end = filled - 4;
        while (end > 0 && ((buf[end] ?? 0) & 0xc0) === 0x80) end--;
        if (end <= 0) end = filled;
      }
    }
    const r = buf.subarray(0, end);
    finder.reset(r);
    let pos = 0;
    let lastEnd = -1;
    const active = (): boolean => out !== undefined && !out.exhausted;
    const isRepeat = (ls: number): boolean => ls === 0 && midLine && prevMatched;

    while (active()) {
      const ls = finder.next(pos);
      const limit = ls < 0 ? end : ls;
      while (afterLeft > 0 && pos < limit && out !== undefined) {
        const le = r.indexOf(LF, pos);
        const lineEnd = le < 0 ? end : le;
        if (!out.context(lineNo, contextText(r, pos, lineEnd, finder))) break;
        afterLeft--;
        if (le < 0) {
          pos = end;
          break;
        }
        pos = le + 1;
        lineNo++;
      }
      if (ls < 0 || !active() || out === undefined) break;
      lineNo += countLF(r, pos, ls);
      pos = ls;
      if (!isRepeat(ls)) {
        res.matchingLines++;
        if (skip > 0) {
          skip--;
          res.skipped++;
          lastSkipped = lineNo;
        } else {
          const firstWanted = Math.max(lineNo - ctx, out.lastLine + 1, lastSkipped + 1, 1);
          const before = beforeContext(r, ls, lineNo, firstWanted, tail, finder);
          if (!out.match(lineNo, clipLine(finder.lineText(), finder.occurrence()), before)) {
            lastEnd = finder.end;
            pos = finder.end + 1;
            break;
          }
          afterLeft = ctx;
        }
      }
      lastEnd = finder.end;
      if (finder.end >= end) {
        pos = end;
        break;
      }
      pos = finder.end + 1;
      lineNo++;
    }
    if (active()) {
      lineNo += countLF(r, pos, end);
      if (ctx > 0) tail = forced ? [] : beforeContext(r, end, lineNo, lineNo - ctx, tail, finder);
    } else {
      for (let ls = finder.next(pos); ls >= 0; ls = finder.next(finder.end + 1)) {
        if (!isRepeat(ls)) res.matchingLines++;
        lastEnd = finder.end;
        if (finder.end >= end) break;
      }
    }
    prevMatched = forced && lastEnd === end;
    midLine = forced;
    const keep = forced ? Math.min(Math.floor(end / 2), Math.max(OVERLAP, query.bytes.length)) : 0;
    let from = end - keep;
    while (from < end && ((buf[from] ?? 0) & 0xc0) === 0x80) from++;
    buf.copyWithin(0, from, filled);
    filled -= from;
    if (buf.length > chunk && filled <= chunk) {
      const smaller = Buffer.allocUnsafe(chunk);
      buf.copy(smaller, 0, 0, filled);
      buf = smaller;
    }
  }
  if (out !== undefined) {
    res.text = out.text();
    res.shown = out.shown;
    res.exhausted = out.exhausted;
  }
  return res;
}

// Up to the lines `firstWanted`..`lineNo - 1` ending just before byte `ls`,
// taken from the region and, for lines before it, from the previous region's tail.
function beforeContext(r: Buffer, ls: number, lineNo: number, firstWanted: number, tail: readonly ContextEntry[], finder: LineFinder): ContextEntry[] {
  const lines: ContextEntry[] = [];
  let p = ls;
  let n = lineNo;
  while (n > firstWanted && p > 0) {
    const nl = p - 1;
    const start = nl === 0 ? 0 : r.lastIndexOf(LF, nl - 1) + 1;
    n--;
    lines.push({ lineNo: n, text: contextText(r, start, nl, finder) });
    p = start;
  }
  lines.reverse();
  if (n > firstWanted) return [...tail.filter((c) => c.lineNo >= firstWanted && c.lineNo < n), ...lines];
  return lines;
}
