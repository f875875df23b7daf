/**
 * Finds the next matching line inside one region of a file's bytes (whole
 * lines, or the piece of an over-long line), working on bytes or a Latin-1
 * view and decoding only candidate lines (SPEC §10: a match is a line, split
 * on `\n`, whose text without a final `\r` contains an occurrence). This is
 * the face the scan uses: it picks the query's strategy (literal-bytes.ts,
 * line-prefilter.ts, line-windows.ts), handles pieces and counts occurrences.
 */
import { LineWindows } from "./line-windows.js";
import { LiteralBytes } from "./literal-bytes.js";
import { Prefilter } from "./line-prefilter.js";
import type { Query } from "./query.js";
import { RegionLines } from "./region-lines.js";

/**
 * Where a region stands in a line longer than the piece size: its first `cont` bytes were searched
 * by the piece before (as match starts), and match starts from `ownEnd` on are the next piece's.
 */
export interface Piece {
  cont: number;
  ownEnd: number;
}

/** Finds matching lines in a region; one instance per file scan. */
export class LineFinder {
  private readonly lines: RegionLines;
  private readonly literal: LiteralBytes;
  private readonly windows: LineWindows;
  private readonly prefilter: Prefilter;
  // The region's first line is (part of) a line longer than the piece size (regex only).
  private piece: Piece | undefined;

  /** `viewBytes`: the longest stretch of lines viewed as one string (line-windows.ts; tests make it small). */
  constructor(
    private readonly query: Query,
    viewBytes?: number,
  ) {
    this.lines = new RegionLines(query);
    this.literal = new LiteralBytes(query, this.lines);
    this.windows = new LineWindows(query, this.lines, viewBytes);
    this.prefilter = new Prefilter(query, this.lines, this.literal, this.windows);
  }

  /** The line end (index of its `\n`, or the region's length) of the line last returned. */
  get end(): number {
    return this.lines.end;
  }

  /**
   * Starts a new region; `buf` holds whole lines, its last one possibly unterminated. With `piece`,
   * a regex's first line continues a line longer than the piece size, or is a piece of one.
   */
  reset(buf: Buffer, piece?: Piece): void {
    this.lines.buf = buf;
    this.piece = this.query.mayBacktrack && piece !== undefined && (piece.cont > 0 || piece.ownEnd < buf.length) ? piece : undefined;
    this.literal.reset();
    this.windows.reset();
    this.prefilter.reset();
  }

  /** The start of the first matching line at or after line start `pos`, or -1. */
  next(pos: number): number {
    if (pos === 0 && this.piece !== undefined) {
      if (this.nextInPiece()) return 0;
      const le = this.lines.lineEnd(0);
      if (le >= this.lines.buf.length) return -1;
      pos = le + 1;
    }
    switch (this.query.strategy) {
      case "bytes":
        return this.literal.next(pos, false);
      case "foldedBytes":
        return this.literal.next(pos, true);
      case "prefilter":
        return this.prefilter.nextLiteral(pos, false);
      case "foldedPrefilter":
        return this.prefilter.nextLiteral(pos, true);
      case "segment":
        return this.prefilter.nextSegment(pos);
      case "perLine":
        return this.lines.nextByLine(pos);
      default:
        return this.windows.next(pos);
    }
  }

  /** End of a line's text: before a `\r` that precedes its `\n`. */
  textEnd(ls: number, le: number): number {
    return this.lines.textEnd(ls, le);
  }

  /** The decoded text of the line last returned by `next`. */
  lineText(): string {
    return this.lines.lineText();
  }

  /** The character index of the first occurrence in `lineText()`. */
  occurrence(): number {
    return this.lines.occurrence();
  }

  /** After `occurrences`: the byte just past the last occurrence counted (or its `from` when none). */
  lastOccEnd = 0;

  /**
   * The occurrences in the line last returned by `next`: non-overlapping, leftmost first (as
   * `grep -o` counts them), only those starting at byte `from` or later (a piece of an over-long
   * line resumes where the one before it stopped). Also sets `lastOccEnd`, the byte after the last.
   */
  occurrences(from = this.lines.start): number {
    const lines = this.lines;
    const ls = lines.start;
    const te = lines.textEnd(ls, lines.end);
    this.lastOccEnd = from;
    const strategy = this.query.strategy;
    if (strategy === "bytes" || strategy === "foldedBytes") {
      // Within the line's text only: a search of the whole region would run on to the next matching line, twice.
      const n = this.literal.count(Math.max(from, ls), te, strategy === "foldedBytes");
      if (n > 0) this.lastOccEnd = this.literal.lastEnd;
      return n;
    }
    const text = lines.lineText();
    const buf = lines.buf;
    // In a piece of an over-long line, occurrences start where the one before left off and end where the next piece begins.
    const piece = ls === 0 ? this.piece : undefined;
    const start = Math.max(from, piece?.cont ?? 0);
    // Byte positions are only worked out when a resume point asks for them.
    const skipChars = start > ls ? buf.toString("utf8", ls, start).length : 0;
    const ownEnd = piece !== undefined && piece.ownEnd < lines.end ? piece.ownEnd : -1;
    const limitChar = ownEnd < 0 ? Number.MAX_SAFE_INTEGER : buf.toString("utf8", 0, ownEnd).length;
    const re = this.query.lineReAll;
    re.lastIndex = skipChars;
    let n = 0;
    let endChar = -1;
    for (let m = re.exec(text); m !== null && m.index < limitChar; m = re.exec(text)) {
      n++;
      endChar = m.index + m[0].length;
      if (m[0].length === 0) re.lastIndex = endChar + 1;
    }
    if (endChar >= 0) this.lastOccEnd = ls + Buffer.byteLength(text.slice(0, endChar));
    // The next piece resumes where this one's own starts end, or after the last occurrence counted.
    this.lastOccEnd = Math.max(this.lastOccEnd, ownEnd);
    return n;
  }

  /**
   * Whether the region's first line, a line longer than the piece size or its continuation, holds
   * a match that starts in this piece's own stretch: after the bytes the piece before already
   * searched (`cont`), before those the next piece searches (`ownEnd`). The text before is kept, so
   * `^`, `\b` and lookbehinds see the line as it is: `^` matches only in the line's first piece,
   * and `$` only at its real end (a match reaching a cut is longer than the overlap: SPEC §24).
   */
  private nextInPiece(): boolean {
    const { cont, ownEnd } = this.piece as Piece;
    const lines = this.lines;
    const le = lines.lineEnd(0);
    const text = lines.buf.toString("utf8", 0, lines.textEnd(0, le));
    const re = this.query.lineReAll;
    re.lastIndex = cont > 0 ? lines.buf.toString("utf8", 0, cont).length : 0;
    const m = re.exec(text);
    if (m === null || (ownEnd < le && m.index >= lines.buf.toString("utf8", 0, ownEnd).length)) return false;
    lines.found(0, le, text, m.index, -1);
    return true;
  }
}
