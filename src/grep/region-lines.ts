// One region's bytes split into lines (SPEC §10: on `\n`, the text without a final `\r`), the line last found, and its test.
import type { Query } from "./query.js";

const LF = 10;
const CR = 13;

/** The start of the line holding character `i` of a view or decoding of whole lines. */
export function lineStartIn(text: string, i: number): number {
  return i === 0 ? 0 : text.lastIndexOf("\n", i - 1) + 1;
}

/** A region of whole lines and the matching line last found in it; shared by the finder's parts. */
export class RegionLines {
  /** The region: whole lines, its last one possibly unterminated. */
  buf: Buffer = Buffer.alloc(0);
  /** The start of the line last found. */
  start = 0;
  /** The line end (index of its `\n`, or the region's length) of the line last found. */
  end = 0;
  private text: string | undefined;
  private occChar = -1;
  /** The byte of the found line's first occurrence, when the search that found it knew it (else -1). */
  occByte = -1;

  constructor(private readonly query: Query) {}

  /** The index of the `\n` ending the line holding byte `from`, or the region's length. */
  lineEnd(from: number): number {
    const le = this.buf.indexOf(LF, from);
    return le < 0 ? this.buf.length : le;
  }

  /** The start of the line holding byte `i`. */
  lineStart(i: number): number {
    return i === 0 ? 0 : this.buf.lastIndexOf(LF, i - 1) + 1;
  }

  /** End of a line's text: before a `\r` that precedes its `\n`. */
  textEnd(ls: number, le: number): number {
    return le < this.buf.length && le > ls && this.buf[le - 1] === CR ? le - 1 : le;
  }

  /** Records the line `ls`..`le` as found (its text and first occurrence when known, else undefined / -1); returns `ls`. */
  found(ls: number, le: number, text: string | undefined, occChar: number, occByte: number): number {
    this.start = ls;
    this.end = le;
    this.text = text;
    this.occChar = occChar;
    this.occByte = occByte;
    return ls;
  }

  /** Whether the expression matches the line `ls`..`le`, recording it as found when it does. */
  verify(ls: number, le: number): boolean {
    const text = this.buf.toString("utf8", ls, this.textEnd(ls, le));
    const m = this.query.lineRe.exec(text);
    if (m === null) return false;
    this.found(ls, le, text, m.index, -1);
    return true;
  }

  /** The start of the first line at or after line start `pos` that the expression matches, each line tested alone; or -1. */
  nextByLine(pos: number): number {
    for (let ls = pos; ls < this.buf.length; ) {
      const le = this.lineEnd(ls);
      if (this.verify(ls, le)) return ls;
      ls = le + 1;
    }
    return -1;
  }

  /** The decoded text of the line last found. */
  lineText(): string {
    this.text ??= this.buf.toString("utf8", this.start, this.textEnd(this.start, this.end));
    return this.text;
  }

  /** The character index of the first occurrence in `lineText()`. */
  occurrence(): number {
    if (this.occChar < 0) {
      const text = this.lineText();
      this.occChar =
        this.occByte >= 0 ? this.buf.toString("utf8", this.start, this.occByte).length : Math.max(0, this.query.lineRe.exec(text)?.index ?? 0);
    }
    return this.occChar;
  }
}
