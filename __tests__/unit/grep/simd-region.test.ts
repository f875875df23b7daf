/**
 * A literal search's SIMD loops over a region (grep/simd-region.ts): the fold
 * lowers A-Z and changes no other byte, and `find` answers the first position
 * holding a pair of bytes, both as their JS loops do, at any length, alignment
 * and order of sizes (the memory grows and is reused).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { LineFinder } from "../../../src/grep/line-finder.js";
import { compileQuery } from "../../../src/grep/query.js";
import { countWholeLines } from "../../../src/grep/whole-count.js";
import { foldAsciiJs, REGION_WASM, SimdRegion } from "../../../src/grep/simd-region.js";
import { compileWasm } from "../../../src/kernel/wasm.js";

// The reference: every byte from 'A' to 'Z' gets 0x20, no other changes.
const lowered = (src: Uint8Array): Buffer => Buffer.from(Array.from(src, (b) => (b >= 0x41 && b <= 0x5a ? b + 0x20 : b)));

// Regions of any bytes, starting at any offset of their buffer (the scanner's regions are views of its chunk).
const region = (bytes: fc.Arbitrary<Uint8Array>) =>
  fc.tuple(bytes, fc.nat({ max: 15 })).map(([b, offset]) => Buffer.concat([Buffer.alloc(offset), b]).subarray(offset));
const anyBytes = region(fc.uint8Array({ maxLength: 3000, size: "max" }));
// Few byte values, so that pairs stand in many places and the first one can be anywhere.
const fewBytes = region(fc.array(fc.constantFrom(0x61, 0x62, 0x41, 0x00, 0xff), { maxLength: 400, size: "max" }).map((a) => Uint8Array.from(a)));

// The reference `find`: the least j in from..end-1 with a at j and b at j + d, else -1.
function firstPair(m: Uint8Array, from: number, end: number, a: number, b: number, d: number): number {
  for (let j = from; j < end; j++) if (m[j] === a && m[j + d] === b) return j;
  return -1;
}

describe("a region's SIMD loops", () => {
  it("has the SIMD module here (so the tests below compare it, not only the JS loops)", () => {
    expect(compileWasm(REGION_WASM)).not.toBeNull();
  });

  it("folds every byte value as the reference does, across the 16-byte lanes and the tail", () => {
    const all = Buffer.from(Array.from({ length: 256 * 3 + 7 }, (_, i) => i & 0xff));
    expect(new SimdRegion().load(all, true)).toEqual(lowered(all));
    expect(new SimdRegion(false).load(all, true)).toEqual(lowered(all));
    expect(new SimdRegion().load(all, false)).toEqual(all);
    const out = Buffer.alloc(all.length);
    foldAsciiJs(all, out);
    expect(out).toEqual(lowered(all));
  });

  it("loads any sequence of regions as they are or folded, SIMD and JS alike, leaving each region as it was", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(anyBytes, fc.boolean()), { minLength: 1, maxLength: 8 }), (regions) => {
        const simd = new SimdRegion();
        const js = new SimdRegion(false);
        for (const [src, fold] of regions) {
          const before = Buffer.from(src);
          const want = fold ? lowered(before) : before;
          // Buffer#equals, fast-check shows the region that failed (an element-wise toEqual took 20 s here).
          expect(simd.load(src, fold).equals(want)).toBe(true);
          expect(js.load(src, fold).equals(want)).toBe(true);
          expect(src.equals(before)).toBe(true);
        }
      }),
      { numRuns: 200 },
    );
  });

  it("finds the first position of a pair of bytes as the reference does, from any start to any end", () => {
    fc.assert(
      fc.property(
        fewBytes,
        fc.constantFrom(0x61, 0x62, 0x41),
        fc.constantFrom(0x61, 0x62, 0x00),
        fc.integer({ min: 1, max: 40 }),
        fc.nat(),
        fc.nat(),
        (src, a, b, d, s1, s2) => {
          const limit = Math.max(0, src.length - d);
          const [from, end] = [s1 % (limit + 1), s2 % (limit + 1)].sort((x, y) => x - y) as [number, number];
          const want = firstPair(src, from, end, a, b, d);
          for (const finder of [new SimdRegion(), new SimdRegion(false)]) {
            finder.load(src, false);
            expect(finder.find(from, end, a, b, d)).toBe(want);
          }
        },
      ),
      { numRuns: 1000 },
    );
  });

  it("grows its memory for a region past it and answers over all of it", () => {
    const simd = new SimdRegion();
    simd.load(Buffer.from("SMALL"), true);
    const big = Buffer.alloc(5 * 64 * 1024 + 3, "AbZ@[`z{");
    const folded = simd.load(big, true);
    expect(folded.length).toBe(big.length);
    expect(folded.equals(lowered(big))).toBe(true);
    big[big.length - 2] = 0x21;
    simd.load(big, false);
    expect(simd.find(0, big.length - 1, 0x21, big[big.length - 1] as number, 1)).toBe(big.length - 2);
    expect(simd.load(Buffer.from("Tail"), true)).toEqual(Buffer.from("tail"));
  });

  it("leaves a region past its memory (1 MiB) to the JS loops, and takes the next one that fits in again", () => {
    for (const [simd, inMemory] of [
      [new SimdRegion(), true],
      [new SimdRegion(false), false],
    ] as const) {
      const long = Buffer.alloc(3 * 1024 * 1024 + 5, "xY");
      long.write("Q!", long.length - 3);
      expect(simd.load(long, true).equals(lowered(long))).toBe(true);
      expect(simd.simd).toBe(false);
      expect(simd.find(0, long.length - 1, 0x71, 0x21, 1)).toBe(long.length - 3);
      expect(simd.load(long, false)).toBe(long);
      const short = Buffer.from("abcQ!de".repeat(5));
      expect(simd.load(short, false)).toEqual(short);
      expect(simd.simd).toBe(inMemory);
      expect(simd.find(0, short.length - 1, 0x51, 0x21, 1)).toBe(3);
    }
  });

  it("keeps the searches of one thread apart though they share its region", () => {
    // Two case-insensitive searches, each region folded into the thread's one memory, their calls interleaved
    // as a worker's scans of two files are: the first must find its second line in its own region, not the other's.
    const a = new LineFinder(compileQuery({ query: "Xy", caseSensitive: false }));
    const b = new LineFinder(compileQuery({ query: "aB", caseSensitive: false }));
    a.reset(Buffer.from("xY\nnone\nXY\n"));
    expect(a.next(0)).toBe(0);
    b.reset(Buffer.from("ab\nAB\nzz\n"));
    expect(b.next(0)).toBe(0);
    expect(a.next(a.end + 1)).toBe(8);
    expect(b.next(b.end + 1)).toBe(3);
    expect(a.next(a.end + 1)).toBe(-1);
  });

  it("counts a literal whose rarest byte is common, then whose pair is too, as a plain search does", () => {
    // An alphabet where "z" (the queries' rarest byte) is common, and "z?z" pairs stand every few bytes: the search
    // goes from its rare byte to the pair (literal-bytes.ts pairIndexOf), then to Buffer#indexOf, within one region.
    const plainCount = (line: string, q: string): number => {
      let n = 0;
      for (let i = line.indexOf(q); i >= 0; i = line.indexOf(q, i + q.length)) n++;
      return n;
    };
    const text = fc.array(fc.constantFrom("zbz", "zb", "zaz", "ZAz", "a", " ", "\n", "zbz".repeat(30)), { maxLength: 200, size: "max" });
    fc.assert(
      fc.property(fc.constantFrom("zaz", "zbzb", "zaza"), fc.boolean(), text, (q, caseSensitive, pieces) => {
        const bytes = Buffer.from(pieces.join("").slice(0, 8000));
        const lines = bytes.toString("latin1").split("\n");
        const counts = lines.map((l) => plainCount(caseSensitive ? l : l.toLowerCase(), q));
        const whole = countWholeLines(new LineFinder(compileQuery({ query: q, caseSensitive })), bytes, true);
        expect(whole).toEqual({ lines: counts.filter((n) => n > 0).length, occurrences: counts.reduce((a, b) => a + b, 0) });
      }),
      { numRuns: 500 },
    );
  });
});
