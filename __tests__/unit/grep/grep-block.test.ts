// A regex run over whole decoded regions with the multiline flag (line-finder.ts block mode, SPEC
// §10, §23) against the line-by-line definition: split on \n, drop one \r before each \n, decode,
// test each line alone. Lines cross region boundaries (small chunks), CRLF, lone \r, U+2028,
// empty lines and invalid bytes included; line numbers, shown text, matching lines and
// occurrences must be the same.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { memoryReader, reference, request } from "../../support/grep-reference.js";
import { scanFile } from "../../../src/grep/file-scan.js";
import { clipLine } from "../../../src/grep/format.js";
import { LineFinder } from "../../../src/grep/line-finder.js";
import { compileQuery, type QuerySpec } from "../../../src/grep/query.js";

// Expressions past ASCII that no match of can run across lines: the ones block mode takes.
const BLOCK_QUERIES: QuerySpec[] = [
  { query: "é", regex: true },
  { query: "[éa]b", regex: true },
  { query: "É+", regex: true, caseSensitive: true },
  { query: "^é", regex: true },
  { query: "é$", regex: true },
  { query: "^é?$", regex: true },
  { query: "\\bé?b\\b", regex: true },
  { query: "a.é", regex: true },
  { query: "é*", regex: true },
  { query: "[A-Z][a-zé]+ [0-9]{2,3}", regex: true, caseSensitive: true },
  { query: "(é|ab)+", regex: true },
  { query: "😀.", regex: true },
];

const TEXT_PIECES = ["a", "ab", "b", "B", "x", " ", "é", "É", "😀", "Ab 12", "Cé 345", "\n", "\n", "\n", "\r\n", "\r", "\u2028", "a".repeat(40)];
const pieces = (invalid: boolean): fc.Arbitrary<Buffer> =>
  fc
    .array(fc.oneof({ weight: 9, arbitrary: fc.constantFrom(...TEXT_PIECES) }, { weight: invalid ? 1 : 0, arbitrary: fc.constant("\xff") }), {
      maxLength: 150,
    })
    .map((ps) => Buffer.concat(ps.map((p) => (p === "\xff" ? Buffer.from([0xff]) : Buffer.from(p, "utf8")))));

describe("block mode (a regex over whole decoded regions)", () => {
  it("is the mode these expressions take", () => {
    for (const spec of BLOCK_QUERIES) {
      // (The strategy without a required run of digits, which one of them looks for first.)
      const q = compileQuery(spec);
      expect({ query: spec.query, strategy: q.fallback, blockSafe: q.blockSafe }).toEqual({
        query: spec.query,
        strategy: "latin1+wide",
        blockSafe: true,
      });
    }
    for (const source of ["a\\sb", "[^a]", "(?=é)", "\\Dé", "a\\x0ab"]) expect(compileQuery({ query: source, regex: true }).blockSafe).toBe(false);
  });

  it("finds the lines, line numbers and first occurrences the line-by-line definition finds", () => {
    fc.assert(
      fc.property(fc.constantFrom(...BLOCK_QUERIES), pieces(false), (spec, bytes) => {
        const finder = new LineFinder(compileQuery(spec));
        finder.reset(bytes);
        const found: { lineNo: number; text: string; at: number }[] = [];
        for (let ls = finder.next(0); ls >= 0; ls = finder.end >= bytes.length ? -1 : finder.next(finder.end + 1)) {
          let lineNo = 1;
          for (let i = bytes.indexOf(10); i >= 0 && i < ls; i = bytes.indexOf(10, i + 1)) lineNo++;
          found.push({ lineNo, text: finder.lineText(), at: finder.occurrence() });
        }
        const re = new RegExp(spec.query, spec.caseSensitive ? "" : "i");
        const want = reference(bytes, spec).map((r) => ({ lineNo: r.lineNo, text: r.text, at: re.exec(r.text)?.index ?? -1 }));
        expect(found).toEqual(want);
      }),
      { numRuns: 600 },
    );
  });

  it("scans give the definition's lines and totals, regions cut anywhere, invalid bytes included", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...BLOCK_QUERIES), pieces(true), fc.integer({ min: 16, max: 200 }), async (spec, bytes, chunkSize) => {
        const query = compileQuery(spec);
        const ref = reference(bytes, spec);
        const counted = await scanFile(memoryReader(bytes), query, request("count"), { chunkSize });
        expect({ lines: counted.matchingLines, occ: counted.occurrences }).toEqual({
          lines: ref.length,
          occ: ref.reduce((a, r) => a + r.occ, 0),
        });
        const shown = await scanFile(memoryReader(bytes), query, request("lines"), { chunkSize });
        const lines = shown.text.split("\n").filter((l) => /^\d+:/.test(l));
        const re = new RegExp(spec.query, spec.caseSensitive ? "" : "i");
        expect(lines).toEqual(ref.map((r) => `${r.lineNo}:${clipLine(r.text, re.exec(r.text)?.index ?? 0)}`));
      }),
      { numRuns: 400 },
    );
  });
});
