/**
 * Finds the next matching line inside one region of a file's bytes (whole
 * lines, or the piece of an over-long line), working on bytes or a Latin-1
 * view and decoding only candidate lines (SPEC §10: a match is a line, split
 * on `\n`, whose text without a final `\r` contains an occurrence).
 */
import type { Query } from "./query.js";

const LF = 10;
const CR = 13;
const WIDE_BYTE = /[\x80-\xff]/g;

/** Finds matching lines in a region; one instance per file scan. */
export class LineFinder {
  private buf: Buffer = Buffer.alloc(0);
  private view: string | undefined;
  private folded: Buffer | undefined;
  private foldStore = Buffer.alloc(0);
  private candLs = -1;
  private candLe = -1;
  private candEnd = -1;
  private wideLs = -1;
  /** The line end (index of its `\n`, or the region's length) of the line last returned. */
  end = 0;
  private text: string | undefined;
  private occChar = -1;
  private occByte = -1;
  private lineStart = 0;

  constructor(private readonly query: Query) {}

  /** Starts a new region; `buf` holds whole lines, its last one possibly unterminated. */
  reset(buf: Buffer): void {
    this.buf = buf;
    this.view = undefined;
    this.folded = undefined;
    this.candLs = -1;
    this.wideLs = -1;
  }

  /** The start of the first matching line at or after line start `pos`, or -1. */
  next(pos: number): number {
    switch (this.query.strategy) {
      case "never":
        return -1;
      case "bytes":
        return this.nextBytes(pos, this.buf);
      case "foldedBytes":
        return this.nextBytes(pos, (this.folded ??= this.fold()));
      case "perLine":
        return this.nextPerLine(pos);
      default:
        return this.nextViewed(pos);
    }
  }

  /** End of a line's text: before a `\r` that precedes its `\n`. */
  textEnd(ls: number, le: number): number {
    return le < this.buf.length && le > ls && this.buf[le - 1] === CR ? le - 1 : le;
  }

  /** The decoded text of the line last returned by `next`. */
  lineText(): string {
    this.text ??= this.buf.toString("utf8", this.lineStart, this.textEnd(this.lineStart, this.end));
    return this.text;
  }

  /** The character index of the first occurrence in `lineText()`. */
  occurrence(): number {
    if (this.occChar < 0) {
      const text = this.lineText();
      this.occChar =
        this.occByte >= 0 ? this.buf.toString("utf8", this.lineStart, this.occByte).length : Math.max(0, this.query.lineRe.exec(text)?.index ?? 0);
    }
    return this.occChar;
  }

  private found(ls: number, le: number, text: string | undefined, occChar: number, occByte: number): number {
    this.lineStart = ls;
    this.end = le;
    this.text = text;
    this.occChar = occChar;
    this.occByte = occByte;
    return ls;
  }

  private lineEnd(from: number): number {
    const le = this.buf.indexOf(LF, from);
    return le < 0 ? this.buf.length : le;
  }

  // The region with A-Z lowered, four bytes at a time where aligned: a byte
  // gets 0x20 when it is at least 'A', at most 'Z' and below 0x80.
  private fold(): Buffer {
    const src = this.buf;
    if (this.foldStore.length < src.length) this.foldStore = Buffer.alloc(Math.max(src.length, 2 * this.foldStore.length));
    const out = this.foldStore.subarray(0, src.length);
    let i = 0;
    if ((src.byteOffset & 3) === 0) {
      const words = src.length >>> 2;
      const s32 = new Uint32Array(src.buffer, src.byteOffset, words);
      const o32 = new Uint32Array(out.buffer, out.byteOffset, words);
      for (let k = 0; k < words; k++) {
        const v = s32[k] as number;
        const h = v & 0x7f7f7f7f;
        const upper = ((h + 0x3f3f3f3f) | 0) & ~((h + 0x25252525) | 0) & ~v & 0x80808080;
        o32[k] = v | (upper >>> 2);
      }
      i = words * 4;
    }
    for (; i < src.length; i++) {
      const b = src[i] ?? 0;
      out[i] = b >= 0x41 && b <= 0x5a ? b | 0x20 : b;
    }
    return out;
  }

  private nextBytes(pos: number, hay: Buffer): number {
    const q = this.query.bytes;
    let i = pos;
    for (;;) {
      i = hay.indexOf(q, i);
      if (i < 0) return -1;
      const le = this.lineEnd(i);
      const ls = i === 0 ? 0 : this.buf.lastIndexOf(LF, i - 1) + 1;
      // An occurrence may run into the hidden `\r`; look further in the same line.
      if (i + q.length <= this.textEnd(ls, le)) return this.found(ls, le, undefined, -1, i);
      i++;
    }
  }

  private verify(ls: number, le: number): boolean {
    const text = this.buf.toString("utf8", ls, this.textEnd(ls, le));
    const m = this.query.lineRe.exec(text);
    if (m === null) return false;
    this.found(ls, le, text, m.index, -1);
    return true;
  }

  private nextPerLine(pos: number): number {
    for (let ls = pos; ls < this.buf.length; ) {
      const le = this.lineEnd(ls);
      if (this.verify(ls, le)) return ls;
      ls = le + 1;
    }
    return -1;
  }

  private nextViewed(pos: number): number {
    const view = (this.view ??= this.buf.toString("latin1"));
    const wide = this.query.strategy === "latin1+wide";
    for (;;) {
      if (pos >= view.length) return -1;
      if (this.candLs < pos) this.candidate(view, pos);
      if (wide && this.wideLs < pos) this.wideLine(view, pos);
      const ls = wide ? Math.min(this.candLs, this.wideLs) : this.candLs;
      if (ls >= view.length) return -1;
      const le = ls === this.candLs ? this.candLe : this.lineEnd(ls);
      // A context-free hit within an ASCII line's text is a match as it stands.
      const asciiLine = !wide || this.wideLs > ls;
      if (ls === this.candLs && asciiLine && this.query.contextFree && this.candEnd <= this.textEnd(ls, le)) {
        return this.found(ls, le, undefined, -1, -1);
      }
      if (this.verify(ls, le)) return ls;
      pos = le + 1;
    }
  }

  // The line holding the chunk regex's next hit at or after `pos`; -1 past the last.
  private candidate(view: string, pos: number): void {
    const re = this.query.chunkRe;
    re.lastIndex = pos;
    const m = re.exec(view);
    if (m === null) {
      this.candLs = Number.MAX_SAFE_INTEGER;
      return;
    }
    const idx = m.index;
    this.candLs = idx === 0 ? 0 : view.lastIndexOf("\n", idx - 1) + 1;
    this.candLe = this.lineEnd(idx);
    this.candEnd = idx + m[0].length;
  }

  private wideLine(view: string, pos: number): void {
    WIDE_BYTE.lastIndex = pos;
    const m = WIDE_BYTE.exec(view);
    this.wideLs = m === null ? Number.MAX_SAFE_INTEGER : m.index === 0 ? 0 : view.lastIndexOf("\n", m.index - 1) + 1;
  }
}
