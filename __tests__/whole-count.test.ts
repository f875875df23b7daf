// The synchronous small-file count of the scan workers (SPEC §10, §16): for any small file and any
// literal or regex, countWholeLines gives the matching lines and occurrences the streaming scan
// (scanFile, count mode) gives, and -1 lines for what scanFile calls binary.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { escapeControls } from "../src/kernel/escape.js";
import { scanFile, type ReadAt } from "../src/grep/file-scan.js";
import { LineFinder } from "../src/grep/line-finder.js";
import { compileQuery } from "../src/grep/query.js";
import { countWholeLines } from "../src/grep/whole-count.js";

const pieces = ["ab", "AB", "aB", "x", "\n", "\r\n", "\r", "\0", "é", "É", " ", "abab"];
const fileBytes = fc.array(fc.constantFrom(...pieces), { maxLength: 40 }).map((p) => Buffer.from(p.join("")));
const specs = fc.record({
  query: fc.constantFrom("ab", "AB", "é", "b\r", "a b", "a+b", "^a", "(?:x|ab)"),
  regex: fc.boolean(),
  caseSensitive: fc.boolean(),
});

const reader =
  (bytes: Buffer): ReadAt =>
  (buf, offset, length, position) =>
    bytes.copy(buf, offset, Math.min(position, bytes.length), Math.min(position + length, bytes.length));

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
        const streamed = await scanFile(reader(bytes), query, req, { chunkSize: 16 });
        const whole = countWholeLines(new LineFinder(query), bytes, true);
        if (streamed.binary) expect(whole.lines).toBe(-1);
        else expect(whole).toEqual({ lines: streamed.matchingLines, occurrences: streamed.occurrences });
      }),
      { numRuns: 500 },
    );
  });

  it("refuses a file as long as the binary probe, which is streamed instead", () => {
    const finder = new LineFinder(compileQuery({ query: "a" }));
    expect(() => countWholeLines(finder, Buffer.alloc(8192, "a"))).toThrow(/shorter than 8192 bytes; got 8192/);
    expect(countWholeLines(finder, Buffer.alloc(8191, "a"))).toEqual({ lines: 1, occurrences: 0 });
  });
});
