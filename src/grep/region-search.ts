/**
 * The matching half of one file's scan (SPEC §10): regions of whole lines (or
 * pieces of an over-long line) come in file order; each matching line is
 * counted, and in lines mode shown with its numbered context until the file's
 * room is used up, after which matching lines are only counted. What carries
 * from one region to the next lives here: the line number, the matches still
 * to skip, the trailing context owed, and the last lines for leading context.
 */
import type { Shown } from "../kernel/escape.js";
import { countLineFeeds } from "../reading/utf8-count.js";
import { clipLine, LinesOutput, MAX_LINE_CHARS, type ContextEntry } from "./format.js";
import { LineFinder } from "./line-finder.js";
import type { Query } from "./query.js";

/** What the tool shows: matching lines, matching files with counts, or totals only. */
export type OutputMode = "lines" | "files" | "count";

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
  /** Count the occurrences too (count and files modes). @default false */
  occurrences?: boolean;
  /**
   * The file's matching lines as a count of it just found (lines mode, a file of a walk): the scan may then end
   * once the room is used up, or once that many were met and their context shown, its totals being the count's.
   */
  knownLines?: number;
}

/** The matches one file's scan found, and what of them it shows. */
export interface FileMatches {
  matchingLines: number;
  /** Occurrences in the matching lines, when the request asked for them (else 0). */
  occurrences: number;
  /** Matching lines consumed by `skip`. */
  skipped: number;
  /** Match lines shown. */
  shown: number;
  /** True when a match or context line did not fit in `room`. */
  exhausted: boolean;
  text: string;
}

const LF = 10;

// Past this many bytes between two matches the SIMD counter (a copy, then 16 bytes a step) counts their line
// breaks, for their numbers: a Buffer#indexOf per line break made lines mode three times as slow as a count
// over a big file with its matches far apart (a 6 MB file, 51 matches: 8.1 ms against a count's 2.7).
const SIMD_COUNT_MIN = 1024;

function countLF(buf: Buffer, from: number, to: number): number {
  if (to - from >= SIMD_COUNT_MIN) return countLineFeeds(buf.subarray(from, to));
  let n = 0;
  for (let i = buf.indexOf(LF, from); i >= 0 && i < to; i = buf.indexOf(LF, i + 1)) n++;
  return n;
}

function contextText(r: Buffer, ls: number, le: number, finder: LineFinder): string {
  const te = finder.textEnd(ls, le);
  // Enough bytes for more than MAX_LINE_CHARS characters, so clipping still marks the cut.
  return clipLine(r.toString("utf8", ls, Math.min(te, ls + 4 * MAX_LINE_CHARS + 8)), 0);
}

// Up to the lines `firstWanted`..`lineNo - 1` ending just before byte `ls`, taken from the region and, for lines
// before it, from the previous region's tail. `midLine`: the region starts inside an over-long line, whose start
// (and number) only the tail holds: the piece at the region's start is not its text.
function beforeContext(
  r: Buffer,
  ls: number,
  lineNo: number,
  firstWanted: number,
  tail: readonly ContextEntry[],
  finder: LineFinder,
  midLine: boolean,
): ContextEntry[] {
  const lines: ContextEntry[] = [];
  let p = ls;
  let n = lineNo;
  while (n > firstWanted && p > 0) {
    const nl = p - 1;
    const start = nl === 0 ? 0 : r.lastIndexOf(LF, nl - 1) + 1;
    if (start === 0 && midLine) break;
    n--;
    lines.push({ lineNo: n, text: contextText(r, start, nl, finder) });
    p = start;
  }
  lines.reverse();
  if (n > firstWanted) return [...tail.filter((c) => c.lineNo >= firstWanted && c.lineNo < n), ...lines];
  return lines;
}

/** Where a region's search stopped: the line start reached, and the end of the last matching line found. */
interface Stop {
  pos: number;
  lastEnd: number;
}

/** The matches of one file, region after region; `result` once the last region was searched. */
export class RegionSearch {
  private readonly finder: LineFinder;
  private readonly out: LinesOutput | undefined;
  private readonly ctx: number;
  private readonly withOccurrences: boolean;
  private matchingLines = 0;
  private occurrences = 0;
  private skipped = 0;
  private skip: number;
  private lineNo = 1;
  // The previous region ended inside an over-long line (`midLine`), already counted as matching in
  // one of its pieces (`prevMatched`); its occurrences resume at byte `occFrom` of the next piece.
  private midLine = false;
  private prevMatched = false;
  private occFrom = 0;
  // Bytes at the start of the next region that the forced one just searched kept (its overlap).
  private kept = 0;
  private afterLeft = 0;
  // A context line owed after a match that goes on past its region: shown once it ends without matching, dropped when
  // a later piece of it matches (it is then the match); `afterLeft` still counts it.
  private pending: ContextEntry | undefined;
  private lastSkipped = 0;
  private tail: ContextEntry[] = [];
  private readonly knownLines: number | undefined;

  /** `viewBytes`: see LineFinder. */
  constructor(query: Query, req: FileRequest, viewBytes?: number) {
    this.finder = new LineFinder(query, viewBytes);
    this.ctx = req.mode === "lines" ? req.contextLines : 0;
    this.out = req.mode === "lines" ? new LinesOutput(req.displayPath, req.room, req.blankFirst, req.forceFirst) : undefined;
    this.skip = req.skip;
    this.withOccurrences = req.occurrences === true;
    this.knownLines = req.mode === "lines" ? req.knownLines : undefined;
  }

  /**
   * True once the rest of the file can change nothing this request asks for: the room is used up, or every matching
   * line a count of the file found was met and the context after it shown (only with `knownLines`).
   */
  get done(): boolean {
    const known = this.knownLines;
    return known !== undefined && (!this.showing() || (this.matchingLines >= known && this.afterLeft === 0));
  }

  /**
   * Searches region `r`; `forced` when it ends inside an over-long line, not at a line break, and
   * the next region then starts at byte `next` of it (the overlap kept), where the match starts up
   * to `own` are still this region's (a regex's; the rest of the overlap is the next one's).
   */
  search(r: Buffer, forced: boolean, next = r.length, own = r.length): void {
    const end = r.length;
    this.finder.reset(r, { cont: this.midLine ? this.kept : 0, ownEnd: forced ? own : end });
    this.kept = forced ? own - next : 0;
    let { pos, lastEnd } = this.showing() ? this.show(r, forced) : { pos: 0, lastEnd: -1 };
    if (this.showing()) {
      this.lineNo += countLF(r, pos, end);
      if (this.ctx > 0) this.tail = this.tailOf(r, forced);
    } else {
      lastEnd = this.countFrom(pos, end, lastEnd);
    }
    // A forced region holds no line break: all of it is the over-long line, matched once for every piece.
    this.prevMatched = forced && (lastEnd === end || (this.midLine && this.prevMatched));
    this.midLine = forced;
    if (!forced) this.occFrom = 0;
  }

  // The last lines of region `r` (just searched), for the leading context of a match in the regions after it. A region
  // ending inside an over-long line: the lines up to that line's start, and its start (its first piece); the pieces after
  // it keep them.
  private tailOf(r: Buffer, forced: boolean): ContextEntry[] {
    const { finder, lineNo, ctx } = this;
    if (!forced) return beforeContext(r, r.length, lineNo, lineNo - ctx, this.tail, finder, this.midLine);
    if (this.midLine) return this.tail;
    const start = r.lastIndexOf(LF, r.length - 1) + 1;
    const before = beforeContext(r, start, lineNo, lineNo - ctx, this.tail, finder, false);
    return [...before, { lineNo, text: contextText(r, start, r.length, finder) }];
  }

  /** The next region starts `by` bytes into the forced one just searched (the overlap kept). */
  shift(by: number): void {
    this.occFrom = Math.max(0, this.occFrom - by);
  }

  /** What the regions searched so far hold. */
  result(): FileMatches {
    const out = this.out;
    return {
      matchingLines: this.matchingLines,
      occurrences: this.occurrences,
      skipped: this.skipped,
      shown: out?.shown ?? 0,
      exhausted: out?.exhausted ?? false,
      text: out?.text() ?? "",
    };
  }

  private showing(): boolean {
    return this.out !== undefined && !this.out.exhausted;
  }

  // The start of an over-long line's next piece that the previous piece already counted as matching.
  private isRepeat(ls: number): boolean {
    return ls === 0 && this.midLine && this.prevMatched;
  }

  // Shows the region's matches with their context until the room is used up; `forced`: the region ends inside a line.
  private show(r: Buffer, forced: boolean): Stop {
    const { finder } = this;
    const out = this.out as LinesOutput;
    const end = r.length;
    let pos = 0;
    let lastEnd = -1;
    while (!out.exhausted) {
      const ls = finder.next(pos);
      pos = this.trailingContext(r, pos, ls < 0 ? end : ls, forced);
      if (ls < 0 || out.exhausted) break;
      this.lineNo += countLF(r, pos, ls);
      pos = ls;
      if (!this.isRepeat(ls) && !this.showMatch(r, ls)) return { pos: finder.end + 1, lastEnd: finder.end };
      lastEnd = finder.end;
      if (finder.end >= end) return { pos: end, lastEnd };
      pos = finder.end + 1;
      this.lineNo++;
    }
    return { pos, lastEnd };
  }

  // Shows the context lines owed after the last match, from line start `pos` up to `limit`; returns where they end.
  private trailingContext(r: Buffer, pos: number, limit: number, forced: boolean): number {
    const out = this.out as LinesOutput;
    if (this.afterLeft > 0 && pos === 0 && pos < limit && this.midLine) {
      // The rest of an over-long line begun in a region before: the match shown there, or a context line pending,
      // shown once it ends (here, or at the file's end) without a match in its pieces.
      const le = r.indexOf(LF);
      if (le < 0 && forced) return r.length;
      if (this.pending !== undefined) {
        if (!out.context(this.pending.lineNo, this.pending.text)) return pos;
        this.pending = undefined;
        this.afterLeft--;
      }
      if (le < 0) return r.length;
      pos = le + 1;
      this.lineNo++;
    }
    while (this.afterLeft > 0 && pos < limit) {
      const le = r.indexOf(LF, pos);
      const text = contextText(r, pos, le < 0 ? r.length : le, this.finder);
      if (le < 0 && forced) {
        this.pending = { lineNo: this.lineNo, text };
        return r.length;
      }
      if (!out.context(this.lineNo, text)) break;
      this.afterLeft--;
      if (le < 0) return r.length;
      pos = le + 1;
      this.lineNo++;
    }
    return pos;
  }

  // Counts the matching line at `ls` and shows it (or skips it for an earlier page); false when it did not fit.
  private showMatch(r: Buffer, ls: number): boolean {
    const { finder } = this;
    const out = this.out as LinesOutput;
    this.matchingLines++;
    if (this.skip > 0) {
      this.skip--;
      this.skipped++;
      this.lastSkipped = this.lineNo;
      return true;
    }
    // A line pending as context that matches in a later piece is shown as the match.
    this.pending = undefined;
    const firstWanted = Math.max(this.lineNo - this.ctx, out.lastLine + 1, this.lastSkipped + 1, 1);
    const before = beforeContext(r, ls, this.lineNo, firstWanted, this.tail, finder, this.midLine);
    // A match first found in a later piece of an over-long line: its text is that piece's, not the line's start.
    const text = clipLine(finder.lineText(), finder.occurrence(), MAX_LINE_CHARS, ls === 0 && this.midLine);
    if (!out.match(this.lineNo, text, before)) return false;
    this.afterLeft = this.ctx;
    return true;
  }

  // Counts the matching lines from line start `pos` to the region's end; returns the end of the last one.
  private countFrom(pos: number, end: number, lastEnd: number): number {
    const { finder } = this;
    for (let ls = finder.next(pos); ls >= 0; ls = finder.next(finder.end + 1)) {
      if (!this.isRepeat(ls)) this.matchingLines++;
      if (this.withOccurrences) {
        const continued = ls === 0 && this.midLine;
        this.occurrences += finder.occurrences(continued ? this.occFrom : ls);
        if (finder.end >= end) this.occFrom = finder.lastOccEnd;
      }
      lastEnd = finder.end;
      if (finder.end >= end) break;
    }
    return lastEnd;
  }
}
