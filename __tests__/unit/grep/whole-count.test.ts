// The synchronous small-file count of the scan workers (SPEC §10, §16): for any small file and any
// literal or regex, countWholeLines gives the matching lines and occurrences the streaming scan
// (scanFile, count mode) gives, and -1 lines for what scanFile calls binary.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { escapeControls } from "../../../src/kernel/escape.js";
import { memoryReader, scanFile } from "../../../src/grep/file-scan.js";
import { LineFinder } from "../../../src/grep/line-finder.js";
import { compileQuery } from "../../../src/grep/query.js";
import { countWholeLines } from "../../../src/grep/whole-count.js";

const pieces = ["ab", "AB", "aB", "x", "\n", "\r\n", "\r", "\0", "é", "É", " ", "abab"];
const fileBytes = fc.array(fc.constantFrom(...pieces), { maxLength: 40 }).map((p) => Buffer.from(p.join("")));
const specs = fc.record({
  query: fc.constantFrom("ab", "AB", "é", "b\r", "a b", "a+b", "^a", "(?:x|ab)"),
  regex: fc.boolean(),
  caseSensitive: fc.boolean(),
});

describe("countWholeLines", () => {
  it("counts what scanFile counts, occurrences included, for any small file", async () => {
    await fc.assert(
      fc.asyncProperty(specs, fileBytes, async (spec, bytes) => {
        const query = compileQuery(spec);
        const req = {
          mode: "count" as const,
          contextLines: 0,
          skip: 0,
          room: 0,
          displayPath: escapeControls("f"),
          blankFirst: false,
          forceFirst: false,
          occurrences: true,
        };
        const streamed = await scanFile(memoryReader(bytes), query, req, { chunkSize: 16 });
        const whole = countWholeLines(new LineFinder(query), bytes, true);
        if (streamed.binary) expect(whole.lines).toBe(-1);
        else expect(whole).toEqual({ lines: streamed.matchingLines, occurrences: streamed.occurrences });
      }),
      { numRuns: 500 },
    );
  });

  it("counts a literal's lines and non-overlapping occurrences as a plain byte search does, in short lines and past 256 bytes", () => {
    // Lines past 256 bytes are searched by Buffer#indexOf, shorter ones byte by byte (literal-bytes.ts): both are met here.
    const linePieces = ["ab", "a", "b", "x", "\r", "x".repeat(300), "ab".repeat(40)];
    const lines = fc.array(
      fc.array(fc.constantFrom(...linePieces), { maxLength: 8 }).map((p) => p.join("")),
      { minLength: 1, maxLength: 8 },
    );
    const plainCount = (line: string, q: string): number => {
      let n = 0;
      for (let i = line.indexOf(q); i >= 0; i = line.indexOf(q, i + q.length)) n++;
      return n;
    };
    fc.assert(
      fc.property(fc.constantFrom("ab", "aba", "abab", "b", "bx", "xa", "ab".repeat(40)), lines, (q, ls) => {
        const bytes = Buffer.from(ls.join("\n"));
        // The line's text ends before a `\r` that ends the line, as grep's does.
        const counts = ls.map((l) => plainCount(l.endsWith("\r") ? l.slice(0, -1) : l, q));
        const whole = countWholeLines(new LineFinder(compileQuery({ query: q, caseSensitive: true })), bytes, true);
        expect(whole).toEqual({ lines: counts.filter((n) => n > 0).length, occurrences: counts.reduce((a, b) => a + b, 0) });
      }),
      { numRuns: 1000 },
    );
  });

  it("refuses a file as long as the binary probe, which is streamed instead", () => {
    const finder = new LineFinder(compileQuery({ query: "a" }));
    expect(() => countWholeLines(finder, Buffer.alloc(8192, "a"))).toThrow(/shorter than 8192 bytes; got 8192/);
    expect(countWholeLines(finder, Buffer.alloc(8191, "a"))).toEqual({ lines: 1, occurrences: 0 });
  });
});
