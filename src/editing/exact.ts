/**
 * Exact matching of several edits' old texts over the streamed file in one pass. A few patterns
 * are each searched with Buffer#indexOf; many are found together with a rolling hash of their
 * first bytes (one pass over each block whatever their number), overlapping the previous block
 * by one byte less than the longest pattern.
 */
import type { NormBlock } from "./source-index.js";

// Below this many patterns one indexOf each (native, memchr-fast) beats a JS pass over the bytes.
const MANY = 8;
const MIN_HASHED = 8;
const HASH_SPAN = 32;
const BASE = 257;

/** Finds each pattern's first occurrence at or after `from` that `accept` takes. */
export class ExactFinder {
  readonly found: (number | undefined)[];
  private pending: number[];
  private tail = Buffer.alloc(0);
  private readonly keep: number;
  private span = 0;
  private readonly byHash = new Map<number, number[]>();
  private readonly filter = new Uint8Array(65536);
  private hashed = 0;

  constructor(
    private readonly patterns: readonly (Buffer | undefined)[],
    private readonly from: number,
    private readonly accept: (i: number, at: number) => boolean = () => true,
  ) {
    this.found = patterns.map(() => undefined);
    this.pending = [];
    patterns.forEach((p, i) => {
      if (p !== undefined && p.length > 0) this.pending.push(i);
    });
    this.keep = this.pending.reduce((most, i) => Math.max(most, (patterns[i]?.length ?? 1) - 1), 0);
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

  /** True when every pattern has its occurrence. */
  get done(): boolean {
    return this.pending.length === 0 && this.hashed === 0;
  }

  /** Searches one more block (blocks must come in order). */
  feed(block: NormBlock): void {
    const buf = this.tail.length === 0 ? block.norm : Buffer.concat([this.tail, block.norm]);
    const base = block.normStart - this.tail.length;
    const start = Math.max(0, this.from - base);
    this.pending = this.pending.filter((i) => {
      const pattern = this.patterns[i] as Buffer;
      for (let at = buf.indexOf(pattern, start); at !== -1; at = buf.indexOf(pattern, at + 1)) {
        if (this.accept(i, base + at)) {
          this.found[i] = base + at;
          return false;
        }
      }
      return true;
    });
    if (this.hashed > 0) this.rollOver(buf, base, start);
    const keep = Math.min(this.keep, buf.length);
    this.tail = keep === 0 ? Buffer.alloc(0) : Buffer.from(buf.subarray(buf.length - keep));
  }

  private rollOver(buf: Buffer, base: number, start: number): void {
    const span = this.span;
    if (buf.length - start < span) return;
    const out = power(span - 1);
    let h = hashOf(buf, start, start + span);
    for (let at = start; ; at++) {
      if (this.filter[h >>> 16] === 1) this.check(buf, base, at, h);
      if (at + span >= buf.length || this.hashed === 0) return;
      h = (Math.imul(h - Math.imul(buf[at] ?? 0, out), BASE) + (buf[at + span] ?? 0)) | 0;
    }
  }

  private check(buf: Buffer, base: number, at: number, h: number): void {
    const list = this.byHash.get(h);
    if (list === undefined) return;
    for (const i of list) {
      const pattern = this.patterns[i] as Buffer;
      if (this.found[i] !== undefined || at + pattern.length > buf.length) continue;
      if (buf.compare(pattern, 0, pattern.length, at, at + pattern.length) !== 0 || !this.accept(i, base + at)) continue;
      this.found[i] = base + at;
      this.hashed--;
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
