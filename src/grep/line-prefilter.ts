// The prefilters of a regex: lines holding its required literal, or its required run of ASCII classes, are the only ones tested.
import type { LineWindows } from "./line-windows.js";
import type { LiteralBytes } from "./literal-bytes.js";
import type { Query } from "./query.js";
import type { RegionLines } from "./region-lines.js";

/**
 * A region where the required literal leads to a line test more often than once in this many bytes
 * goes on without it: a line's test (decoding it, running the expression) cost about what running
 * the expression over 256 bytes of text costs.
 */
const DENSE_TESTED_BYTES = 256;

/** Finds matching lines among those a prefilter picks, until it picks too many; one instance per finder. */
export class Prefilter {
  // Lines the prefilter led to a test of in this region, and whether it turned out too common to be worth it.
  private tested = 0;
  private unfiltered = false;
  // Where the search goes on after a line `test` rejected.
  private after = 0;

  constructor(
    private readonly query: Query,
    private readonly lines: RegionLines,
    private readonly literal: LiteralBytes,
    private readonly windows: LineWindows,
  ) {}

  /** Forgets the region before: call on each new one. */
  reset(): void {
    this.tested = 0;
    this.unfiltered = false;
  }

  /** The next matching line at or after line start `pos` among those holding the required literal (A-Z lowered with `folded`), or -1. */
  nextLiteral(pos: number, folded: boolean): number {
    if (this.unfiltered) return this.nextUnfiltered(pos);
    const hay = this.literal.hay(folded);
    for (let from = pos; from < this.lines.buf.length; from = this.after) {
      const i = this.literal.indexOf(hay, from);
      if (i < 0) return -1;
      const ls = this.test(i);
      if (ls >= 0) return ls;
    }
    return -1;
  }

  /** The next matching line at or after line start `pos` among those holding the required run of ASCII classes (strategy `segment`), or -1. */
  nextSegment(pos: number): number {
    if (this.unfiltered) return this.nextUnfiltered(pos);
    const re = this.query.segmentRe as RegExp;
    const windows = this.windows;
    while (pos < this.lines.buf.length) {
      const view = windows.latin1At(pos);
      re.lastIndex = pos - windows.start;
      const m = re.exec(view);
      if (m === null) {
        pos = windows.end;
        continue;
      }
      const ls = this.test(windows.start + m.index);
      if (ls >= 0) return ls;
      pos = this.after;
    }
    return -1;
  }

  // Tests the line holding byte `i` that the prefilter picked: its start when it matches, else -1 and `after` set to
  // where to go on. Where more than one line in DENSE_TESTED_BYTES was picked, the rest of the region goes unfiltered.
  private test(i: number): number {
    const lines = this.lines;
    const ls = lines.lineStart(i);
    const le = lines.lineEnd(i);
    if (++this.tested > 4 && this.tested * DENSE_TESTED_BYTES > le) {
      this.unfiltered = true;
      this.after = lines.buf.length;
      return this.nextUnfiltered(ls);
    }
    if (lines.verify(ls, le)) return ls;
    this.after = le + 1;
    return -1;
  }

  // The next matching line by the query's fallback strategy, which needs no prefilter.
  private nextUnfiltered(pos: number): number {
    return this.query.fallback === "perLine" ? this.lines.nextByLine(pos) : this.windows.next(pos);
  }
}
