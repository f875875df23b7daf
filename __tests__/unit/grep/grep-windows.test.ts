// A regex run over windows of whole lines (line-finder.ts: each window viewed as one Latin-1 string
// or decoded whole, SPEC §10, §23) against the line-by-line definition: split on \n, drop one \r
// before each \n, decode, test each line alone. Windows as small as one byte and regions cut
// anywhere, so lines meet every window and region edge; anchors, \b, empty matches, lines past
// ASCII, CRLF, lone \r, U+2028 and invalid bytes included.
import fs from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { memoryReader, reference, request } from "../../support/grep-reference.js";
import { scanFile } from "../../../src/grep/file-scan.js";
import { clipLine } from "../../../src/grep/format.js";
import { LineFinder } from "../../../src/grep/line-finder.js";
import { lineStartSource, locatorSource } from "../../../src/grep/locator.js";
import { requiredSegment } from "../../../src/grep/required-segment.js";
import { compileQuery, type QuerySpec } from "../../../src/grep/query.js";
import { call, textOf } from "../../support/client.js";
import { describeEachStrategy, tempDir } from "../../support/fixtures.js";
import { inProcess } from "../../support/in-process.js";

// Every view strategy: ASCII-only expressions (the Latin-1 view alone), expressions past ASCII
// (wide lines alone, or decoded windows), anchors, \b, empty matches, ones that may cross a line
// feed in a window (and must not count), case-insensitive ones.
const QUERIES: QuerySpec[] = [
  { query: "[A-Z][a-z]+ [0-9]{2,3} [a-z]+[.,;]", regex: true, caseSensitive: true },
  { query: "[A-Z][a-z]+ [0-9]{2,3}", regex: true },
  { query: "[.]b|b[.]", regex: true },
  { query: "[^.]b", regex: true },
  { query: "^b", regex: true },
  { query: "b$", regex: true },
  { query: "^$", regex: true },
  { query: "$", regex: true },
  { query: "x*", regex: true },
  { query: "\\bab?\\b", regex: true, caseSensitive: true },
  { query: "a\\x0ab", regex: true },
  { query: "b\\s+a", regex: true },
  { query: "b[\\s.]a", regex: true },
  { query: "a.b", regex: true },
  // Past ASCII and context-free: a line's Latin-1 view holds more characters than its text (é is two), so a hit there proves nothing.
  { query: "a..b", regex: true },
  { query: "[^ab]{3}", regex: true },
  // Hits that start at a line's end (an empty match before its line feed), on lines past ASCII too.
  { query: ".?$", regex: true },
  { query: "é?$", regex: true },
  { query: "\\s$", regex: true },
  { query: "[^a]$", regex: true },
  { query: "é", regex: true },
  { query: "é$", regex: true },
  { query: "^é?$", regex: true },
  { query: "[éa]b", regex: true, caseSensitive: true },
  { query: "😀.", regex: true },
  { query: "(?<=a)b", regex: true },
  { query: "\\r", regex: true },
  // A required literal (one rare character, or a common run) looked for first, until it turns out too common in a region.
  { query: "[A-Z][a-z]+ [0-9]{2,3} [a-z]+\\.", regex: true, caseSensitive: true },
  { query: "b\\s*\\.", regex: true },
  { query: "\\.$", regex: true },
  { query: "(?<=a)\\.|(?<=a)\\.", regex: true },
  { query: "(?<=[ab])\\.", regex: true },
  { query: "é\\.?", regex: true },
  { query: "ab+", regex: true },
  { query: "\\.(?![\\s\\S])", regex: true },
  // Opening with a repeated character: candidate lines are found by a shorter locator, and tested whole.
  { query: "[a-z]+ [0-9]{2,3}", regex: true },
  { query: "\\w+\\s\\d", regex: true },
  { query: "a*b$", regex: true },
  { query: "x{2,}a", regex: true },
  { query: "[ab]+?\\.", regex: true },
  { query: ".+é", regex: true },
  { query: "\\s+$", regex: true },
  { query: "[^a]+b(?:a|x)", regex: true },
  { query: "a+b|x", regex: true },
  { query: "\\S{2,3}\\b", regex: true },
  // Anchored at line starts: found after a line feed, a window's first line always tested.
  { query: "^[a-z]+$", regex: true },
  { query: "^\\s*a", regex: true },
  { query: "^(?:a|Q)[a-z ]", regex: true, caseSensitive: true },
  { query: "^a|b$", regex: true },
  // Past ASCII, no required literal, a rare run of ASCII classes (digits) every match holds.
  { query: "\\S+ [0-9]{2}", regex: true },
  { query: ".[0-9]{2,3}$", regex: true },
  { query: "é [0-9]{2}", regex: true },
  { query: "[0-9]{2}\\s*\\S", regex: true },
];

const TEXT_PIECES = [
  "a",
  "ab",
  "b",
  "B",
  "x",
  " ",
  ".",
  ";",
  "é",
  "É",
  "😀",
  "Ab 12 cd.",
  "Cé 345 x,",
  "Qa 99",
  "\n",
  "\n",
  "\n",
  "\r\n",
  "\r",
  "\u2028",
  "a".repeat(40),
];
const pieces = fc
  .array(fc.oneof({ weight: 12, arbitrary: fc.constantFrom(...TEXT_PIECES) }, { weight: 1, arbitrary: fc.constant("\xff") }), { maxLength: 160 })
  .map((ps) => Buffer.concat(ps.map((p) => (p === "\xff" ? Buffer.from([0xff]) : Buffer.from(p, "utf8")))));

// Mostly ASCII lines, few past ASCII: below block mode's quarter, so the Latin-1 view runs and the lines past ASCII are tested alone.
const ASCII_PIECES = ["a", "ab", "b", "x", "xx", " ", ".", "Ab 12 cd.", "Qa 99", "\t"];
const WIDE_PIECES = ["é", "😀", "\u00a0", "\xff"];
const sparseLine = fc
  .tuple(fc.array(fc.constantFrom(...ASCII_PIECES), { maxLength: 6 }), fc.option(fc.constantFrom(...WIDE_PIECES), { freq: 6 }), fc.nat(6))
  .map(([ps, wide, at]) => (wide === null ? ps : [...ps.slice(0, at), wide, ...ps.slice(at)]));
const sparse = fc
  .array(fc.tuple(sparseLine, fc.constantFrom("\n", "\n", "\r\n")), { maxLength: 40 })
  .map((lines) =>
    Buffer.concat(lines.flatMap(([ps, eol]) => [...ps.map((p) => (p === "\xff" ? Buffer.from([0xff]) : Buffer.from(p, "utf8"))), Buffer.from(eol)])),
  );
const texts = fc.oneof(pieces, sparse);

/** The lines `finder` finds in `bytes` as one region: line number, text and first occurrence of each. */
function findAll(finder: LineFinder, bytes: Buffer): { lineNo: number; text: string; at: number }[] {
  finder.reset(bytes);
  const found: { lineNo: number; text: string; at: number }[] = [];
  for (let ls = finder.next(0); ls >= 0; ls = finder.end >= bytes.length ? -1 : finder.next(finder.end + 1)) {
    let lineNo = 1;
    for (let i = bytes.indexOf(10); i >= 0 && i < ls; i = bytes.indexOf(10, i + 1)) lineNo++;
    found.push({ lineNo, text: finder.lineText(), at: finder.occurrence() });
  }
  return found;
}

describe("a regex over windows of whole lines", () => {
  it("reads a class's contents as characters: [.,;] keeps an expression on the exact Latin-1 view", () => {
    // The strategy without a required literal (a view's; `\.` makes "." one).
    const strategy = (query: string) => compileQuery({ query, regex: true }).fallback;
    expect(strategy("[A-Z][a-z]+ [0-9]{4,5} [a-z]+[.,;]")).toBe("latin1");
    expect(strategy("[$^.]")).toBe("latin1");
    expect(strategy("[]a.]")).toBe("latin1+wide");
    expect(strategy("\\.[a]")).toBe("latin1");
    const contextFree = (query: string) => compileQuery({ query, regex: true }).contextFree;
    expect(["[^a]b", "[$]", "[\\b]x", "a(?:b)"].map(contextFree)).toEqual([true, true, true, true]);
    expect(["^a", "a$", "\\ba", "a\\B", "a(?=b)", "(?<!a)b"].map(contextFree)).toEqual([false, false, false, false, false, false]);
    for (const wide of ["a.b", "[^.]", "[\\s]", "\\S", "é", "[é]", "\\x41", "\\u0041", "(a)\\1", "[^]"]) expect(strategy(wide)).toBe("latin1+wide");
  });

  it("finds the definition's lines and first occurrences whatever the window size", () => {
    fc.assert(
      fc.property(fc.constantFrom(...QUERIES), texts, fc.integer({ min: 1, max: 48 }), (spec, bytes, viewBytes) => {
        const query = compileQuery(spec);
        const want = reference(bytes, spec).map(({ lineNo, text, at }) => ({ lineNo, text, at }));
        expect(findAll(new LineFinder(query, viewBytes), bytes)).toEqual(want);
      }),
      { numRuns: 1500 },
    );
  });

  it("does not take a Latin-1 hit on a line past ASCII for a match", () => {
    // One wide line in five: not block mode. In Latin-1, é is two characters, so "xé" has three and "aéb" two between a and b.
    const lines = Array.from({ length: 40 }, (_, i) => (i % 10 === 3 ? "xé" : i % 10 === 7 ? "aéb" : `plain ${i}`));
    const bytes = Buffer.from(`${lines.join("\n")}\n`, "utf8");
    for (const query of ["a..b", "[^ab ]{3}", "é?$", "a.b"]) {
      const spec = { query, regex: true };
      const want = reference(bytes, spec).map(({ lineNo, text, at }) => ({ lineNo, text, at }));
      for (const viewBytes of [7, 64, 65536])
        expect(findAll(new LineFinder(compileQuery(spec), viewBytes), bytes), `${query} ${viewBytes}`).toEqual(want);
    }
    expect(reference(bytes, { query: "a.b", regex: true }).length).toBe(4);
  });

  it("looks for a rare one-character literal first, and goes without it where it is common", () => {
    const q = compileQuery({ query: "\\s[0-9]{4}\\.", regex: true, caseSensitive: true });
    expect({ strategy: q.strategy, literal: q.bytes.toString(), fallback: q.fallback }).toEqual({
      strategy: "prefilter",
      literal: ".",
      fallback: "latin1+wide",
    });
    expect(compileQuery({ query: "\\s[a-z]{4}e", regex: true }).strategy).toBe("latin1+wide");
    expect(compileQuery({ query: "(?<=x)\\.", regex: true }).fallback).toBe("perLine");
    // A "." on every line: the region goes on without the literal, and finds what the definition finds.
    const lines = Array.from({ length: 300 }, (_, i) => (i % 3 === 0 ? `x ${1000 + i}. é` : i % 3 === 1 ? `a.b ${i}.` : `a.b ${i}`));
    const bytes = Buffer.from(`${lines.join("\n")}\n`, "utf8");
    // A lookahead past the line's end sees nothing in the line alone, and the next line in a view of several.
    for (const query of ["\\s[0-9]{4}\\.", "(?<=a)\\.", "é$|\\.b", "\\.(?![\\s\\S])"]) {
      const spec = { query, regex: true };
      const want = reference(bytes, spec).map(({ lineNo, text, at }) => ({ lineNo, text, at }));
      expect(want.length, query).toBeGreaterThan(50);
      for (const viewBytes of [5, 65536]) expect(findAll(new LineFinder(compileQuery(spec), viewBytes), bytes), query).toEqual(want);
    }
  });

  it("finds lines of an expression opening with a repeated character by the shorter one every match holds", () => {
    const cases: [string, string | undefined][] = [
      ["[a-z]+ [0-9]{4,5}", "[a-z] [0-9]{4,5}"],
      ["\\w+\\s\\d", "\\w\\s\\d"],
      ["a*?b", "b"],
      ["x{2,}a", "x{2}a"],
      ["x{2,5}a", "x{2}a"],
      ["[.,\\]]+b", "[.,\\]]b"],
      // JavaScript's [] is an empty class: here the + repeats "]".
      ["[]a]+b", undefined],
      ["x{3}a", undefined],
      // No variable run to shorten: an optional atom, and an exact count however it is spelled.
      ["a?b", undefined],
      ["a{0,1}b", undefined],
      ["x{2,2}a", undefined],
      ["a+", undefined],
      ["a+b|c", undefined],
      ["(a)+b", undefined],
      ["\\1+b", undefined],
      ["^a+b", undefined],
      ["é+b", undefined],
    ];
    for (const [source, locator] of cases) expect(locatorSource(source), source).toBe(locator);
    // Anchored at line starts: a line feed and the rest.
    expect(["^[a-z]+$", "^(?:a|b)c", "^a|b", "^", "a^"].map(lineStartSource)).toEqual(["\\n[a-z]+$", "\\n(?:a|b)c", undefined, undefined, undefined]);
    const q = compileQuery({ query: "[a-z]+ [0-9]{4,5}", regex: true });
    expect({ locator: q.chunkRe.source, located: q.located }).toEqual({ locator: "[a-z] [0-9]{4,5}", located: true });
    // One that would match an empty string (every line a candidate) is not used.
    expect(compileQuery({ query: "a*b?", regex: true }).chunkRe.source).toBe("a*b?");
  });

  it("looks first for a rare run of ASCII classes every match of an expression past ASCII holds", () => {
    const rank = (atom: RegExp) => (atom.test("e") ? 1 : atom.test("0") ? 38 : atom.test("E") ? 57 : 80);
    const cases: [string, string | undefined][] = [
      ["[A-Z]\\w+\\s[0-9]{4,5}", "[0-9][0-9][0-9][0-9]"],
      ["é [0-9]{2}x", " [0-9][0-9]x"],
      // Spelt out up to 16 repetitions (V8 skips through text faster by those), counted past them.
      ["é[0-9]{17}", "(?:[0-9]){17}"],
      ["é\\d{16}", "\\d".repeat(16)],
      ["\\d\\d.", "\\d\\d"],
      ["[^a]+[A-Z]{2,}", "[A-Z][A-Z]"],
      // A repeated atom ends a run and starts the next: "x12y" holds x[0-9]{2} and [0-9]{2}y, not x[0-9]{2}y.
      ["x[0-9]{2,}y\\s", "x[0-9][0-9]"],
      ["(?:\\d\\d)+\\s", undefined],
      ["\\d{3}é|x", undefined],
      ["\\x41\\d?\\s", undefined],
      ["[é0-9]\\s", undefined],
    ];
    for (const [source, segment] of cases) expect(requiredSegment(source, "", rank)?.source, source).toBe(segment);
    const q = compileQuery({ query: "[A-Z]\\w+\\s[0-9]{4,5}", regex: true, caseSensitive: true });
    expect({ strategy: q.strategy, segment: q.segmentRe?.source }).toEqual({ strategy: "segment", segment: "[0-9][0-9][0-9][0-9]" });
    // Digits on every line: the region goes on without the run, and finds what the definition finds.
    const lines = Array.from({ length: 300 }, (_, i) => (i % 4 === 0 ? `é ${100 + i}` : i % 4 === 1 ? `Ab\u00a0${1000 + i}` : `x ${i}`));
    const bytes = Buffer.from(`${lines.join("\n")}\n`, "utf8");
    for (const query of ["é [0-9]{2}", "[A-Z]\\w+\\s[0-9]{4,5}", "\\S [0-9]{2}$"]) {
      const spec = { query, regex: true, caseSensitive: true };
      const want = reference(bytes, spec).map(({ lineNo, text, at }) => ({ lineNo, text, at }));
      expect(want.length, query).toBeGreaterThan(40);
      for (const viewBytes of [5, 65536]) expect(findAll(new LineFinder(compileQuery(spec), viewBytes), bytes), query).toEqual(want);
    }
  });

  it("one finder reused from region to region forgets the last region's window", () => {
    const query = compileQuery({ query: "[A-Z][a-z]+ [0-9]{2,3}", regex: true, caseSensitive: true });
    const finder = new LineFinder(query, 8);
    const first = Buffer.from("xx\nAb 12\nyy\nzz\nCd 345\n");
    const second = Buffer.from("Ef 67\nnone\n");
    expect(findAll(finder, first).map((l) => l.lineNo)).toEqual([2, 5]);
    expect(findAll(finder, second).map((l) => l.lineNo)).toEqual([1]);
  });

  it("scans give the definition's lines, totals and occurrences, regions and windows cut anywhere", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...QUERIES),
        texts,
        fc.integer({ min: 16, max: 300 }),
        fc.integer({ min: 1, max: 100 }),
        async (spec, bytes, chunkSize, viewBytes) => {
          const query = compileQuery(spec);
          const ref = reference(bytes, spec);
          const opts = { chunkSize, viewBytes };
          const counted = await scanFile(memoryReader(bytes), query, request("count"), opts);
          expect({ lines: counted.matchingLines, occ: counted.occurrences }).toEqual({
            lines: ref.length,
            occ: ref.reduce((a, r) => a + r.occ, 0),
          });
          const shown = await scanFile(memoryReader(bytes), query, request("lines"), opts);
          const lines = shown.text.split("\n").filter((l) => /^\d+:/.test(l));
          expect(lines).toEqual(ref.map((r) => `${r.lineNo}:${clipLine(r.text, r.at)}`));
        },
      ),
      { numRuns: 500 },
    );
  });
});

describeEachStrategy("search_file_contents over a file of many windows", (_, runtime) => {
  it("counts and shows the definition's lines for a regex without a required literal", async () => {
    const tmp = await tempDir();
    const server = await inProcess([tmp.dir], { runtime });
    try {
      // About 230 KiB: several windows; one line in seven has a match, every third holds text past ASCII.
      const lines: string[] = [];
      for (let i = 0; i < 4000; i++) {
        const word = i % 3 === 0 ? "café" : "plain";
        lines.push(i % 7 === 0 ? `${word} Abc ${1000 + i} end. ${"x".repeat(i % 40)}` : `${word} abc ${i} end ${"y".repeat(i % 30)}`);
      }
      const file = path.join(tmp.dir, "big.txt");
      const bytes = Buffer.from(`${lines.join("\r\n")}\n`, "utf8");
      fs.writeFileSync(file, bytes);
      const noLiteral = { query: "[A-Z][a-z]+ [0-9]{4,5} [a-z]+[.,;]", regex: true, caseSensitive: true };
      expect(reference(bytes, noLiteral).length).toBe(572);
      const counted = textOf(await call(server.client, "search_file_contents", { path: file, ...noLiteral, outputMode: "count" }));
      expect(counted).toContain("Found 572 matching lines");
      const anchored = { query: "^café Abc 2\\d+ end\\.", regex: true };
      const want = reference(bytes, anchored).map((r) => r.lineNo);
      expect(want.length).toBeGreaterThan(10);
      const shown = textOf(await call(server.client, "search_file_contents", { path: file, ...anchored, outputMode: "lines" }));
      expect(
        shown
          .split("\n")
          .flatMap((l) => /^(\d+):/.exec(l)?.[1] ?? [])
          .map(Number),
      ).toEqual(want);
    } finally {
      await server.close();
      await tmp.remove();
    }
  });
});
