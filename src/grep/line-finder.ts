/**
 * Finds the next matching line inside one region of a file's bytes (whole
 * lines, or the piece of an over-long line), working on bytes or a Latin-1
 * view and decoding only candidate lines (SPEC §10: a match is a line, split
 * on `\n`, whose text without a final `\r` contains an occurrence).
 */
import { isUtf8 } from "node:buffer";
import type { Query } from "./query.js";

const LF = 10;
const CR = 13;
const WIDE_BYTE = /[\x80-\xff]/g;

/**
 * A region where the required literal leads to a line test more often than once in this many bytes
 * goes on without it: a line's test (decoding it, running the expression) cost about what running
 * the expression over 256 bytes of text costs.
 */
const DENSE_TESTED_BYTES = 256;

/** Bytes of a region looked at to judge how many of its lines hold bytes past ASCII. */
const SAMPLE_BYTES = 16 * 1024;

/**
 * The longest stretch of whole lines turned into one string at a time (a Latin-1 view or a decoded
 * block). A string past V8's 128 KiB object limit is allocated in fresh pages of its own, one per
 * region: viewing a 600 MiB file in 256 KiB strings cost 0.8 ns a byte, mostly page faults, and in
 * 64 KiB strings, which the young generation recycles, 0.15 ns.
 */
const VIEW_BYTES = 64 * 1024;

/**
 * Whether at least a quarter of the region's lines (judged on its start) hold a byte past ASCII.
 * Decoding a region whole cost about twice its Latin-1 view, and testing a wide line alone about
 * 1.6 times a block's share of it (a 600 MiB mostly-ASCII file and a 60 MiB all-accented one):
 * from a quarter of the lines on, block mode is the faster.
 */
function mostlyWide(buf: Buffer): boolean {
  const sample = buf.toString("latin1", 0, Math.min(buf.length, SAMPLE_BYTES));
  let lines = 1;
  for (let i = sample.indexOf("\n"); i >= 0 && i < sample.length - 1; i = sample.indexOf("\n", i + 1)) lines++;
  let wide = 0;
  WIDE_BYTE.lastIndex = 0;
  for (let m = WIDE_BYTE.exec(sample); m !== null; m = WIDE_BYTE.exec(sample)) {
    wide++;
    const nl = sample.indexOf("\n", m.index);
    if (nl < 0) break;
    WIDE_BYTE.lastIndex = nl + 1;
  }
  return wide * 4 >= lines && wide > 0;
}

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
  // The query's rarest byte turned out common in this region (see indexOfQuery).
  private dense = false;
  // Lines the required literal led to a test of in this region, and whether it turned out too common to be worth it.
  private tested = 0;
  private unfiltered = false;
  // The region's first line is (part of) a line longer than the piece size (regex only).
  private piece: Piece | undefined;
  // The window of whole lines `winStart`..`winEnd` (bytes of the region) that `view` or `decoded`
  // holds; the candidates above are bytes of the region, found in it.
  private winStart = 0;
  private winEnd = 0;
  // Block mode (see nextDecoded): whether the region qualifies (undefined until asked), the window
  // decoded ("" when it is not valid UTF-8), and one line start known in both units (`mapByte` ↔ `mapChar`).
  private block: boolean | undefined;
  private decoded = "";
  // The window start `decoded` was made for (-1: not yet for this window).
  private decodedAt = -1;
  private mapByte = 0;
  private mapChar = 0;

  /** `viewBytes`: the longest stretch of lines viewed as one string (VIEW_BYTES; tests make it small). */
  constructor(
    private readonly query: Query,
    private readonly viewBytes = VIEW_BYTES,
  ) {}

  /**
   * Starts a new region; `buf` holds whole lines, its last one possibly unterminated. With `piece`,
   * a regex's first line continues a line longer than the piece size, or is a piece of one.
   */
  reset(buf: Buffer, piece?: Piece): void {
    this.buf = buf;
    this.piece = this.query.mayBacktrack && piece !== undefined && (piece.cont > 0 || piece.ownEnd < buf.length) ? piece : undefined;
    this.view = undefined;
    this.folded = undefined;
    this.candLs = -1;
    this.wideLs = -1;
    this.dense = false;
    this.tested = 0;
    this.unfiltered = false;
    this.winStart = 0;
    this.winEnd = 0;
    this.block = undefined;
    this.decoded = "";
    this.decodedAt = -1;
    this.mapByte = 0;
    this.mapChar = 0;
  }

  /** The start of the first matching line at or after line start `pos`, or -1. */
  next(pos: number): number {
    if (pos === 0 && this.piece !== undefined) {
      if (this.nextInPiece()) return 0;
      const le = this.lineEnd(0);
      if (le >= this.buf.length) return -1;
      pos = le + 1;
    }
    switch (this.query.strategy) {
      case "never":
        return -1;
      case "bytes":
        return this.nextBytes(pos, this.buf);
      case "foldedBytes":
        return this.nextBytes(pos, (this.folded ??= this.fold()));
      case "prefilter":
        return this.unfiltered ? this.nextUnfiltered(pos) : this.nextPrefiltered(pos, this.buf);
      case "foldedPrefilter":
        return this.unfiltered ? this.nextUnfiltered(pos) : this.nextPrefiltered(pos, (this.folded ??= this.fold()));
      case "segment":
        return this.unfiltered ? this.nextUnfiltered(pos) : this.nextSegmented(pos);
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

  /**
   * The occurrences in the line last returned by `next`: non-overlapping, leftmost first (as
   * `grep -o` counts them), only those starting at byte `from` or later (a piece of an over-long
   * line resumes where the one before it stopped). Also sets `lastOccEnd`, the byte after the last.
   */
  occurrences(from = this.lineStart): number {
    const ls = this.lineStart;
    const te = this.textEnd(ls, this.end);
    this.lastOccEnd = from;
    const strategy = this.query.strategy;
    if (strategy === "never") return 0;
    if (strategy === "bytes" || strategy === "foldedBytes") {
      // Within the line's text only: a search of the whole region would run on to the next matching line, twice.
      const start = Math.max(from, ls);
      const hay = (strategy === "bytes" ? this.buf : (this.folded ??= this.fold())).subarray(start, te);
      const q = this.query.bytes;
      let n = 0;
      // `next` found the line's first occurrence already; it need not be looked for again.
      const known = this.occByte >= start ? this.occByte - start : -1;
      for (let i = known >= 0 ? known : hay.indexOf(q); i >= 0; i = hay.indexOf(q, i + q.length)) {
        n++;
        this.lastOccEnd = start + i + q.length;
      }
      return n;
    }
    const text = this.lineText();
    // In a piece of an over-long line, occurrences start where the one before left off and end where the next piece begins.
    const piece = ls === 0 ? this.piece : undefined;
    const start = Math.max(from, piece?.cont ?? 0);
    // Byte positions are only worked out when a resume point asks for them.
    const skipChars = start > ls ? this.buf.toString("utf8", ls, start).length : 0;
    const ownEnd = piece !== undefined && piece.ownEnd < this.end ? piece.ownEnd : -1;
    const limitChar = ownEnd < 0 ? Number.MAX_SAFE_INTEGER : this.buf.toString("utf8", 0, ownEnd).length;
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

  /** After `occurrences`: the byte just past the last occurrence counted (or its `from` when none). */
  lastOccEnd = 0;

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

  /**
   * Whether the region's first line, a line longer than the piece size or its continuation, holds
   * a match that starts in this piece's own stretch: after the bytes the piece before already
   * searched (`cont`), before those the next piece searches (`ownEnd`). The text before is kept, so
   * `^`, `\b` and lookbehinds see the line as it is: `^` matches only in the line's first piece,
   * and `$` only at its real end (a match reaching a cut is longer than the overlap: SPEC §24).
   */
  private nextInPiece(): boolean {
    const { cont, ownEnd } = this.piece as Piece;
    const le = this.lineEnd(0);
    const text = this.buf.toString("utf8", 0, this.textEnd(0, le));
    const re = this.query.lineReAll;
    re.lastIndex = cont > 0 ? this.buf.toString("utf8", 0, cont).length : 0;
    const m = re.exec(text);
    if (m === null || (ownEnd < le && m.index >= this.buf.toString("utf8", 0, ownEnd).length)) return false;
    this.found(0, le, text, m.index, -1);
    return true;
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
      i = this.indexOfQuery(hay, q, i);
      if (i < 0) return -1;
      const le = this.lineEnd(i);
      const ls = i === 0 ? 0 : this.buf.lastIndexOf(LF, i - 1) + 1;
      // An occurrence may run into the hidden `\r`; look further in the same line.
      if (i + q.length <= this.textEnd(ls, le)) return this.found(ls, le, undefined, -1, i);
      i++;
    }
  }

  /**
   * The next occurrence of `q` in `hay` at or after `from`, or -1. Buffer#indexOf of a long needle
   * ran at about 450 MB/s here, while its search for one byte (memchr) runs at many GB/s: so the
   * needle's rarest byte is looked for and each hit compared, until hits come too densely, and then
   * the rest of the region goes to Buffer#indexOf.
   */
  private indexOfQuery(hay: Buffer, q: Buffer, from: number): number {
    if (q.length < 2 || this.dense) return hay.indexOf(q, from);
    const at = this.query.rareAt;
    const rare = q[at] as number;
    let hits = 0;
    for (let i = hay.indexOf(rare, from + at); i >= 0; i = hay.indexOf(rare, i + 1)) {
      const start = i - at;
      const last = start + q.length - 1;
      // The ends first, in this thread: most hits fail there, and a native compare per hit cost a fifth of the scan.
      if (last < hay.length && hay[start] === q[0] && hay[last] === q[q.length - 1] && hay.compare(q, 0, q.length, start, last + 1) === 0) {
        return start;
      }
      // More than one false hit per 64 bytes looked at: the byte is not rare here.
      if (++hits > 16 && (i - from) >>> 6 < hits) {
        this.dense = true;
        return hay.indexOf(q, i - at + 1);
      }
    }
    return -1;
  }

  private verify(ls: number, le: number): boolean {
    const text = this.buf.toString("utf8", ls, this.textEnd(ls, le));
    const m = this.query.lineRe.exec(text);
    if (m === null) return false;
    this.found(ls, le, text, m.index, -1);
    return true;
  }

  // The next line holding the required literal that the expression matches.
  // (Where more than one line in DENSE_TESTED_BYTES holds the literal, the rest of the region goes without it: see `fallback`.)
  private nextPrefiltered(pos: number, hay: Buffer): number {
    for (let from = pos; from < this.buf.length; ) {
      const i = this.indexOfQuery(hay, this.query.bytes, from);
      if (i < 0) return -1;
      const ls = i === 0 ? 0 : this.buf.lastIndexOf(LF, i - 1) + 1;
      const le = this.lineEnd(i);
      if (++this.tested > 4 && this.tested * DENSE_TESTED_BYTES > le) {
        this.unfiltered = true;
        return this.nextUnfiltered(ls);
      }
      if (this.verify(ls, le)) return ls;
      from = le + 1;
    }
    return -1;
  }

  // The next line holding the required run of ASCII classes that the expression matches (strategy `segment`), window by window.
  private nextSegmented(pos: number): number {
    const re = this.query.segmentRe as RegExp;
    while (pos < this.buf.length) {
      if (pos < this.winStart || pos >= this.winEnd) this.openWindow(pos);
      const view = (this.view ??= this.buf.toString("latin1", this.winStart, this.winEnd));
      re.lastIndex = pos - this.winStart;
      const m = re.exec(view);
      if (m === null) {
        pos = this.winEnd;
        continue;
      }
      const i = this.winStart + m.index;
      const ls = i === 0 ? 0 : this.buf.lastIndexOf(LF, i - 1) + 1;
      const le = this.lineEnd(i);
      if (++this.tested > 4 && this.tested * DENSE_TESTED_BYTES > le) {
        this.unfiltered = true;
        return this.nextUnfiltered(ls);
      }
      if (this.verify(ls, le)) return ls;
      pos = le + 1;
    }
    return -1;
  }

  // The next matching line by the query's fallback strategy, which needs no literal.
  private nextUnfiltered(pos: number): number {
    return this.query.fallback === "perLine" ? this.nextPerLine(pos) : this.nextViewed(pos);
  }

  private nextPerLine(pos: number): number {
    for (let ls = pos; ls < this.buf.length; ) {
      const le = this.lineEnd(ls);
      if (this.verify(ls, le)) return ls;
      ls = le + 1;
    }
    return -1;
  }

  /**
   * The next matching line for the view strategies, window by window: each window is whole lines of
   * at most `viewBytes` (or one longer line), viewed as one string, so a search within it finds
   * what a search of the region would (no line, and so no match, crosses its ends).
   */
  private nextViewed(pos: number): number {
    while (pos < this.buf.length) {
      if (pos < this.winStart || pos >= this.winEnd) this.openWindow(pos);
      if (this.decodedAt !== this.winStart) this.decodeWindow();
      const ls = this.decoded !== "" ? this.nextDecoded(pos) : this.nextInView(pos);
      if (ls >= 0) return ls;
      pos = this.winEnd;
    }
    return -1;
  }

  // Views the whole lines from line start `pos`: up to the last line feed within `viewBytes`, or past the first one when none is.
  private openWindow(pos: number): void {
    const buf = this.buf;
    let end = buf.length;
    if (pos + this.viewBytes < buf.length) {
      const nl = buf.lastIndexOf(LF, pos + this.viewBytes - 1);
      end = nl >= pos ? nl + 1 : this.lineEnd(pos + this.viewBytes) + 1;
    }
    this.winStart = pos;
    this.winEnd = Math.min(end, buf.length);
    this.candLs = -1;
    this.wideLs = -1;
    this.view = undefined;
    this.decodedAt = -1;
  }

  // Decodes the window when the region takes block mode (see nextDecoded).
  private decodeWindow(): void {
    const buf = this.buf;
    this.block ??= this.query.fallback === "latin1+wide" && this.query.blockSafe && mostlyWide(buf);
    const window = buf.subarray(this.winStart, this.winEnd);
    this.decoded = this.block && isUtf8(window) ? window.toString("utf8") : "";
    this.mapByte = this.winStart;
    this.mapChar = 0;
    this.decodedAt = this.winStart;
  }

  /**
   * Block mode, for a regex that no match of can run across lines, over a region holding text past
   * ASCII: each window is decoded once and the multiline expression run over it (rather than each
   * such line decoded and tested alone). Only a window of valid UTF-8 qualifies, whose decoding is
   * its lines' decodings joined by line feeds, so a line start maps to a character index; others
   * keep the Latin-1 view with wide lines tested one by one. -1 when the window holds no more.
   */
  private nextDecoded(pos: number): number {
    const text = this.decoded;
    for (let from = this.charIndexOf(pos); from < text.length; ) {
      const re = this.query.chunkRe;
      re.lastIndex = from;
      const m = re.exec(text);
      if (m === null) return -1;
      const lsChar = m.index === 0 ? 0 : text.lastIndexOf("\n", m.index - 1) + 1;
      // An empty match after the window's last line feed is in none of its lines.
      if (lsChar >= text.length) return -1;
      const ls = this.mapByte + Buffer.byteLength(text.slice(this.mapChar, lsChar));
      const le = this.lineEnd(ls);
      const nl = text.indexOf("\n", m.index);
      const leChar = nl < 0 ? text.length : nl;
      // The next line's start is known in both units now: the next search starts there.
      this.mapByte = le + 1;
      this.mapChar = leChar + 1;
      // A context-free hit within the line's text is a match as it stands, and its first occurrence.
      const textEndChar = leChar - (this.textEnd(ls, le) < le ? 1 : 0);
      if (this.query.contextFree && m.index + m[0].length <= textEndChar) {
        return this.found(ls, le, undefined, this.query.located ? -1 : m.index - lsChar, -1);
      }
      if (this.verify(ls, le)) return ls;
      from = leChar + 1;
    }
    return -1;
  }

  // The character index in the decoded window of line start `pos`, from the last line start mapped.
  private charIndexOf(pos: number): number {
    if (pos < this.mapByte) {
      this.mapByte = this.winStart;
      this.mapChar = 0;
    }
    if (pos > this.mapByte) {
      this.mapChar += this.buf.toString("utf8", this.mapByte, pos).length;
      this.mapByte = pos;
    }
    return this.mapChar;
  }

  // The Latin-1 view of the window: candidate lines from the chunk regex, and (latin1+wide) every line past ASCII tested alone; -1 when the window holds no more.
  private nextInView(pos: number): number {
    const view = (this.view ??= this.buf.toString("latin1", this.winStart, this.winEnd));
    const wide = this.query.fallback === "latin1+wide";
    const end = this.winEnd;
    for (;;) {
      if (pos >= end) return -1;
      if (this.candLs < pos) this.candidate(view, pos);
      if (wide && this.wideLs < pos) this.wideLine(view, pos);
      const ls = wide ? Math.min(this.candLs, this.wideLs) : this.candLs;
      if (ls >= end) return -1;
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

  // The line (bytes of the region) holding the chunk regex's next hit at or after line start `pos`; past the window when none.
  private candidate(view: string, pos: number): void {
    const base = this.winStart;
    if (this.query.startRe !== undefined) {
      this.startCandidate(view, pos, this.query.startRe);
      return;
    }
    const re = this.query.chunkRe;
    re.lastIndex = pos - base;
    const m = re.exec(view);
    if (m === null) {
      this.candLs = Number.MAX_SAFE_INTEGER;
      return;
    }
    const idx = m.index;
    // An empty hit after the window's last line feed starts at its end: in none of its lines.
    this.candLs = base + (idx === 0 ? 0 : view.lastIndexOf("\n", idx - 1) + 1);
    this.candLe = this.lineEnd(base + idx);
    this.candEnd = base + idx + m[0].length;
  }

  // As `candidate`, for an expression anchored at line starts: the line after the line feed `re` hits, the window's
  // first line (no line feed before it in the view) always; never taken for a match untested.
  private startCandidate(view: string, pos: number, re: RegExp): void {
    const base = this.winStart;
    this.candEnd = Number.MAX_SAFE_INTEGER;
    if (pos === base) {
      this.candLs = pos;
      this.candLe = this.lineEnd(pos);
      return;
    }
    re.lastIndex = pos - base - 1;
    const m = re.exec(view);
    if (m === null) {
      this.candLs = Number.MAX_SAFE_INTEGER;
      return;
    }
    this.candLs = base + m.index + 1;
    this.candLe = this.lineEnd(this.candLs);
  }

  private wideLine(view: string, pos: number): void {
    const base = this.winStart;
    WIDE_BYTE.lastIndex = pos - base;
    const m = WIDE_BYTE.exec(view);
    this.wideLs = m === null ? Number.MAX_SAFE_INTEGER : base + (m.index === 0 ? 0 : view.lastIndexOf("\n", m.index - 1) + 1);
  }
}
