// search_file_contents' per-call accumulation (SPEC §10, §16): offset continuation
// yields every match exactly once at several caps, the same through batches as file
// by file; exact totals and occurrences against a naive scan, lines over the piece
// size and files changed between pages included; skip reasons in the summary; the
// invalid regexes; a tree search the same as file by file, with big files held a few batches at a time,
// under both platform strategies. Scans run on the calling thread (src/grep/scan-thread.ts);
// what needs the worker thread (the budget, cancellation) is in e2e/scan-worker.test.ts.
import fc from "fast-check";
import { readdirSync, readlinkSync, writeFileSync } from "node:fs";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { TextSink } from "../../../src/kernel/bounded.js";
import { BATCH_BIG_BYTES, MAX_PENDING } from "../../../src/grep/content-search.js";
import { CHECKED_FIRST, compileQuery, ContentSearch, type OutputMode, type QuerySpec } from "../../../src/grep/index.js";
import { escapeControls } from "../../../src/kernel/escape.js";
import { walkFiles } from "../../../src/walking/index.js";
import { describeEachStrategy, walkOptions, fileWriter, openedFile } from "../../support/fixtures.js";
import { ScanWorkers } from "../../../src/grep/index.js";
import { ScanPool } from "../../../src/grep/scan-pool.js";

// One shelf of idle scan workers for the searches of this file, as a runtime holds one.
const workers = new ScanWorkers();

let root: string;
beforeAll(async () => {
  root = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), "grep-search-")));
});
afterAll(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

const escapeRegex = (s: string): string => s.replace(/[\\^$.*+?()[\]{}|/]/g, "\\$&");

function referenceMatches(file: string, text: string, spec: QuerySpec): string[] {
  const re = new RegExp(spec.regex ? spec.query : escapeRegex(spec.query), spec.caseSensitive ? "" : "i");
  const parts = text.split("\n");
  return parts.flatMap((raw, i) => {
    const last = i === parts.length - 1;
    if (last && raw === "") return [];
    const line = !last && raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    return re.test(line) ? [`${file}#${i + 1}`] : [];
  });
}

interface PageResult {
  text: string;
  next: number | undefined;
  search: ContentSearch;
}

// A file opened as the walk hands them over: the search owns the descriptor and closes it.
const opened = openedFile;

async function runPage(
  files: string[],
  spec: QuerySpec,
  cap: number,
  offset: number,
  mode: OutputMode,
  contextLines = 0,
  batched = false,
  maxLineBytes?: number,
): Promise<PageResult> {
  const sink = new TextSink(cap);
  const search = new ContentSearch({
    workers,
    query: compileQuery(spec),
    sink,
    offset,
    mode,
    contextLines,
    summaryReserve: 250,
    chunkSize: 64,
    maxLineBytes,
    batchFds: 3,
  });
  try {
    for (const f of files) {
      if (batched) {
        await search.addFile(opened(f), escapeControls(f));
        continue;
      }
      const fh = await fs.open(f, "r");
      try {
        await search.searchFile(fh, escapeControls(f));
      } finally {
        await fh.close();
      }
    }
    await search.drain();
    search.finish();
  } finally {
    await search.close();
  }
  expect(sink.total).toBeLessThanOrEqual(cap);
  return { text: sink.render("narrow"), next: search.nextOffset(), search };
}

function matchesShown(text: string): string[] {
  let file = "";
  const out: string[] = [];
  for (const line of text.split("\n")) {
    if (line.startsWith("/")) file = line;
    const m = /^(\d+):/.exec(line);
    if (m) out.push(`${file}#${m[1]}`);
  }
  return out;
}

const lineArb = fc.array(fc.constantFrom("foo", "bar", "FOO", "x", " ", "é", "\r"), { maxLength: 12 }).map((ws) => ws.join(""));
const filesArb = fc.array(
  fc.array(lineArb, { maxLength: 30 }).map((ls) => ls.join("\n")),
  { minLength: 1, maxLength: 4 },
);

const writeFiles = fileWriter(() => root);

describe("offset continuation", () => {
  it("following nextOffset from 0 shows every matching line exactly once, at several caps", async () => {
    await fc.assert(
      fc.asyncProperty(
        filesArb,
        fc.constantFrom<QuerySpec>({ query: "foo" }, { query: "o+b", regex: true }, { query: "FOO", caseSensitive: true }),
        fc.constantFrom(300, 450, 900),
        fc.integer({ min: 0, max: 2 }),
        async (texts, spec, cap, ctx) => {
          const files = await writeFiles(texts);
          const expected = files.flatMap((f, i) => referenceMatches(f, texts[i] ?? "", spec));
          const seen: string[] = [];
          let offset: number | undefined = 0;
          for (let pages = 0; offset !== undefined; pages++) {
            expect(pages).toBeLessThanOrEqual(expected.length + 1);
            const page: PageResult = await runPage(files, spec, cap, offset, "lines", ctx);
            // Batches of files counted by the workers and merged in order give the very same page.
            const batched: PageResult = await runPage(files, spec, cap, offset, "lines", ctx, true);
            expect(batched.text).toBe(page.text);
            expect(batched.next).toBe(page.next);
            expect(page.search.totals.matchingLines).toBe(expected.length);
            seen.push(...matchesShown(page.text));
            offset = page.next;
          }
          expect(seen).toEqual(expected);
        },
      ),
      { numRuns: 25 },
    );
  });

  it("files mode pages through every matching file once, with its count", async () => {
    const texts = Array.from({ length: 30 }, (_, i) => (i % 3 === 0 ? "nothing\n" : `foo\n${"foo\n".repeat(i)}`));
    const files = await writeFiles(texts);
    const seen: string[] = [];
    let offset: number | undefined = 0;
    while (offset !== undefined) {
      const page: PageResult = await runPage(files, { query: "foo" }, 600, offset, "files", 0, true);
      seen.push(...page.text.split("\n").filter((l) => l.startsWith("/")));
      offset = page.next;
    }
    const expected = files.flatMap((f, i) => (i % 3 === 0 ? [] : [`${f}: ${i + 1} matching lines, ${i + 1} occurrences`]));
    expect(seen).toEqual(expected);
  });
});

describe("summary", () => {
  it("states exact totals, skips with their reasons and the parameter that includes ignored files", async () => {
    const files = await writeFiles(["foo\nfoo bar\n", "bar\n", "x\0foo\n"]);
    const sink = new TextSink(10_000);
    const search = new ContentSearch({ workers, query: compileQuery({ query: "foo" }), sink, mode: "count" });
    for (const f of files) {
      const fh = await fs.open(f, "r");
      await search.searchFile(fh, escapeControls(f)).finally(() => fh.close());
    }
    await search.close();
    search.skip("gitignored", 3);
    search.skip("outsideLink");
    const summary = search.finish();
    expect(summary).toContain("Found 2 matching lines (2 occurrences) in 1 file; searched 2 files.");
    expect(summary).toContain(
      "Not searched: 5 files (1 binary; 3 ignored by .gitignore or in .git, a directory counting once (pass respectGitignore: false to search them); 1 symlink leading outside",
    );
    expect(sink.render("x")).toBe(summary);
  });

  it("takes the lines a count job showed ahead where they fit whole, and scans a file alone only past the room or with lines to skip", async () => {
    // Three files with matches, one without; the middle one's lines are long, so a small page is cut in it.
    const texts = ["foo 1\nbar\nfoo 2\n", "bar\n", `${"foo long line\n".repeat(12)}`, "x\nfoo last\n"];
    const files = await writeFiles(texts);
    const alone = vi.spyOn(ScanPool.prototype, "show");
    const page = async (cap: number, offset: number): Promise<{ batched: PageResult; scans: number }> => {
      alone.mockClear();
      const batched = await runPage(files, { query: "foo" }, cap, offset, "lines", 1, true);
      const scans = alone.mock.calls.length;
      // The same page as file by file, where every file is scanned alone.
      const sequential = await runPage(files, { query: "foo" }, cap, offset, "lines", 1);
      expect(batched.text).toBe(sequential.text);
      expect(batched.next).toBe(sequential.next);
      return { batched, scans };
    };
    try {
      const whole = await page(2000, 0);
      expect(whole.scans).toBe(0);
      expect(matchesShown(whole.batched.text)).toHaveLength(15);
      // Cut in the third file: it is scanned alone for what fits (the first two merged as shown ahead).
      const cut = await page(450, 0);
      expect(cut.batched.next).toBeGreaterThan(2);
      expect(cut.batched.next).toBeLessThan(15);
      expect(cut.scans).toBe(1);
      // Lines to skip: the count jobs show nothing ahead, and each file with lines on this page is scanned alone.
      const later = await page(2000, 3);
      expect(matchesShown(later.batched.text)).toHaveLength(12);
      expect(later.scans).toBe(2);
    } finally {
      alone.mockRestore();
    }
  });

  it("says when an offset is past the last match", async () => {
    const files = await writeFiles(["foo\nfoo\n"]);
    const page = await runPage(files, { query: "foo" }, 1000, 5, "lines");
    expect(page.text).toContain("No matching lines after offset=5 (there are 2).");
    expect(page.next).toBeUndefined();
  });
});

describe("regex safety", () => {
  it("rejects an invalid regex quoting the engine's message", () => {
    expect(() => compileQuery({ query: "(a", regex: true })).toThrow(/regex: true\): Invalid regular expression: \/\(a\/i: Unterminated group/);
    expect(() => compileQuery({ query: "" })).toThrow("query must not be empty");
  });
});

// The naive reference: each file decoded whole, split on \n, a final \r dropped, matched and counted per line.
function naiveTotals(texts: string[], spec: QuerySpec) {
  const source = spec.regex ? spec.query : escapeRegex(spec.query);
  const flags = spec.caseSensitive ? "" : "i";
  const t = { lines: 0, occurrences: 0, files: 0, binary: 0 };
  for (const text of texts) {
    if (text.slice(0, 8192).includes("\0")) {
      t.binary++;
      continue;
    }
    const parts = text.split("\n");
    let lines = 0;
    parts.forEach((raw, i) => {
      if (i === parts.length - 1 && raw === "") return;
      const line = i < parts.length - 1 && raw.endsWith("\r") ? raw.slice(0, -1) : raw;
      if (!new RegExp(source, flags).test(line)) return;
      lines++;
      t.occurrences += [...line.matchAll(new RegExp(source, `g${flags}`))].length;
    });
    t.lines += lines;
    if (lines > 0) t.files++;
  }
  return t;
}

const longTextArb = fc
  .array(fc.constantFrom("foo", "bar", "FOO", "x", " ", "é", "\r", "\n", "\n", "o".repeat(30), "foobar".repeat(8), "\0"), { maxLength: 40 })
  .map((ws) => ws.join(""));

describe("totals against a naive scan (SPEC §16)", () => {
  it("count and files modes: matching lines, occurrences, files and skips, lines over the piece size included", async () => {
    const specs: QuerySpec[] = [
      { query: "foo" },
      { query: "FOO", caseSensitive: true },
      { query: "o+b", regex: true },
      { query: "fo{2}", regex: true, caseSensitive: true },
      { query: "^x", regex: true },
    ];
    await fc.assert(
      fc.asyncProperty(
        fc.array(longTextArb, { minLength: 1, maxLength: 6 }),
        fc.constantFrom(...specs),
        fc.constantFrom(16, 48, 100),
        async (short, spec, pieceArg) => {
          // Every other file past the binary probe's 8 KiB, so that it is read piece by piece.
          const texts = short.map((t, i) => (i % 2 === 0 ? `${"x\n".repeat(4100)}${t}` : t));
          const files = await writeFiles(texts);
          const page = await runPage(files, spec, 100_000, 0, "count", 0, true, pieceArg);
          const want = naiveTotals(texts, spec);
          const t = page.search.totals;
          // A line longer than the piece is searched in pieces, a regex's overlapping by half of one (SPEC §24).
          expect([t.matchingLines, t.occurrences, t.matchingFiles, t.skipped.binary]).toEqual([
            want.lines,
            want.occurrences,
            want.files,
            want.binary,
          ]);
        },
      ),
      { numRuns: 60 },
    );
  });

  it("each page's totals are exact for the files as they are when it runs, when files change between pages", async () => {
    const texts = Array.from({ length: 12 }, (_, i) => "foo\n".repeat(i + 1));
    const files = await writeFiles(texts);
    const first = await runPage(files, { query: "foo" }, 400, 0, "lines", 0, true);
    expect(first.next).toBeDefined();
    // Between the pages: one file grows, one loses its matches.
    writeFileSync(files[3] ?? "", "foo foo\n".repeat(40));
    writeFileSync(files[8] ?? "", "nothing\n");
    const changed = [...texts];
    changed[3] = "foo foo\n".repeat(40);
    changed[8] = "nothing\n";
    const second = await runPage(files, { query: "foo" }, 400, first.next ?? 0, "lines", 0, true);
    const want = naiveTotals(changed, { query: "foo" });
    expect([second.search.totals.matchingLines, second.search.totals.matchingFiles]).toEqual([want.lines, want.files]);
    const counted = await runPage(files, { query: "foo" }, 100_000, 0, "count", 0, true);
    expect(counted.search.totals.occurrences).toBe(want.occurrences);
  });
});

describeEachStrategy("a tree search through walkFiles", (strategy, runtime) => {
  // Descriptors of this process open on files under `dir` (worker threads hold descriptors of their own, so only these count).
  const openUnder = (dir: string): string[] =>
    readdirSync("/proc/self/fd").flatMap((fd) => {
      try {
        const target = readlinkSync(`/proc/self/fd/${fd}`);
        return target.startsWith(dir) ? [target] : [];
      } catch {
        return [];
      }
    });

  // Walks `dir` (with `unchecked`, the first `checkedFirst` files checked all the same) into `search`, telling `onFile`
  // each file's shown path first; then drains, finishes and closes it.
  async function searchTree(
    search: ContentSearch,
    dir: string,
    unchecked = false,
    onFile: (shown: string) => void = () => {},
    checkedFirst = 0,
  ): Promise<void> {
    try {
      await walkFiles(
        dir,
        { excludePatterns: [], respectGitignore: false, unchecked, checkedFirst },
        (file, shown) => {
          onFile(shown);
          return search.addFile(file, shown);
        },
        (reason, n) => search.skip(reason, n),
        walkOptions(runtime, [root]),
      );
      await search.drain();
      search.finish();
    } finally {
      await search.close();
    }
  }

  it("is cancelled mid-tree: the walk and the workers stop, and every descriptor is closed", async () => {
    const dir = await fs.mkdtemp(path.join(root, "cancel-"));
    for (let d = 0; d < 20; d++) {
      await fs.mkdir(path.join(dir, `d${d}`));
      for (let f = 0; f < 100; f++) writeFileSync(path.join(dir, `d${d}`, `f${f}`), `${"a".repeat(24)}\n`.repeat(30));
    }
    const ac = new AbortController();
    const search = new ContentSearch({
      workers,
      query: compileQuery({ query: "(a|a)*b", regex: true }),
      sink: new TextSink(10_000),
      mode: "count",
      signal: ac.signal,
      batchFds: 16,
    });
    let handed = 0;
    const walked = walkFiles(
      dir,
      { excludePatterns: [], respectGitignore: false },
      (file, shown) => {
        // Before the walk waits for its batches (3 of 16 files), which the costly regex holds up.
        if (++handed === 20) ac.abort(new Error("cancelled mid-tree"));
        return search.addFile(file, shown);
      },
      (reason, n) => search.skip(reason, n),
      walkOptions(runtime, [root], { signal: ac.signal }),
    ).then(() => search.drain());
    await expect(walked).rejects.toThrow("cancelled mid-tree");
    await search.close();
    expect(handed).toBeLessThan(2000);
    expect(openUnder(dir)).toEqual([]);
  });

  it("a file whose name is not valid UTF-8 is counted as such, not as unreadable; the others are searched", async (ctx) => {
    const dir = await fs.mkdtemp(path.join(root, "badname-"));
    writeFileSync(path.join(dir, "ok.txt"), "needle\n");
    try {
      // caf\xe9.txt: a Latin-1 name, which Node lists as "caf\uFFFD.txt" and cannot open by that string.
      writeFileSync(Buffer.concat([Buffer.from(`${dir}/caf`), Buffer.from([0xe9]), Buffer.from(".txt")]), "needle\n");
    } catch (error) {
      ctx.skip(`this file system refuses a name that is not valid UTF-8 (${(error as Error).message})`);
    }
    for (const unchecked of [false, true]) {
      const search = new ContentSearch({ workers, query: compileQuery({ query: "needle" }), sink: new TextSink(3000), mode: "count" });
      await searchTree(search, dir, unchecked);
      expect(search.totals).toMatchObject({ filesSearched: 1, matchingLines: 1 });
      expect(search.totals.skipped).toMatchObject({ badName: 1, unreadable: 0 });
      expect(search.soFar()).toContain("Not searched: 1 file (1 with a name that is not valid UTF-8, which this server cannot open");
    }
  });

  it("gives the same totals and text as file-by-file search, in walk order", async () => {
    const dir = await fs.mkdtemp(path.join(root, "tree-"));
    const texts: string[] = [];
    for (let d = 0; d < 5; d++) {
      await fs.mkdir(path.join(dir, `d${d}`), { recursive: true });
      for (let f = 0; f < 40; f++) {
        const text = `x\n${"foo bar\n".repeat((d * 40 + f) % 7)}${f % 13 === 0 ? "\0" : ""}`;
        texts.push(text);
        writeFileSync(path.join(dir, `d${d}`, `f${String(f).padStart(2, "0")}`), text);
      }
    }
    for (const mode of ["lines", "files", "count"] as const) {
      const sink = new TextSink(3000);
      const search = new ContentSearch({ workers, query: compileQuery({ query: "o b", regex: true }), sink, mode, batchFds: 7, summaryReserve: 250 });
      const order: string[] = [];
      await searchTree(search, dir, false, (shown) => order.push(shown));
      const sequential = await runPage(order, { query: "o b", regex: true }, 3000, 0, mode);
      expect(sink.render("narrow")).toBe(sequential.text);
      const want = naiveTotals(texts, { query: "o b", regex: true });
      expect(search.totals.matchingLines).toBe(want.lines);
    }
  });

  it.each([{ query: "needle" }, { query: "ne+dle", regex: true }])(
    "takes files unchecked, each name of a file, links inside not followed: the same text whether its first files are checked, or all of them (replace_in_files' walk) (%o)",
    async (spec) => {
      const dir = await fs.mkdtemp(path.join(root, "unchecked-"));
      await fs.mkdir(path.join(dir, "sub", "deeper"), { recursive: true });
      writeFileSync(path.join(dir, "a.txt"), "needle one\nhay\nneedle two\n");
      await fs.link(path.join(dir, "a.txt"), path.join(dir, "b-hard.txt"));
      writeFileSync(path.join(dir, "sub", "c.txt"), `${"needle\n".repeat(3)}${"hay\n".repeat(5000)}needle last\n`);
      writeFileSync(path.join(dir, "sub", "deeper", "d.bin"), "needle\0");
      await fs.symlink(path.join(dir, "sub", "c.txt"), path.join(dir, "sub", "deeper", "e-link"));
      await fs.symlink(path.join(dir, "a.txt"), path.join(dir, "0-link"));
      const run = async (mode: OutputMode, unchecked: boolean, checkedFirst = 0) => {
        const sink = new TextSink(3000);
        const search = new ContentSearch({ workers, query: compileQuery(spec), sink, mode, batchFds: 2, summaryReserve: 250 });
        await searchTree(search, dir, unchecked, undefined, checkedFirst);
        const { filesSearched, matchingLines, skipped } = search.totals;
        return { text: sink.render("narrow"), files: filesSearched, lines: matchingLines, inner: skipped.innerLink, binary: skipped.binary };
      };
      for (const mode of ["lines", "files", "count"] as const) {
        const unchecked = await run(mode, true);
        // The walk checks a.txt itself and hands its hard link over unchecked: the same.
        expect(await run(mode, true, 1)).toEqual(unchecked);
        // As grep -r: a.txt and its hard link b-hard.txt, and c.txt; the two links lead inside, counted; d.bin is binary.
        expect(unchecked).toMatchObject({ files: 3, lines: 8, inner: 2, binary: 1 });
        if (mode !== "count") expect(unchecked.text).toContain("b-hard.txt");
        // A checked walk (replace_in_files') takes the same names.
        expect(await run(mode, false)).toEqual(unchecked);
      }
    },
  );

  it("holds big files open a few batches at a time: a batch is sent at BATCH_BIG_BYTES, the walk waits past MAX_PENDING", async () => {
    const dir = await fs.mkdtemp(path.join(root, "tree-"));
    // 40 files of a quarter of the byte limit: 10 times the limit in all, far fewer files than a batch's descriptors.
    const size = BATCH_BIG_BYTES / 4;
    for (let f = 0; f < 40; f++)
      writeFileSync(path.join(dir, `f${String(f).padStart(2, "0")}`), Buffer.alloc(size, f % 4 === 0 ? "needle\n" : "hay\n"));
    const search = new ContentSearch({ workers, query: compileQuery({ query: "needle" }), sink: new TextSink(10_000), mode: "count" });
    let mostOpen = 0;
    await searchTree(search, dir, false, () => {
      mostOpen = Math.max(mostOpen, openUnder(dir).length);
    });
    // The batch being filled and at most MAX_PENDING sent ones, each of 4 files; the one being handed over.
    expect(mostOpen).toBeLessThanOrEqual((MAX_PENDING + 1) * 4 + 1);
    expect(search.totals.matchingLines).toBe(10 * Math.floor(size / "needle\n".length));
    expect(openUnder(dir)).toEqual([]);
  });

  // The files of each batch as it is sent (its array then moves to the worker), over a search of `dir` handed over as the
  // tool hands them (unchecked after the first CHECKED_FIRST), or all unchecked.
  async function batchesOf(dir: string, checkedFirst = CHECKED_FIRST): Promise<{ batches: number[]; search: ContentSearch }> {
    const batches: number[] = [];
    const original = ScanPool.prototype.count;
    const count = vi.spyOn(ScanPool.prototype, "count").mockImplementation(function (this: ScanPool, ...args) {
      batches.push(args[1].length / 2);
      return original.apply(this, args);
    });
    const search = new ContentSearch({ workers, query: compileQuery({ query: "needle" }), sink: new TextSink(10_000), mode: "count" });
    try {
      await searchTree(search, dir, true, undefined, checkedFirst);
    } finally {
      count.mockRestore();
    }
    return { batches, search };
  }

  it("batches files handed over unchecked by their sizes from the first: the walk checks the first ones itself", async () => {
    const dir = await fs.mkdtemp(path.join(root, "sparse-"));
    // 200 sparse files of a quarter of the byte limit each (binary: a probe each, nothing on disk).
    for (let f = 0; f < 200; f++) {
      const file = path.join(dir, `f${String(f).padStart(3, "0")}`);
      await fs.writeFile(file, "");
      await fs.truncate(file, BATCH_BIG_BYTES / 4);
    }
    const { batches, search } = await batchesOf(dir);
    expect(batches.reduce((a, b) => a + b, 0)).toBe(200);
    expect(search.totals.skippedFiles).toBe(200);
    // Four such files make a batch's bytes, before any worker has reported a size.
    expect(batches).toEqual(Array(50).fill(4));
    // All unchecked, a guess cut the first batch at 64 where procfd hands them over unchecked (portable checks each).
    const guessed = await batchesOf(dir, 0);
    expect(guessed.batches[0]).toBe(strategy === "portable" ? 4 : 64);
  });

  it("sends a tree of 400 small files in two batches, as their sizes make them, not in batches of a guess", async () => {
    const dir = await fs.mkdtemp(path.join(root, "small-"));
    for (let f = 0; f < 400; f++) writeFileSync(path.join(dir, `f${String(f).padStart(3, "0")}`), f % 100 === 0 ? "a needle\n" : "hay\n");
    const { batches, search } = await batchesOf(dir);
    // 256 descriptors make a batch; a guess of a 64th of a batch's bytes a file sent them 64 at a time.
    expect(batches).toEqual([256, 144]);
    expect(search.totals.matchingLines).toBe(4);
    // All unchecked, the first batch was cut by the guess where procfd hands them over unchecked.
    expect((await batchesOf(dir, 0)).batches[0]).toBe(strategy === "portable" ? 256 : 64);
  });
});
