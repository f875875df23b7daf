// The view strategies' driver: a region cut into windows of whole lines, each one string (a Latin-1 view, or decoded in block mode).
import { isUtf8 } from "node:buffer";
import type { Query } from "./query.js";
import { lineStartIn, type RegionLines } from "./region-lines.js";
import { mostlyWide, nextWideLine } from "./wide-lines.js";

/**
 * The longest stretch of whole lines turned into one string at a time (a Latin-1 view or a decoded
 * block). A string past V8's 128 KiB object limit is allocated in fresh pages of its own, one per
 * region: viewing a 600 MiB file in 256 KiB strings cost 0.8 ns a byte, mostly page faults, and in
 * 64 KiB strings, which the young generation recycles, 0.15 ns.
 */
const VIEW_BYTES = 64 * 1024;

const LF = 10;

/** Finds matching lines window by window: each window is whole lines of at most `viewBytes` (or one longer line). */
export class LineWindows {
  private view: string | undefined;
  private candLs = -1;
  private candLe = -1;
  private candEnd = -1;
  private wideLs = -1;
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
    private readonly lines: RegionLines,
    private readonly viewBytes = VIEW_BYTES,
  ) {}

  /** Forgets the region before: call on each new one. */
  reset(): void {
    this.view = undefined;
    this.candLs = -1;
    this.wideLs = -1;
    this.winStart = 0;
    this.winEnd = 0;
    this.block = undefined;
    this.decoded = "";
    this.decodedAt = -1;
    this.mapByte = 0;
    this.mapChar = 0;
  }

  /**
   * The start of the first matching line at or after line start `pos`, or -1: a search within a
   * window finds what a search of the region would (no line, and so no match, crosses its ends).
   */
  next(pos: number): number {
    const buf = this.lines.buf;
    while (pos < buf.length) {
      this.enter(pos);
      if (this.decodedAt !== this.winStart) this.decodeWindow();
      const ls = this.decoded !== "" ? this.nextDecoded(pos) : this.nextInView(pos);
      if (ls >= 0) return ls;
      pos = this.winEnd;
    }
    return -1;
  }

  /** Opens the window holding line start `pos` unless it is open; returns its Latin-1 view (made once). */
  latin1At(pos: number): string {
    this.enter(pos);
    this.view ??= this.lines.buf.toString("latin1", this.winStart, this.winEnd);
    return this.view;
  }

  /** The region byte where the open window starts. */
  get start(): number {
    return this.winStart;
  }

  /** The region byte just past the open window. */
  get end(): number {
    return this.winEnd;
  }

  // Views the whole lines from line start `pos` unless its window is open: up to the last line feed within `viewBytes`, or past the first one when none is.
  private enter(pos: number): void {
    if (pos >= this.winStart && pos < this.winEnd) return;
    const buf = this.lines.buf;
    let end = buf.length;
    if (pos + this.viewBytes < buf.length) {
      const nl = buf.lastIndexOf(LF, pos + this.viewBytes - 1);
      end = nl >= pos ? nl + 1 : this.lines.lineEnd(pos + this.viewBytes) + 1;
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
    const buf = this.lines.buf;
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
    const lines = this.lines;
    const text = this.decoded;
    for (let from = this.charIndexOf(pos); from < text.length; ) {
      const re = this.query.chunkRe;
      re.lastIndex = from;
      const m = re.exec(text);
      if (m === null) return -1;
      const lsChar = lineStartIn(text, m.index);
      // An empty match after the window's last line feed is in none of its lines.
      if (lsChar >= text.length) return -1;
      const ls = this.mapByte + Buffer.byteLength(text.slice(this.mapChar, lsChar));
      const le = lines.lineEnd(ls);
      const nl = text.indexOf("\n", m.index);
      const leChar = nl < 0 ? text.length : nl;
      // The next line's start is known in both units now: the next search starts there.
      this.mapByte = le + 1;
      this.mapChar = leChar + 1;
      // A context-free hit within the line's text is a match as it stands, and its first occurrence.
      const textEndChar = leChar - (lines.textEnd(ls, le) < le ? 1 : 0);
      if (this.query.contextFree && m.index + m[0].length <= textEndChar) {
        return lines.found(ls, le, undefined, this.query.located ? -1 : m.index - lsChar, -1);
      }
      if (lines.verify(ls, le)) return ls;
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
      this.mapChar += this.lines.buf.toString("utf8", this.mapByte, pos).length;
      this.mapByte = pos;
    }
    return this.mapChar;
  }

  // The Latin-1 view of the window: candidate lines from the chunk regex, and (latin1+wide) every line past ASCII tested alone; -1 when the window holds no more.
  private nextInView(pos: number): number {
    const lines = this.lines;
    const view = this.latin1At(pos);
    const wide = this.query.fallback === "latin1+wide";
    const end = this.winEnd;
    for (;;) {
      if (pos >= end) return -1;
      if (this.candLs < pos) this.candidate(view, pos);
      if (wide && this.wideLs < pos) {
        const at = nextWideLine(view, pos - this.winStart);
        this.wideLs = at < 0 ? Number.MAX_SAFE_INTEGER : this.winStart + at;
      }
      const ls = wide ? Math.min(this.candLs, this.wideLs) : this.candLs;
      if (ls >= end) return -1;
      const le = ls === this.candLs ? this.candLe : lines.lineEnd(ls);
      // A context-free hit within an ASCII line's text is a match as it stands.
      const asciiLine = !wide || this.wideLs > ls;
      if (ls === this.candLs && asciiLine && this.query.contextFree && this.candEnd <= lines.textEnd(ls, le)) {
        return lines.found(ls, le, undefined, -1, -1);
      }
      if (lines.verify(ls, le)) return ls;
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
    this.candLs = base + lineStartIn(view, idx);
    this.candLe = this.lines.lineEnd(base + idx);
    this.candEnd = base + idx + m[0].length;
  }

  // As `candidate`, for an expression anchored at line starts: the line after the line feed `re` hits, the window's
  // first line (no line feed before it in the view) always; never taken for a match untested.
  private startCandidate(view: string, pos: number, re: RegExp): void {
    const base = this.winStart;
    this.candEnd = Number.MAX_SAFE_INTEGER;
    if (pos === base) {
      this.candLs = pos;
      this.candLe = this.lines.lineEnd(pos);
      return;
    }
    re.lastIndex = pos - base - 1;
    const m = re.exec(view);
    if (m === null) {
      this.candLs = Number.MAX_SAFE_INTEGER;
      return;
    }
    this.candLs = base + m.index + 1;
    this.candLe = this.lines.lineEnd(this.candLs);
  }
}
