// search_file_contents' per-file scanner (SPEC §10, §16) against a simple reference
// scan: split the decoded text on \n, drop one \r before each \n, test each line.
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { memoryReader } from "../../support/grep-reference.js";
import { LARGE_KEPT, scanFile, type Scratch } from "../../../src/grep/file-scan.js";
import { BINARY_PROBE_BYTES } from "../../../src/kernel/binary.js";
import type { FileRequest } from "../../../src/grep/region-search.js";
import { clipLine, CLIP_MARK } from "../../../src/grep/format.js";
import { compileQuery, type QuerySpec } from "../../../src/grep/query.js";
import { requiredLiterals } from "../../../src/grep/required-literal.js";
import { escapeControls } from "../../../src/kernel/escape.js";

const escapeRegex = (s: string): string => s.replace(/[\\^$.*+?()[\]{}|/]/g, "\\$&");

interface RefLine {
  lineNo: number;
  text: string;
  match: boolean;
  occ: number;
}

function referenceLines(bytes: Buffer, spec: QuerySpec): RefLine[] {
  const parts = bytes.toString("utf8").split("\n");
  const re = new RegExp(spec.regex ? spec.query : escapeRegex(spec.query), spec.caseSensitive ? "" : "i");
  return parts.flatMap((raw, i) => {
    const last = i === parts.length - 1;
    if (last && raw === "") return [];
    const text = !last && raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    const m = re.exec(text);
    return [{ lineNo: i + 1, text, match: m !== null, occ: m?.index ?? 0 }];
  });
}

/** The reference's lines around each match (`ctx` either side, as grep -C), each as `render` makes it, `--` between groups that are not adjacent. */
function contextReference(lines: readonly RefLine[], ctx: number, render: (l: RefLine) => string): string[] {
  const want = new Set<number>();
  for (const l of lines) if (l.match) for (let k = l.lineNo - ctx; k <= l.lineNo + ctx; k++) want.add(k);
  const shown: string[] = [];
  let prev = 0;
  for (const l of lines) {
    if (!want.has(l.lineNo)) continue;
    if (shown.length > 0 && l.lineNo > prev + 1) shown.push("--");
    shown.push(render(l));
    prev = l.lineNo;
  }
  return shown;
}

const request = (over: Partial<FileRequest> = {}): FileRequest => ({
  mode: "lines",
  contextLines: 0,
  skip: 0,
  room: 1e9,
  displayPath: escapeControls("/f"),
  blankFirst: false,
  forceFirst: false,
  ...over,
});

const shownMatches = (text: string): string[] => text.split("\n").filter((l) => /^\d+:/.test(l));

const PIECES: Buffer[] = [
  "a",
  "ab",
  "b",
  "B",
  "A",
  "x",
  " ",
  "\n",
  "\n",
  "\r\n",
  "\r",
  "é",
  "É",
  "😀",
  "aé",
  "a".repeat(700),
  "b".repeat(30),
  "[Z",
  "{z",
  "@",
  "`",
  "Z".repeat(20),
].map((s) => Buffer.from(s, "utf8"));
PIECES.push(Buffer.from([0xff]), Buffer.from([0xc3]), Buffer.from([0xe2, 0x82]), Buffer.from([0xf0, 0x9f, 0x98]));

const fileArb = fc.array(fc.constantFrom(...PIECES), { maxLength: 120 }).map((ps) => Buffer.concat(ps));

const QUERIES: QuerySpec[] = [
  { query: "a" },
  { query: "ab", caseSensitive: true },
  { query: "b a" },
  { query: "é" },
  { query: "É", caseSensitive: true },
  { query: "A", caseSensitive: true },
  { query: "\r" },
  { query: "😀", caseSensitive: true },
  { query: "\ufffd", caseSensitive: true },
  // The bytes beside A-Z ('@' '[' '`' '{') are not folded: a case-insensitive search tells "[z" from "{z".
  { query: "[z" },
  { query: "@z" },
  { query: "a+b", regex: true },
  { query: "^a", regex: true },
  { query: "b$", regex: true },
  { query: "a.b", regex: true, caseSensitive: true },
  { query: "(?<=a)b", regex: true },
  { query: "a\\sb", regex: true },
  { query: "[^ab]", regex: true },
  { query: "^$", regex: true },
  { query: "x*", regex: true },
  { query: "\\bb", regex: true },
];

describe("scanFile against the reference scan", () => {
  it("finds exactly the reference's matching lines, numbers and clipped texts, at any chunk size", async () => {
    await fc.assert(
      fc.asyncProperty(fileArb, fc.constantFrom(...QUERIES), fc.constantFrom(16, 100, 4096, 65536), async (bytes, spec, chunkSize) => {
        const query = compileQuery(spec);
        const ref = referenceLines(bytes, spec).filter((l) => l.match);
        const scan = await scanFile(memoryReader(bytes), query, request(), { chunkSize });
        if (bytes.subarray(0, 8192).includes(0)) return;
        expect(scan.binary).toBe(false);
        expect(scan.matchingLines).toBe(ref.length);
        expect(shownMatches(scan.text)).toEqual(ref.map((l) => `${l.lineNo}:${clipLine(l.text, l.occ)}`));
        const counted = await scanFile(memoryReader(bytes), query, request({ mode: "count" }), { chunkSize });
        expect(counted.matchingLines).toBe(ref.length);
      }),
      { numRuns: 400 },
    );
  });

  it("shows context lines marked with '-' and separates groups that are not adjacent", async () => {
    await fc.assert(
      fc.asyncProperty(fileArb, fc.integer({ min: 0, max: 3 }), fc.constantFrom(16, 4096), async (bytes, ctx, chunkSize) => {
        const spec = { query: "b" };
        const lines = referenceLines(bytes, spec);
        const scan = await scanFile(memoryReader(bytes), compileQuery(spec), request({ contextLines: ctx }), { chunkSize });
        const shown = contextReference(lines, ctx, (l) => `${l.lineNo}${l.match ? ":" : "-"}${clipLine(l.text, l.match ? l.occ : 0)}`);
        const expected = shown.length === 0 ? [] : ["/f", ...shown];
        expect(scan.text).toBe(expected.map((l) => `${l}\n`).join(""));
      }),
      { numRuns: 300 },
    );
  });
});

describe("scanFile told the matching lines a count found (knownLines)", () => {
  it("shows, skips and stops exactly as the whole scan does, for any file, context, skip and room", async () => {
    await fc.assert(
      fc.asyncProperty(
        fileArb,
        fc.constantFrom(...QUERIES),
        fc.constantFrom(16, 100, 4096),
        fc.integer({ min: 0, max: 2 }),
        fc.integer({ min: 0, max: 3 }),
        fc.constantFrom(40, 200, 1e9),
        async (bytes, spec, chunkSize, contextLines, skip, room) => {
          const query = compileQuery(spec);
          const req = request({ contextLines, skip, room });
          const whole = await scanFile(memoryReader(bytes), query, req, { chunkSize });
          const known = await scanFile(memoryReader(bytes), query, { ...req, knownLines: whole.matchingLines }, { chunkSize });
          expect(known.binary).toBe(whole.binary);
          expect({ text: known.text, skipped: known.skipped, shown: known.shown, exhausted: known.exhausted }).toEqual({
            text: whole.text,
            skipped: whole.skipped,
            shown: whole.shown,
            exhausted: whole.exhausted,
          });
          expect(known.bytes).toBeLessThanOrEqual(whole.bytes);
        },
      ),
      { numRuns: 400 },
    );
  });

  it("reads no further than the region holding the last line the count found, or the one that fills the room", async () => {
    const tail = "no match here\n".repeat(10_000);
    const bytes = Buffer.from(`a needle\nanother needle\n${tail}`);
    const query = compileQuery({ query: "needle" });
    const whole = await scanFile(memoryReader(bytes), query, request(), { chunkSize: 4096 });
    expect(whole.bytes).toBe(bytes.length);
    const known = await scanFile(memoryReader(bytes), query, request({ knownLines: 2 }), { chunkSize: 4096 });
    expect(known.text).toBe(whole.text);
    expect(known.bytes).toBeLessThanOrEqual(2 * 4096);
    // One line shown and the room used up by the second: the rest is not read either.
    const full = await scanFile(memoryReader(bytes), query, request({ knownLines: 2, room: 20 }), { chunkSize: 4096 });
    expect(full.exhausted).toBe(true);
    expect(full.bytes).toBeLessThanOrEqual(2 * 4096);
  });

  it("shows the context owed after the last line the count found, from the regions after it", async () => {
    const query = compileQuery({ query: "needle" });
    // The match line ends at or just before a region's end, wherever the regions are cut: its context is in the next one.
    for (const boundary of [4096, 8192, 12288, 16384]) {
      for (const short of [0, 1, 2]) {
        const bytes = Buffer.from(`${"x".repeat(boundary - 8 - short)}\nneedle\nafter one\nafter two\n${"tail\n".repeat(5000)}`);
        const req = request({ contextLines: 2 });
        const whole = await scanFile(memoryReader(bytes), query, req, { chunkSize: 4096 });
        expect(whole.text).toContain("after two");
        const known = await scanFile(memoryReader(bytes), query, { ...req, knownLines: 1 }, { chunkSize: 4096 });
        expect(known.text, `${boundary} ${short}`).toBe(whole.text);
      }
    }
  });
});

describe("scanFile details", () => {
  it("numbers the matching lines right across long stretches of lines without a match, at any chunk size", async () => {
    const gap = (n: number, width: number): string => `${"-".repeat(width)}\n`.repeat(n);
    const bytes = Buffer.from(`hit 1\n${gap(700, 3)}hit 2\r\n${gap(5, 2000)}hit 3\n${gap(3000, 0)}x hit 4\n${gap(1, 5000)}hit 5`);
    const spec = { query: "hit" };
    const ref = referenceLines(bytes, spec).filter((l) => l.match);
    expect(ref).toHaveLength(5);
    for (const chunkSize of [100, 4096, 65536]) {
      const scan = await scanFile(memoryReader(bytes), compileQuery(spec), request(), { chunkSize });
      expect(shownMatches(scan.text), String(chunkSize)).toEqual(ref.map((l) => `${l.lineNo}:${clipLine(l.text, l.occ)}`));
    }
  });

  it("skips files with a NUL in the first 8 KiB or a UTF-16 BOM, and not a NUL after it", async () => {
    const q = compileQuery({ query: "a" });
    for (const bytes of [Buffer.from("a\0a\n"), Buffer.from([0xff, 0xfe, 0x61, 0]), Buffer.from([0xfe, 0xff, 0, 0x61])]) {
      expect((await scanFile(memoryReader(bytes), q, request())).binary).toBe(true);
    }
    const late = Buffer.concat([Buffer.alloc(8192, "x"), Buffer.from("\0\na\n")]);
    const scan = await scanFile(memoryReader(late), q, request());
    expect(scan).toMatchObject({ binary: false, matchingLines: 1 });
  });

  it("folds case only between A-Z and a-z, whatever the chunk's alignment", async () => {
    const bytes = Buffer.from(
      Array.from({ length: 255 }, (_, i) => i + 1)
        .filter((b) => b !== 10)
        .flatMap((b) => [b, 0x7a, 10]),
    );
    for (const chunkSize of [16, 17, 65536]) {
      for (const query of ["Az", "aZ"]) {
        const scan = await scanFile(memoryReader(bytes), compileQuery({ query }), request({ mode: "count" }), { chunkSize });
        expect(scan.matchingLines).toBe(2);
      }
    }
  });

  it("clips a long line around its first occurrence and marks both cuts", async () => {
    const line = `${"x".repeat(2000)}NEEDLE${"y".repeat(2000)}`;
    const scan = await scanFile(memoryReader(Buffer.from(`${line}\n`)), compileQuery({ query: "needle" }), request());
    const shown = shownMatches(scan.text)[0] ?? "";
    expect(shown.startsWith(`1:${CLIP_MARK}`)).toBe(true);
    expect(shown.endsWith(CLIP_MARK)).toBe(true);
    expect(shown).toContain("NEEDLE");
    expect(shown.length).toBeLessThanOrEqual(2 + 500 + 2 * CLIP_MARK.length);
  });

  it("finds a literal in a line longer than maxLineBytes, straddling a piece boundary, and counts the line once", async () => {
    for (const at of [0, 30, 63, 64, 65, 100, 190]) {
      const line = Buffer.alloc(200, "x");
      line.write("NEEDLE", at);
      const bytes = Buffer.concat([Buffer.from("a\n"), line, Buffer.from("\nNEEDLE\n"), line, Buffer.from("\n")]);
      const scan = await scanFile(memoryReader(bytes), compileQuery({ query: "NEEDLE", caseSensitive: true }), request({ mode: "count" }), {
        chunkSize: 16,
        maxLineBytes: 64,
      });
      expect(scan.matchingLines).toBe(3);
    }
  });

  it("skips `skip` matching lines, shows none before them as context, and stops whole when room runs out", async () => {
    const bytes = Buffer.from(Array.from({ length: 50 }, (_, i) => `line ${i + 1} ${i % 2 ? "hit" : ""}`).join("\n"));
    const q = compileQuery({ query: "hit" });
    const scan = await scanFile(memoryReader(bytes), q, request({ skip: 5, contextLines: 2, room: 60 }), { chunkSize: 16 });
    expect(scan).toMatchObject({ matchingLines: 25, skipped: 5, exhausted: true });
    expect(scan.text.split("\n")[0]).toBe("/f");
    expect(scan.text.split("\n")[1]).toBe("11-line 11 ");
    expect(shownMatches(scan.text)[0]).toBe("12:line 12 hit");
    expect(scan.text.length).toBeLessThanOrEqual(60);
    expect(shownMatches(scan.text).length).toBe(scan.shown);
  });

  it("stops when the signal is aborted", async () => {
    const bytes = Buffer.from("a\n".repeat(10_000));
    const ac = new AbortController();
    let calls = 0;
    const p = scanFile(memoryReader(bytes), compileQuery({ query: "a" }), request(), {
      chunkSize: 64,
      signal: ac.signal,
      onProgress: () => {
        if (++calls === 3) ac.abort(new Error("stop now"));
      },
    });
    await expect(p).rejects.toThrow("stop now");
    expect(calls).toBe(3);
  });
});

// SPEC §16: lines longer than the piece are one line; occurrences are counted as grep -o counts them.
const occurrencesIn = (text: string, spec: QuerySpec): number =>
  [...text.matchAll(new RegExp(spec.regex ? spec.query : escapeRegex(spec.query), spec.caseSensitive ? "g" : "gi"))].length;

const LONG_PIECES: Buffer[] = ["ab", "a", "b", "xx", "\n", "\r\n", "é", "ba", "NEEDLE", "needle", "x".repeat(40), "ab".repeat(25)].map((s) =>
  Buffer.from(s, "utf8"),
);
const longFileArb = fc.array(fc.constantFrom(...LONG_PIECES), { maxLength: 80 }).map((ps) => Buffer.concat(ps));
const LITERALS: QuerySpec[] = [
  { query: "ab", caseSensitive: true },
  { query: "aba" },
  { query: "NEEDLE" },
  { query: "é" },
  { query: "b\r" },
  { query: "xxxx" },
];

describe("lines longer than the piece, and occurrences (SPEC §16)", () => {
  it("a literal counts the reference's matching lines and occurrences whatever the piece size, in count and lines mode", async () => {
    await fc.assert(
      fc.asyncProperty(longFileArb, fc.constantFrom(...LITERALS), fc.constantFrom(16, 24, 64), async (bytes, spec, maxLineBytes) => {
        const ref = referenceLines(bytes, spec).filter((l) => l.match);
        const occurrences = ref.reduce((n, l) => n + occurrencesIn(l.text, spec), 0);
        const opts = { chunkSize: 16, maxLineBytes };
        const counted = await scanFile(memoryReader(bytes), compileQuery(spec), request({ mode: "count", occurrences: true }), opts);
        expect(counted).toMatchObject({ binary: false, matchingLines: ref.length, occurrences });
        const shown = await scanFile(memoryReader(bytes), compileQuery(spec), request(), opts);
        expect(shown.matchingLines).toBe(ref.length);
        expect(shownMatches(shown.text).map((l) => Number(l.split(":")[0]))).toEqual(ref.map((l) => l.lineNo));
      }),
      { numRuns: 400 },
    );
  });

  it("context around lines longer than the piece: each line numbered once, as the reference's, in order", async () => {
    await fc.assert(
      fc.asyncProperty(
        longFileArb,
        // A regex's matches here are shorter than its overlap (half the piece) from 64 bytes on.
        fc.oneof(
          fc.tuple(fc.constantFrom(...LITERALS), fc.constantFrom(16, 24, 64)),
          fc.tuple(
            fc.constantFrom<QuerySpec>({ query: "^b", regex: true }, { query: "a$", regex: true }, { query: "ab+a", regex: true }),
            fc.constantFrom(64, 100),
          ),
        ),
        fc.integer({ min: 1, max: 3 }),
        async (bytes, [spec, maxLineBytes], ctx) => {
          const expected = contextReference(referenceLines(bytes, spec), ctx, (l) => `${l.lineNo}${l.match ? ":" : "-"}`);
          const scan = await scanFile(memoryReader(bytes), compileQuery(spec), request({ contextLines: ctx }), { chunkSize: 16, maxLineBytes });
          const marks = scan.text
            .split("\n")
            .slice(1, -1)
            .map((l) => (l === "--" ? l : (/^\d+[:-]/.exec(l)?.[0] ?? l)));
          expect(marks).toEqual(expected);
          // Told the count (as a walk's lines scan is), the same text.
          const req = request({ contextLines: ctx, knownLines: scan.matchingLines });
          expect((await scanFile(memoryReader(bytes), compileQuery(spec), req, { chunkSize: 16, maxLineBytes })).text).toBe(scan.text);
        },
      ),
      { numRuns: 400 },
    );
  });

  it("an over-long line as context shows its start, not a later piece, and is not shown again after it was the match", async () => {
    const q = compileQuery({ query: "NEEDLE", caseSensitive: true });
    const opts = { chunkSize: 16, maxLineBytes: 64 };
    const long = `START${"x".repeat(300)}END`;
    const before = await scanFile(memoryReader(Buffer.from(`a\n${long}\nNEEDLE\nb\n`)), q, request({ contextLines: 1 }), opts);
    expect(before.text.split("\n").slice(1, 4)).toEqual([expect.stringMatching(/^2-START/), "3:NEEDLE", "4-b"]);
    const after = await scanFile(memoryReader(Buffer.from(`a\nNEEDLE\n${long}\nb\nc\n`)), q, request({ contextLines: 2 }), opts);
    expect(after.text.split("\n").slice(1, -1)).toEqual(["1-a", "2:NEEDLE", expect.stringMatching(/^3-START/), "4-b"]);
    // A line that begins as context after a match and matches in a later piece is shown once, as the match.
    const later = await scanFile(memoryReader(Buffer.from(`NEEDLE\n${long}NEEDLE\nc\n`)), q, request({ contextLines: 1 }), opts);
    expect(
      later.text
        .split("\n")
        .slice(1, -1)
        .map((l) => l.slice(0, 2)),
    ).toEqual(["1:", "2:", "3-"]);
    // Its text is a later piece's, marked as cut at its start.
    expect(later.text.split("\n")[2]).toMatch(new RegExp(`^2:${escapeRegex(CLIP_MARK)}x+ENDNEEDLE$`));
    // One that ends the file without a line break is shown as context all the same.
    const last = await scanFile(memoryReader(Buffer.from(`NEEDLE\n${long}`)), q, request({ contextLines: 1 }), opts);
    expect(last.text.split("\n").slice(1, -1)).toEqual(["1:NEEDLE", expect.stringMatching(/^2-START/)]);
    const itself = await scanFile(memoryReader(Buffer.from(`a\n${long}NEEDLE${"y".repeat(300)}\nb\nc\nd\n`)), q, request({ contextLines: 2 }), opts);
    expect(
      itself.text
        .split("\n")
        .slice(1, -1)
        .map((l) => l.slice(0, 2)),
    ).toEqual(["1-", "2:", "3-", "4-"]);
  });

  it("one line with matches in several pieces (and none in those between) is one matching line", async () => {
    const line = `NEEDLE${"x".repeat(300)}NEEDLE${"x".repeat(300)}NEEDLE`;
    const bytes = Buffer.from(`a\n${line}\nNEEDLE\n`);
    const q = compileQuery({ query: "NEEDLE", caseSensitive: true });
    for (const mode of ["count", "lines"] as const) {
      const scan = await scanFile(memoryReader(bytes), q, request({ mode, occurrences: true }), { chunkSize: 16, maxLineBytes: 64 });
      expect(scan.matchingLines).toBe(2);
      if (mode === "count") expect(scan.occurrences).toBe(4);
      else expect(shownMatches(scan.text).map((l) => l.split(":")[0])).toEqual(["2", "3"]);
    }
  });

  it("a regex searches lines longer than the piece: ^ only at a line's start, $ only at its end, lines and occurrences as the reference", async () => {
    const specs: QuerySpec[] = [
      { query: "^b", regex: true },
      { query: "a$", regex: true },
      { query: "^x", regex: true },
      { query: "x$", regex: true },
      { query: "ab+a", regex: true },
      { query: "x{20}", regex: true },
      { query: "\\bba", regex: true },
      { query: "(?<=x)ab", regex: true },
    ];
    await fc.assert(
      fc.asyncProperty(longFileArb, fc.constantFrom(...specs), fc.constantFrom(64, 100), async (bytes, spec, maxLineBytes) => {
        // Every match here is shorter than the overlap (half the piece), so every one is found whole.
        const ref = referenceLines(bytes, spec).filter((l) => l.match);
        const opts = { chunkSize: 16, maxLineBytes };
        const scan = await scanFile(memoryReader(bytes), compileQuery(spec), request({ mode: "count", occurrences: true }), opts);
        expect(scan).toMatchObject({ matchingLines: ref.length, occurrences: ref.reduce((n, l) => n + occurrencesIn(l.text, spec), 0) });
        const shown = await scanFile(memoryReader(bytes), compileQuery(spec), request(), opts);
        expect(shownMatches(shown.text).map((l) => Number(l.split(":")[0]))).toEqual(ref.map((l) => l.lineNo));
      }),
      { numRuns: 400 },
    );
  });

  it("a regex searches a line longer than 16 MiB, the default piece: anchors at its ends only, a match across the first cut found", async () => {
    const MiB = 1024 * 1024;
    // "mid" straddles the first 16 MiB piece's end; x runs fill the rest.
    const long = `b${"x".repeat(16 * MiB - 3)}mid${"x".repeat(MiB)}a`;
    const bytes = Buffer.from(`start\n${long}\nb tail a\n`, "latin1");
    const count = async (query: string) => {
      const scan = await scanFile(
        memoryReader(bytes),
        compileQuery({ query, regex: true, caseSensitive: true }),
        request({ mode: "count", occurrences: true }),
      );
      return [scan.matchingLines, scan.occurrences];
    };
    expect(await count("^bx")).toEqual([1, 1]);
    expect(await count("xa$")).toEqual([1, 1]);
    expect(await count("a$")).toEqual([2, 2]);
    expect(await count("^x|x$")).toEqual([0, 0]);
    expect(await count("xm[i]dx")).toEqual([1, 1]);
    const runs = Math.floor((16 * MiB - 3) / 1000) + Math.floor(MiB / 1000);
    expect(await count("x{1000}")).toEqual([1, runs]);
    const shown = await scanFile(memoryReader(bytes), compileQuery({ query: "m[i]d", regex: true }), request());
    expect(shownMatches(shown.text)).toEqual([`2:${clipLine(long, 16 * MiB - 2)}`]);
  });

  it("occurrences of any query equal the reference's (grep -o's count), regexes with a required literal included", async () => {
    const specs: QuerySpec[] = [
      ...QUERIES.filter((q) => !q.query.includes("\n")),
      { query: "ab+", regex: true, caseSensitive: true },
      { query: "b\\s*a", regex: true },
      { query: "(?:x|é)b", regex: true },
    ];
    await fc.assert(
      fc.asyncProperty(fileArb, fc.constantFrom(...specs), async (bytes, spec) => {
        if (bytes.subarray(0, 8192).includes(0)) return;
        const ref = referenceLines(bytes, spec).filter((l) => l.match);
        const scan = await scanFile(memoryReader(bytes), compileQuery(spec), request({ mode: "count", occurrences: true }), { chunkSize: 64 });
        expect([scan.matchingLines, scan.occurrences]).toEqual([ref.length, ref.reduce((n, l) => n + occurrencesIn(l.text, spec), 0)]);
      }),
      { numRuns: 400 },
    );
  });
});

describe("requiredLiterals", () => {
  it("gives runs every match must hold, and none past a top-level alternation", () => {
    const cases: [string, string[]][] = [
      [String.raw`function\s+[a-z]+Path\(`, ["function", "Path("]],
      ["ab+c", ["ab", "c"]],
      ["ab?c", ["a", "c"]],
      ["a{2}bcd", ["bcd"]],
      ["(foo|bar)baz", ["baz"]],
      ["foo|bar", []],
      ["import .* from", ["import ", " from"]],
      [String.raw`\bword\b`, ["word"]],
      [String.raw`a\.b`, ["a.b"]],
      ["[abc]def[^g]h", ["def", "h"]],
      ["café", ["caf"]],
      // An escape's operand is not plain text: \x41 is "A", \u0042 "B", \cA a control character, \1 a group's text.
      [String.raw`\x41BC`, ["BC"]],
      [String.raw`x\u0042yz`, ["x", "yz"]],
      [String.raw`\u{41}bc`, ["bc"]],
      [String.raw`\cAab`, ["ab"]],
      [String.raw`(a)\12xy`, ["xy"]],
      [String.raw`(?<n>a)\k<n>bc`, ["bc"]],
    ];
    for (const [source, runs] of cases) expect(requiredLiterals(source), source).toEqual(runs);
  });

  it("every match of a random expression holds each run (checked by the engine)", () => {
    const atom = fc.constantFrom("a", "b", "ab", "\\.", ".", "[ab]", "(a|b)", "\\s", "x", "\\x61", "\\u0062", "(a)\\1", "\\x2e");
    const quant = fc.constantFrom("", "", "?", "*", "+", "{2}");
    const source = fc
      .array(
        fc.tuple(atom, quant).map(([a, q]) => a + q),
        { minLength: 1, maxLength: 6 },
      )
      .map((p) => p.join(""));
    fc.assert(
      fc.property(source, fc.string({ unit: fc.constantFrom("a", "b", ".", " ", "x"), maxLength: 30 }), (src, text) => {
        const m = new RegExp(src).exec(text);
        if (m === null) return;
        for (const run of requiredLiterals(src)) expect(m[0], `${src} on ${text}`).toContain(run);
      }),
      { numRuns: 2000 },
    );
  });
});

describe("scans sharing their buffers (a scan worker's scratch)", () => {
  it("grows an over-long line into the large buffer an earlier one left, allocating nothing past the chunk, with the same results", async () => {
    const chunkSize = 4096;
    // Lines of 20,000 and 50,000 bytes, past the chunk: each doubled the buffer up to its length, in a new one each time.
    const files = [20_000, 50_000, 20_000].map((n, i) => Buffer.from(`short ${i}\n${"x".repeat(n / 2)}needle${"y".repeat(n / 2)}\nneedle end\n`));
    const query = compileQuery({ query: "ne+dle", regex: true });
    const fresh = await Promise.all(files.map((f) => scanFile(memoryReader(f), query, request(), { chunkSize })));
    const scratch: Scratch = { probe: Buffer.allocUnsafe(BINARY_PROBE_BYTES), chunk: Buffer.allocUnsafe(chunkSize) };
    const alloc = vi.spyOn(Buffer, "allocUnsafe");
    try {
      const shared = [];
      const largest: number[] = [];
      for (const f of files) {
        alloc.mockClear();
        shared.push(await scanFile(memoryReader(f), query, request(), { chunkSize, scratch }));
        largest.push(Math.max(0, ...alloc.mock.calls.map(([n]) => n)));
      }
      expect(shared).toEqual(fresh);
      // The first two grew (the second past what the first left); the third fit in what the second left.
      expect(largest[0]).toBeGreaterThan(chunkSize);
      expect(largest[1]).toBeGreaterThan(largest[0] as number);
      expect(largest[2]).toBeLessThanOrEqual(chunkSize);
      expect(scratch.large?.length).toBe(largest[1]);
    } finally {
      alloc.mockRestore();
    }
  });

  it("keeps no buffer past LARGE_KEPT: a longer line grows in buffers of its own, and the one kept stays for the next", async () => {
    const chunkSize = 64 * 1024;
    const long = Buffer.from(`${"x".repeat(LARGE_KEPT)}needle${"y".repeat(1000)}\nneedle\n`);
    const short = Buffer.from(`${"x".repeat(LARGE_KEPT / 2)}needle\n`);
    const query = compileQuery({ query: "ne+dle", regex: true });
    const scratch: Scratch = { probe: Buffer.allocUnsafe(BINARY_PROBE_BYTES), chunk: Buffer.allocUnsafe(chunkSize) };
    const counted = async (bytes: Buffer): Promise<number> =>
      (await scanFile(memoryReader(bytes), query, request({ mode: "count" }), { chunkSize, scratch })).matchingLines;
    expect(await counted(long)).toBe(2);
    expect(scratch.large?.length).toBe(LARGE_KEPT);
    expect(await counted(short)).toBe(1);
    expect(scratch.large?.length).toBe(LARGE_KEPT);
  });
});
