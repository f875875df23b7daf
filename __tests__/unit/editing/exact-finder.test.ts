/**
 * The exact matcher of an edit's old texts (editing/exact.ts) against a plain search: for any document cut
 * into blocks of any sizes (seams anywhere), any patterns (a few long ones by their byte pairs, short ones each
 * by Buffer#indexOf, many by the rolling hash) and any start, every occurrence is counted, overlapping ones too,
 * and the first ones are kept in order.
 */
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { ExactFinder, KEPT_OCCURRENCES } from "../../../src/editing/exact.js";
import type { NormBlock } from "../../../src/editing/source-index.js";

// The reference: every position at or after `from` where the pattern starts, overlapping ones included.
function occurrences(doc: Buffer, pattern: Buffer, from: number): number[] {
  const out: number[] = [];
  for (let at = doc.indexOf(pattern, from); at !== -1; at = doc.indexOf(pattern, at + 1)) out.push(at);
  return out;
}

// Few distinct bytes, so that patterns occur, overlap and their pairs stand in many false places.
const alphabet = fc.constantFrom(..."aab\nxy".split(""));
const docArb = fc.array(fc.oneof(alphabet, fc.constantFrom("abab", "b".repeat(300), "ab\nab", "xaby")), { maxLength: 3000, size: "max" });
// Also patterns of one repeated byte, whose occurrences overlap at every position of a run.
const patternArb = fc.oneof(
  fc.array(fc.oneof(alphabet, fc.constantFrom("ab", "ba")), { minLength: 1, maxLength: 8 }).map((p) => p.join("")),
  fc.constantFrom("bbbb", "bbbbbbbbb", "abab", "b\nab"),
);

// A few patterns of eight bytes or more: the pair window finds them together (of few distinct pairs over text made of
// them, it gives way to indexOf part way).
const fewLongArb = fc.array(
  fc.oneof(
    fc.array(fc.oneof(alphabet, fc.constantFrom("ab", "ba", "bbbb", "xaby")), { minLength: 8, maxLength: 20 }).map((p) => p.join("")),
    fc.constantFrom("bbbbbbbb", "b".repeat(40), "abababab", "ab\nab\nab"),
  ),
  { minLength: 1, maxLength: 4 },
);

// Eight patterns of eight bytes or more at least: the rolling hash finds them together.
const manyLongArb = fc.array(
  fc.array(fc.oneof(alphabet, fc.constantFrom("ab", "ba", "bbbb")), { minLength: 8, maxLength: 14 }).map((p) => p.join("")),
  { minLength: 8, maxLength: 12 },
);

describe("ExactFinder", () => {
  it("counts and keeps every occurrence as a plain search does, whatever the blocks and the patterns", () => {
    fc.assert(
      fc.property(
        docArb,
        fc.oneof(fc.array(patternArb, { minLength: 1, maxLength: 10 }), fewLongArb, manyLongArb),
        fc.array(fc.integer({ min: 1, max: 9000 }), { minLength: 1, maxLength: 6 }),
        fc.nat(),
        (pieces, texts, cuts, fromSeed) => {
          const doc = Buffer.from(pieces.join(""));
          const patterns = texts.map((t) => Buffer.from(t));
          const from = fromSeed % (doc.length + 1);
          const finder = new ExactFinder(patterns, from);
          let start = 0;
          for (let k = 0; start < doc.length; k++) {
            const size = cuts[k % cuts.length] as number;
            const norm = doc.subarray(start, start + size);
            const block: NormBlock = { index: k, rawStart: start, normStart: start, lineStart: 0, norm, crlf: [] };
            finder.feed(block);
            start += norm.length;
          }
          patterns.forEach((p, i) => {
            const want = occurrences(doc, p, from);
            expect(finder.counts[i], `"${texts[i]}"`).toBe(want.length);
            expect(finder.found[i], `"${texts[i]}"`).toEqual(want.slice(0, KEPT_OCCURRENCES));
          });
        },
      ),
      { numRuns: 300 },
    );
  });

  it("finds a few long patterns by their byte pairs over varied text, and gives way to indexOf over text made of their pairs", () => {
    // Searches `doc` in 64 KiB blocks; each pattern's count and how often indexOf was asked for it.
    const run = (doc: Buffer, patterns: Buffer[]): { counts: number[]; indexOfs: number[] } => {
      const asked = vi.spyOn(Buffer.prototype, "indexOf");
      try {
        const finder = new ExactFinder(patterns, 0);
        for (let start = 0, k = 0; start < doc.length; start += 65536, k++) {
          const norm = doc.subarray(start, start + 65536);
          finder.feed({ index: k, rawStart: start, normStart: start, lineStart: 0, norm, crlf: [] });
        }
        return { counts: [...finder.counts], indexOfs: patterns.map((p) => asked.mock.calls.filter(([v]) => v === p).length) };
      } finally {
        asked.mockRestore();
      }
    };
    // xorshift32: text without a period, where a slice of 48 bytes or more occurs once.
    let seed = 7;
    const next = (): number => {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return seed >>> 0;
    };
    const varied = Buffer.from(Array.from({ length: 300_000 }, () => "abcdefghij klmnop\n"[next() % 18]).join(""));
    const long = [varied.subarray(100_000, 100_048), varied.subarray(250_000, 250_100)].map((p) => Buffer.from(p));
    const plain = long.map((p) => occurrences(varied, p, 0).length);
    expect(plain).toEqual([1, 1]);
    expect(run(varied, long)).toEqual({ counts: plain, indexOfs: [0, 0] });
    // Longer than the window's widest span (MAX_SPAN, 256 bytes): the window spans their first 256 bytes, and each is
    // compared whole, across the blocks' seams too.
    const longer = [varied.subarray(65_400, 65_700), varied.subarray(190_000, 190_600), varied.subarray(20_000, 20_300)].map((p) => Buffer.from(p));
    const twice = Buffer.concat([varied, longer[0] as Buffer, varied.subarray(0, 1000), longer[1] as Buffer]);
    const longerPlain = longer.map((p) => occurrences(twice, p, 0).length);
    expect(longerPlain).toEqual([2, 2, 1]);
    expect(run(twice, longer)).toEqual({ counts: longerPlain, indexOfs: [0, 0, 0] });
    // A run of one byte: every position starts an occurrence, and the window steps one byte at a time until it gives way.
    const run40 = Buffer.alloc(300_000, "b");
    const got = run(run40, [Buffer.alloc(40, "b")]);
    expect(got.counts).toEqual([300_000 - 39]);
    expect(got.indexOfs[0]).toBeGreaterThan(1000);
  });
});
