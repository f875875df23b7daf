// search_file_contents' per-file scanner (SPEC §10) against a simple reference
// scan: split the decoded text on \n, drop one \r before each \n, test each line.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { scanFile, type ReadAt } from "../src/grep/file-scan.js";
import type { FileRequest } from "../src/grep/region-search.js";
import { clipLine, CLIP_MARK } from "../src/grep/format.js";
import { compileQuery, type QuerySpec } from "../src/grep/query.js";
import { escapeControls } from "../src/escape.js";

const memoryReader =
  (bytes: Buffer): ReadAt =>
  (buf, offset, length, position) =>
    bytes.copy(buf, offset, Math.min(position, bytes.length), Math.min(position + length, bytes.length));

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

const PIECES: Buffer[] = ["a", "ab", "b", "B", "A", "x", " ", "\n", "\n", "\r\n", "\r", "é", "É", "😀", "aé", "a".repeat(700), "b".repeat(30)].map(
  (s) => Buffer.from(s, "utf8"),
);
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
  { query: "a\nb" },
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
        const want = new Set<number>();
        for (const l of lines) if (l.match) for (let k = l.lineNo - ctx; k <= l.lineNo + ctx; k++) want.add(k);
        const expected: string[] = [];
        let prev = 0;
        for (const l of lines) {
          if (!want.has(l.lineNo)) continue;
          if (expected.length === 0) expected.push("/f");
          else if (l.lineNo > prev + 1) expected.push("--");
          expected.push(`${l.lineNo}${l.match ? ":" : "-"}${clipLine(l.text, l.match ? l.occ : 0)}`);
          prev = l.lineNo;
        }
        expect(scan.text).toBe(expected.map((l) => `${l}\n`).join(""));
      }),
      { numRuns: 300 },
    );
  });
});

describe("scanFile details", () => {
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
