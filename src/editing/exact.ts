/**
 * Exact matching of several edits' old texts over the streamed file in one pass: each block is
 * searched with Buffer#indexOf for the patterns still unmatched, overlapping the previous block
 * by one byte less than the longest pattern.
 */
import type { NormBlock } from "./source-index.js";

/** Finds each pattern's first occurrence at or after `from` that `accept` takes. */
export class ExactFinder {
  readonly found: (number | undefined)[];
  private pending: number[];
  private tail = Buffer.alloc(0);
  private readonly keep: number;

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
    this.keep = Math.max(0, ...this.pending.map((i) => (patterns[i]?.length ?? 1) - 1));
  }

  /** True when every pattern has its occurrence. */
  get done(): boolean {
    return this.pending.length === 0;
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
    const keep = Math.min(this.keep, buf.length);
    this.tail = keep === 0 ? Buffer.alloc(0) : Buffer.from(buf.subarray(buf.length - keep));
  }
}
