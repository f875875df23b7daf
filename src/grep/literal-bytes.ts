// A literal's search in a region's bytes (strategies `bytes` and `foldedBytes`, and the prefilters' literal): A-Z folding, the rare-byte scan and the pair scan.
import type { Query } from "./query.js";
import type { RegionLines } from "./region-lines.js";
import { newHolder, sharedRegion } from "./simd-region.js";

// A line's rest longer than this is searched by Buffer#indexOf (memchr and native compares), a shorter one here.
const SHORT_RANGE = 256;
// Past this length the bytes between a hit's ends are compared natively: a call costs more than a short loop.
const LOOP_COMPARE_MAX = 64;

/** True when `q` lies in `hay` at `start` (which leaves room for it): its ends first, where most hits fail. */
function occursAt(hay: Buffer, start: number, q: Buffer): boolean {
  const end = q.length - 1;
  if (hay[start] !== q[0] || hay[start + end] !== q[end]) return false;
  if (end > LOOP_COMPARE_MAX) return hay.compare(q, 1, end, start + 1, start + end) === 0;
  for (let k = 1; k < end; k++) if (hay[start + k] !== q[k]) return false;
  return true;
}

/** The literal of a query looked for in one region's bytes, as they are or with A-Z lowered. */
export class LiteralBytes {
  private readonly region = sharedRegion();
  // The region as copied into the thread's shared `region` (A-Z lowered or not) once it was needed there, under `holder`.
  private loaded: Buffer | undefined;
  private loadedFolded = false;
  private holder = 0;
  // The query's rarest byte turned out common in this region (see indexOf), and then also the pair (see pairIndexOf).
  private dense = false;
  private pairDense = false;
  // The two bytes of the literal looked for together once its rarest byte is common: that byte and the one farthest from it.
  private readonly lo: number;
  private readonly hi: number;
  /** After a `count` above 0: the byte just past the last occurrence counted. */
  lastEnd = 0;

  constructor(
    private readonly query: Query,
    private readonly lines: RegionLines,
  ) {
    const at = query.rareAt;
    const other = at < query.bytes.length / 2 ? query.bytes.length - 1 : 0;
    this.lo = Math.min(at, other);
    this.hi = Math.max(at, other);
  }

  /** Forgets the region before: call on each new one. */
  reset(): void {
    this.loaded = undefined;
    this.dense = false;
    this.pairDense = false;
  }

  /** The region's bytes, or (with `folded`) a copy with A-Z lowered, made once per region. */
  hay(folded: boolean): Buffer {
    return folded ? this.load(true) : this.lines.buf;
  }

  // The region copied into `region`, A-Z lowered with `folded`: once per region, and again when another search of this
  // thread loaded its own since (every caller asks here before it uses the copy, within one synchronous call).
  private load(folded: boolean): Buffer {
    if (this.loaded === undefined || this.loadedFolded !== folded || !this.region.heldBy(this.holder)) {
      this.holder = newHolder();
      this.loaded = this.region.load(this.lines.buf, folded, this.holder);
      this.loadedFolded = folded;
    }
    return this.loaded;
  }

  /** The start of the first line at or after line start `pos` whose text holds the literal, recorded as found; or -1. */
  next(pos: number, folded: boolean): number {
    const hay = this.hay(folded);
    const lines = this.lines;
    const q = this.query.bytes;
    let i = pos;
    for (;;) {
      i = this.indexOf(hay, i);
      if (i < 0) return -1;
      const le = lines.lineEnd(i);
      const ls = lines.lineStart(i);
      // An occurrence may run into the hidden `\r`; look further in the same line.
      if (i + q.length <= lines.textEnd(ls, le)) return lines.found(ls, le, undefined, -1, i);
      i++;
    }
  }

  /** The occurrences of the literal in `start`..`te` of the found line, non-overlapping; sets `lastEnd`. */
  count(start: number, te: number, folded: boolean): number {
    const hay = this.hay(folded);
    const q = this.query.bytes;
    let n = 0;
    // `next` found the line's first occurrence already; it need not be looked for again.
    const occByte = this.lines.occByte;
    for (let i = occByte >= start ? occByte : this.within(hay, start, te); i >= 0; i = this.within(hay, i + q.length, te)) {
      n++;
      this.lastEnd = i + q.length;
    }
    return n;
  }

  // The first occurrence of the literal inside `from`..`to` of `hay`, or -1: most lines are short, and looked
  // through here they cost less than a view of the line made for Buffer#indexOf (two per matching line).
  private within(hay: Buffer, from: number, to: number): number {
    const q = this.query.bytes;
    const last = to - q.length;
    if (last - from > SHORT_RANGE) {
      const i = hay.subarray(from, to).indexOf(q);
      return i < 0 ? -1 : from + i;
    }
    for (let i = from; i <= last; i++) if (occursAt(hay, i, q)) return i;
    return -1;
  }

  /**
   * The next occurrence of the literal in `hay` at or after `from`, or -1. Buffer#indexOf of a long
   * needle ran at about 450 MB/s here, while its search for one byte (memchr) runs at many GB/s: so
   * the needle's rarest byte is looked for and each hit compared, until hits come too densely, and
   * then the rest of the region goes to the search by a pair of its bytes (pairIndexOf).
   */
  indexOf(hay: Buffer, from: number): number {
    const q = this.query.bytes;
    if (q.length < 2) return hay.indexOf(q, from);
    if (this.dense) return this.pairIndexOf(hay, from);
    const at = this.query.rareAt;
    const rare = q[at] as number;
    let hits = 0;
    for (let i = hay.indexOf(rare, from + at); i >= 0; i = hay.indexOf(rare, i + 1)) {
      const start = i - at;
      const last = start + q.length - 1;
      // The ends first, then the bytes between, all in this thread: a native compare per hit cost a fifth of the scan.
      if (last < hay.length && occursAt(hay, start, q)) return start;
      // More than one false hit per 64 bytes looked at: the byte is not rare here.
      if (++hits > 16 && (i - from) >>> 6 < hits) {
        this.dense = true;
        return this.pairIndexOf(hay, i - at + 1);
      }
    }
    return -1;
  }

  /**
   * The next occurrence at or after `from` by the positions where the rarest byte and the one farthest from it
   * stand together, 16 positions a step (simd-region.ts): Buffer#indexOf of the whole literal ran at about
   * 1 GB/s over text where each of its bytes is common. Where even the pair stands in more than one position in
   * 32, the rest of the region goes to Buffer#indexOf.
   */
  private pairIndexOf(hay: Buffer, from: number): number {
    const q = this.query.bytes;
    if (this.pairDense) return hay.indexOf(q, from);
    // The copy the pair is looked for in holds what `hay` holds: the region's bytes, A-Z lowered when `hay` is. Where
    // it is not in the WebAssembly memory (a long region, or none to be had), Buffer#indexOf beats a JS loop.
    this.load(hay !== this.lines.buf);
    if (!this.region.simd) return hay.indexOf(q, from);
    const { lo, hi } = this;
    const [a, b] = [q[lo] as number, q[hi] as number];
    const end = hay.length - q.length + lo + 1;
    let candidates = 0;
    for (let j = this.region.find(from + lo, end, a, b, hi - lo); j >= 0; j = this.region.find(j + 1, end, a, b, hi - lo)) {
      if (occursAt(hay, j - lo, q)) return j - lo;
      if (++candidates > 16 && (j - from) >>> 5 < candidates) {
        this.pairDense = true;
        return hay.indexOf(q, j - lo + 1);
      }
    }
    return -1;
  }
}
