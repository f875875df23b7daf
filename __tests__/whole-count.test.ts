// The synchronous small-file path of search_file_contents (SPEC §10): for any small file, in count and
// files modes, ContentSearch.searchSmall records what the streaming scan (searchBytes) records, and
// returns no promise; lines mode and the regex worker keep the asynchronous scan.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { TextSink } from "../src/bounded.js";
import { compileQuery, ContentSearch, type OutputMode, type QuerySpec } from "../src/grep/index.js";
import { escapeControls } from "../src/escape.js";

const pieces = ["ab", "AB", "aB", "x", "\n", "\r\n", "\r", "\0", "é", "É", " ", "abab"];
const fileBytes = fc.array(fc.constantFrom(...pieces), { maxLength: 40 }).map((p) => Buffer.from(p.join("")));
const specs = fc.record({
  query: fc.constantFrom("ab", "AB", "é", "b\r", "a b"),
  regex: fc.constant(false),
  caseSensitive: fc.boolean(),
});

function searchOf(spec: QuerySpec, mode: OutputMode): { search: ContentSearch; sink: TextSink } {
  const sink = new TextSink(100_000);
  return { search: new ContentSearch({ query: compileQuery(spec), sink, mode }), sink };
}

describe("ContentSearch.searchSmall", () => {
  it("records the same totals and file lines as the streaming scan, synchronously", async () => {
    await fc.assert(
      fc.asyncProperty(specs, fc.array(fileBytes, { maxLength: 6 }), fc.constantFrom<OutputMode>("count", "files"), async (spec, files, mode) => {
        const sync = searchOf(spec, mode);
        const streamed = searchOf(spec, mode);
        for (const [i, bytes] of files.entries()) {
          const got = sync.search.searchSmall(bytes, escapeControls(`f${i}`));
          expect(got).not.toBeInstanceOf(Promise);
          expect(got).toEqual(await streamed.search.searchBytes(bytes, escapeControls(`f${i}`)));
        }
        expect(sync.search.finish()).toBe(streamed.search.finish());
        expect(sync.sink.render("")).toBe(streamed.sink.render(""));
      }),
      { numRuns: 300 },
    );
  });

  it("falls back to the asynchronous scan while lines are shown", async () => {
    const { search, sink } = searchOf({ query: "ab", regex: false, caseSensitive: true }, "lines");
    const got = search.searchSmall(Buffer.from("x\nab\n"), escapeControls("f"));
    expect(got).toBeInstanceOf(Promise);
    expect(await got).toEqual({ binary: false, matchingLines: 1, bytes: 5 });
    expect(sink.render("")).toContain("2:ab");
  });

  it("throws the signal's reason when cancelled", () => {
    const { search } = searchOf({ query: "ab", regex: false, caseSensitive: true }, "count");
    const ctl = new AbortController();
    ctl.abort(new Error("cancelled here"));
    expect(() => search.searchSmall(Buffer.from("ab\n"), escapeControls("f"), { signal: ctl.signal })).toThrow("cancelled here");
  });
});
