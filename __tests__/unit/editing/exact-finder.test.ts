/**
 * The exact matcher of an edit's old texts (editing/exact.ts) against a plain search: for any document cut
 * into blocks of any sizes (seams anywhere), any patterns (a few each by Buffer#indexOf, many by the rolling
 * hash) and any start, every occurrence is counted, overlapping ones too, and the first ones are kept in order.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
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
        fc.oneof(fc.array(patternArb, { minLength: 1, maxLength: 10 }), manyLongArb),
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
});
