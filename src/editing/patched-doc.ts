/**
 * The document being edited: the original normalized text with a sorted list of replaced
 * ranges. Only the replaced ranges live in memory; everything else is read back on demand.
 */
import type { SourceIndex } from "./source-index.js";

/** Normalized original bytes [start, end) replaced by `text` (start === end: an insertion). */
export interface Patch {
  start: number;
  end: number;
  text: Buffer;
}

const delta = (p: Patch): number => p.text.length - (p.end - p.start);

/** The original text plus the edits made so far, addressed in document (edited) byte offsets. */
export class PatchedDoc {
  patches: Patch[] = [];

  constructor(readonly index: SourceIndex) {}

  /** Length of the edited text in bytes. */
  get length(): number {
    let n = this.index.normSize;
    for (const p of this.patches) n += delta(p);
    return n;
  }

  private starts: number[] | undefined;

  /** Document offset where each patch's text starts (computed once per edit). */
  docStarts(): number[] {
    if (this.starts !== undefined) return this.starts;
    const out: number[] = [];
    let shift = 0;
    for (const p of this.patches) {
      out.push(p.start + shift);
      shift += delta(p);
    }
    this.starts = out;
    return out;
  }

  /** Index of the first patch whose text ends at or after document offset `x`. */
  private firstEndingFrom(x: number): number {
    const starts = this.docStarts();
    let lo = 0;
    let hi = this.patches.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((starts[mid] ?? 0) + (this.patches[mid]?.text.length ?? 0) < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Document offset of original offset `p`, which lies outside every replaced range. */
  toDoc(p: number): number {
    let shift = 0;
    for (const patch of this.patches) {
      if (patch.end > p) break;
      shift += delta(patch);
    }
    return p + shift;
  }

  /** Document offset of original offset `p`, placed before any text inserted at `p`. */
  toDocBefore(p: number): number {
    let shift = 0;
    for (const patch of this.patches) {
      if (patch.end > p || patch.start === p) break;
      shift += delta(patch);
    }
    return p + shift;
  }

  /** True when original bytes [p, p+length) are still contiguous, unedited text. */
  exactIntact(p: number, length: number): boolean {
    for (const { start, end } of this.patches) {
      if (start >= p + length) break;
      if (end > p || (start === end && start > p)) return false;
    }
    return true;
  }

  /** True when no edit touches original lines spanning [lineStart, lineEnd] or their line breaks. */
  linesIntact(lineStart: number, lineEnd: number): boolean {
    for (const { start, end } of this.patches) {
      if (start > lineEnd + 1) break;
      if (end >= lineStart - 1) return false;
    }
    return true;
  }

  /**
   * The edited text from the start, in pieces (original blocks read past the cache, patch texts), with
   * the document offset of each; for scans of the whole document, which would otherwise churn the cache.
   */
  async *pieces(): AsyncGenerator<{ at: number; bytes: Buffer }> {
    const { index } = this;
    let doc = 0;
    let orig = 0;
    const original = async function* (until: number): AsyncGenerator<{ at: number; bytes: Buffer }> {
      for (let i = index.blockAt(orig); orig < until && i < index.blockCount; i++) {
        const b = await index.block(i, false);
        const from = orig - b.normStart;
        const to = Math.min(until, b.normStart + b.norm.length) - b.normStart;
        if (to > from) {
          yield { at: doc, bytes: b.norm.subarray(from, to) };
          doc += to - from;
          orig += to - from;
        }
      }
    };
    for (const p of this.patches) {
      yield* original(p.start);
      if (p.text.length > 0) yield { at: doc, bytes: p.text };
      doc += p.text.length;
      orig = p.end;
    }
    yield* original(index.normSize);
  }

  /** Edited bytes [x, y). */
  async slice(x: number, y: number): Promise<Buffer> {
    // Pieces are collected first and only the original ranges awaited: most patches lie
    // before x, and awaiting once per patch made every window cost a promise per patch.
    const pieces: (Buffer | [number, number])[] = [];
    const first = this.firstEndingFrom(x);
    const before = this.patches[first - 1];
    let doc = before === undefined ? 0 : (this.docStarts()[first - 1] ?? 0) + before.text.length;
    let orig = before === undefined ? 0 : before.end;
    const takeOriginal = (until: number): void => {
      const from = Math.max(x, doc);
      const to = Math.min(y, doc + until - orig);
      if (to > from) pieces.push([orig + from - doc, orig + to - doc]);
      doc += until - orig;
    };
    for (let i = first; i < this.patches.length && doc < y; i++) {
      const p = this.patches[i] as Patch;
      takeOriginal(p.start);
      const from = Math.max(x, doc);
      const to = Math.min(y, doc + p.text.length);
      if (to > from) pieces.push(p.text.subarray(from - doc, to - doc));
      doc += p.text.length;
      orig = p.end;
    }
    if (doc < y) takeOriginal(this.index.normSize);
    const parts: Buffer[] = [];
    for (const piece of pieces) parts.push(Buffer.isBuffer(piece) ? piece : await this.index.range(piece[0], piece[1]));
    return parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts);
  }

  /** Replaces edited bytes [x, y) with `text`, merging every patch it meets or touches. */
  replace(x: number, y: number, text: Buffer): void {
    const starts = this.docStarts();
    this.starts = undefined;
    let shift = 0;
    let first = -1;
    let last = -1;
    let shiftBefore = 0;
    this.patches.forEach((p, i) => {
      const ds = starts[i] ?? 0;
      if (ds <= y && ds + p.text.length >= x) {
        if (first === -1) {
          first = i;
          shiftBefore = shift;
        }
        last = i;
      }
      shift += delta(p);
      if (ds + p.text.length < x) shiftBefore = shift;
    });
    if (first === -1) {
      const at = this.patches.findIndex((_, i) => (starts[i] ?? 0) > y);
      const patch = { start: x - shiftBefore, end: y - shiftBefore, text };
      this.patches.splice(at === -1 ? this.patches.length : at, 0, patch);
      return;
    }
    const head = this.patches[first] as Patch;
    const tail = this.patches[last] as Patch;
    const headDoc = starts[first] ?? 0;
    const tailDoc = starts[last] ?? 0;
    let shiftThrough = shiftBefore;
    for (let i = first; i <= last; i++) shiftThrough += delta(this.patches[i] as Patch);
    const start = headDoc <= x ? head.start : x - shiftBefore;
    const prefix = headDoc <= x ? head.text.subarray(0, x - headDoc) : Buffer.alloc(0);
    const tailEnd = tailDoc + tail.text.length;
    const end = tailEnd >= y ? tail.end : y - shiftThrough;
    const suffix = tailEnd >= y ? tail.text.subarray(y - tailDoc) : Buffer.alloc(0);
    this.patches.splice(first, last - first + 1, { start, end, text: Buffer.concat([prefix, text, suffix]) });
  }

  /**
   * Replaces every document range [at, at + length) of the sorted, disjoint `starts` with `text`, in one
   * pass over the patches and the ranges (a replace per range would cost the patch count each).
   */
  replaceEach(starts: readonly number[], length: number, text: Buffer): void {
    const out: Patch[] = [];
    let origEnd = 0;
    let literal: Buffer[] = [];
    const flush = (until: number): void => {
      if (literal.length === 0 && until === origEnd) return;
      out.push({ start: origEnd, end: until, text: literal.length === 1 ? (literal[0] as Buffer) : Buffer.concat(literal) });
      literal = [];
    };
    let r = 0;
    let inside = false;
    // Walks the document as pieces (original ranges and patch texts) cut by the ranges.
    const piece = (d0: number, d1: number, emit: (a: number, b: number) => void): void => {
      let d = d0;
      while (d < d1) {
        const rs = starts[r];
        if (!inside && rs === d) {
          literal.push(text);
          inside = true;
        }
        if (inside) {
          const re = (starts[r] as number) + length;
          d = Math.min(re, d1);
          if (d === re) {
            inside = false;
            r++;
          }
          continue;
        }
        const stop = rs === undefined ? d1 : Math.min(d1, rs);
        emit(d, stop);
        d = stop;
      }
    };
    let doc = 0;
    let orig = 0;
    const original = (until: number): void => {
      const from = orig;
      piece(doc, doc + until - from, (a, b) => {
        const s = from + a - doc;
        if (s !== origEnd || literal.length > 0) flush(s);
        origEnd = from + b - doc;
      });
      doc += until - from;
    };
    for (const p of this.patches) {
      original(p.start);
      piece(doc, doc + p.text.length, (a, b) => {
        literal.push(p.text.subarray(a - doc, b - doc));
      });
      doc += p.text.length;
      orig = p.end;
    }
    original(this.index.normSize);
    flush(this.index.normSize);
    this.patches = out;
    this.starts = undefined;
  }
}
