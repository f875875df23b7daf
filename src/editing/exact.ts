/**
 * Exact matching of several edits' old texts over the streamed file in one pass: every occurrence
 * (overlapping ones too) is counted and the first few kept, so an edit can tell a unique old text
 * from an ambiguous one (SPEC §15). A few patterns are each searched with Buffer#indexOf; many are
 * found together with a rolling hash of their first bytes (one pass over each block whatever their
 * number), overlapping the previous block by one byte less than the longest pattern.
 */
import type { NormBlock } from "./source-index.js";

// Below this many patterns one indexOf each (native, memchr-fast) beats a JS pass over the bytes.
const MANY = 8;
const MIN_HASHED = 8;
const HASH_SPAN = 32;
const BASE = 257;

/** Occurrences kept per pattern: enough to tell one from several once a few were edited away. */
export const KEPT_OCCURRENCES = 16;

/** Counts each pattern's occurrences at or after `from` and keeps the first few (KEPT_OCCURRENCES unless told). */
export class ExactFinder {
  /** Each pattern's first occurrences, in order (at most KEPT_OCCURRENCES). */
  readonly found: number[][];
  /** Each pattern's number of occurrences, overlapping ones included. */
  readonly counts: number[];
  private pending: number[];
  private tail = Buffer.alloc(0);
  private readonly overlap: number;
  private span = 0;
  private readonly byHash = new Map<number, number[]>();
  private readonly filter = new Uint8Array(65536);
  private hashed = 0;

  constructor(
    private readonly patterns: readonly (Buffer | undefined)[],
    private readonly from: number,
    /** How many occurrences to keep per pattern. @default KEPT_OCCURRENCES each */
    private readonly keep: readonly number[] = [],
  ) {
    this.found = patterns.map(() => []);
    this.counts = patterns.map(() => 0);
    this.pending = [];
    patterns.forEach((p, i) => {
      if (p !== undefined && p.length > 0) this.pending.push(i);
    });
    this.overlap = this.pending.reduce((most, i) => Math.max(most, (patterns[i]?.length ?? 1) - 1), 0);
    const long = this.pending.filter((i) => (patterns[i]?.length ?? 0) >= MIN_HASHED);
    if (long.length < MANY) return;
    this.span = long.reduce((least, i) => Math.min(least, patterns[i]?.length ?? 0), HASH_SPAN);
    for (const i of long) {
      const h = hashOf(patterns[i] as Buffer, 0, this.span);
      this.byHash.set(h, [...(this.byHash.get(h) ?? []), i]);
      this.filter[h >>> 16] = 1;
    }
    this.hashed = long.length;
    this.pending = this.pending.filter((i) => (patterns[i]?.length ?? 0) < MIN_HASHED);
  }

  private record(i: number, at: number): void {
    this.counts[i] = (this.counts[i] ?? 0) + 1;
    const kept = this.found[i] as number[];
    if (kept.length < (this.keep[i] ?? KEPT_OCCURRENCES)) kept.push(at);
  }

  /** Searches one more block (blocks must come in order). */
  feed(block: NormBlock): void {
    if (this.hashed > 0) {
      this.feedJoined(block);
      return;
    }
    // The block is searched where it lies, and only the seam (the carried tail and the block's first
    // bytes) is copied: a copy of every block was a second file's worth of allocations.
    const norm = block.norm;
    const tail = this.tail;
    if (tail.length > 0) {
      const seam = Buffer.concat([tail, norm.subarray(0, this.overlap)]);
      this.search(seam, block.normStart - tail.length, tail.length, tail.length);
    }
    this.search(norm, block.normStart, 0, Number.POSITIVE_INFINITY);
    const joined = norm.length >= this.overlap ? norm : Buffer.concat([tail, norm]);
    const keep = Math.min(this.overlap, joined.length);
    this.tail = keep === 0 ? Buffer.alloc(0) : Buffer.from(joined.subarray(joined.length - keep));
  }

  /** Records the occurrences in `buf` (document bytes from `base`) that end past `fresh` and start before `before`. */
  private search(buf: Buffer, base: number, fresh: number, before: number): void {
    const start = Math.max(0, this.from - base);
    for (const i of this.pending) {
      const pattern = this.patterns[i] as Buffer;
      for (let at = buf.indexOf(pattern, start); at !== -1 && at < before; at = buf.indexOf(pattern, at + 1)) {
        if (at + pattern.length > fresh) this.record(i, base + at);
      }
    }
  }

  /** feed for the rolling hash, over the tail and the block joined. */
  private feedJoined(block: NormBlock): void {
    const buf = this.tail.length === 0 ? block.norm : Buffer.concat([this.tail, block.norm]);
    const base = block.normStart - this.tail.length;
    const start = Math.max(0, this.from - base);
    // An occurrence ending inside the carried tail was counted with the block before.
    const fresh = this.tail.length;
    this.search(buf, base, fresh, Number.POSITIVE_INFINITY);
    this.rollOver(buf, base, start, fresh);
    const keep = Math.min(this.overlap, buf.length);
    this.tail = keep === 0 ? Buffer.alloc(0) : Buffer.from(buf.subarray(buf.length - keep));
  }

  private rollOver(buf: Buffer, base: number, start: number, fresh: number): void {
    const span = this.span;
    if (buf.length - start < span) return;
    const out = power(span - 1);
    let h = hashOf(buf, start, start + span);
    for (let at = start; ; at++) {
      if (this.filter[h >>> 16] === 1) this.check(buf, base, at, h, fresh);
      if (at + span >= buf.length) return;
      h = (Math.imul(h - Math.imul(buf[at] ?? 0, out), BASE) + (buf[at + span] ?? 0)) | 0;
    }
  }

  private check(buf: Buffer, base: number, at: number, h: number, fresh: number): void {
    const list = this.byHash.get(h);
    if (list === undefined) return;
    for (const i of list) {
      const pattern = this.patterns[i] as Buffer;
      if (at + pattern.length > buf.length || at + pattern.length <= fresh) continue;
      if (buf.compare(pattern, 0, pattern.length, at, at + pattern.length) !== 0) continue;
      this.record(i, base + at);
    }
  }
}

function hashOf(bytes: Buffer, from: number, to: number): number {
  let h = 0;
  for (let i = from; i < to; i++) h = (Math.imul(h, BASE) + (bytes[i] ?? 0)) | 0;
  return h;
}

function power(n: number): number {
  let p = 1;
  for (let i = 0; i < n; i++) p = Math.imul(p, BASE);
  return p;
}
