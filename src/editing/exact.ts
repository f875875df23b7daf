/**
 * Exact matching of several edits' old texts over the streamed file in one pass: every occurrence
 * (overlapping ones too) is counted and the first few kept, so an edit can tell a unique old text
 * from an ambiguous one (SPEC §15). A few long patterns are found together by the byte pairs of a
 * sliding window (`PairSkip`), a few short ones each with Buffer#indexOf; many are found together
 * with a rolling hash of their first bytes (one pass over each block whatever their number),
 * overlapping the previous block by one byte less than the longest pattern.
 */
import type { NormBlock } from "./source-index.js";

// Below this many patterns, the long ones are found by their byte pairs and the short ones by one indexOf each
// (native, memchr-fast); from this many on, the long ones by the rolling hash.
const MANY = 8;
const MIN_HASHED = 8;
// Longest stretch of a pattern the pair window spans (its shifts fit a byte).
const MAX_SPAN = 256;
// The pair window gives way to indexOf once it takes more than one step in this many bytes (a pattern of few
// distinct pairs over text made of them, e.g. a run of one byte): its steps are JavaScript, indexOf's native.
const SLOW_STEP_BYTES = 4;
// Bytes the pair window searches before its pace is judged (a block's worth at the engine's default).
const JUDGED_AFTER_BYTES = 65536;

/**
 * A few patterns of MIN_HASHED bytes or more, found together in one pass (Wu and Manber's shift, over byte pairs): a
 * window as long as the shortest pattern (`span`) slides along the bytes, moved on by how far its last pair lies from
 * the end of every pattern's first `span` bytes, and compared with the patterns where that is nothing. Over the
 * bench's 600 MiB file, with two lines of 48 and 106 bytes, it takes 0.024 steps a byte: 2.7 times as fast as an
 * indexOf of each over the same blocks, which a byte's shift held to 4.7 GB/s.
 */
class PairSkip {
  private readonly span: number;
  private readonly shift = new Uint8Array(65536);
  /** The patterns whose first `span` bytes end in each pair. */
  private readonly byLastPair = new Map<number, number[]>();
  private steps = 0;
  private bytes = 0;

  constructor(
    private readonly patterns: readonly (Buffer | undefined)[],
    readonly indices: readonly number[],
  ) {
    this.span = indices.reduce((least, i) => Math.min(least, patterns[i]?.length ?? 0), MAX_SPAN);
    const span = this.span;
    this.shift.fill(span - 1);
    for (const i of indices) {
      const p = patterns[i] as Buffer;
      for (let j = 0; j + 1 < span; j++) {
        const pair = ((p[j] as number) << 8) | (p[j + 1] as number);
        this.shift[pair] = Math.min(this.shift[pair] as number, span - 2 - j);
      }
      const last = ((p[span - 2] as number) << 8) | (p[span - 1] as number);
      this.byLastPair.set(last, [...(this.byLastPair.get(last) ?? []), i]);
    }
  }

  /** True once it took more than one step in SLOW_STEP_BYTES bytes, over JUDGED_AFTER_BYTES bytes or more. */
  get slow(): boolean {
    return this.bytes >= JUDGED_AFTER_BYTES && this.steps * SLOW_STEP_BYTES > this.bytes;
  }

  /** Calls `found` for each occurrence in `buf` starting at or after `start` and before `before`, and ending past `fresh`, in order. */
  scan(buf: Buffer, start: number, fresh: number, before: number, found: (i: number, at: number) => void): void {
    const { span, shift, patterns } = this;
    const n = buf.length;
    let steps = 0;
    // `i` is the first byte of the window's last pair.
    for (let i = start + span - 2; i + 1 < n; steps++) {
      const pair = ((buf[i] as number) << 8) | (buf[i + 1] as number);
      const by = shift[pair] as number;
      if (by !== 0) {
        i += by;
        continue;
      }
      const at = i + 2 - span;
      if (at >= before) break;
      for (const k of this.byLastPair.get(pair) as number[]) {
        const p = patterns[k] as Buffer;
        const end = at + p.length;
        if (end <= n && end > fresh && buf.compare(p, 0, p.length, at, end) === 0) found(k, at);
      }
      i++;
    }
    this.steps += steps;
    this.bytes += Math.max(0, n - start);
  }
}
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
  private pairs: PairSkip | undefined;

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
    if (long.length === 0) return;
    if (long.length < MANY) {
      this.pairs = new PairSkip(patterns, long);
      this.pending = this.pending.filter((i) => (patterns[i]?.length ?? 0) < MIN_HASHED);
      return;
    }
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
    const pairs = this.pairs;
    if (pairs === undefined) return;
    pairs.scan(buf, start, fresh, before, (i, at) => this.record(i, base + at));
    // Searched by indexOf from the next buffer on.
    if (pairs.slow) {
      this.pending.push(...pairs.indices);
      this.pairs = undefined;
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
