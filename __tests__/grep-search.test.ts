// search_file_contents' per-call accumulation (SPEC §10): offset continuation
// yields every match exactly once at several caps, exact totals and skip
// reasons in the summary, the regex watchdog, invalid regexes and abort.
// Regex scans run in the built worker (dist/grep/regex-worker.js): build first.
import fc from "fast-check";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TextSink } from "../src/bounded.js";
import { compileQuery, ContentSearch, RegexTooCostlyError, type OutputMode, type QuerySpec } from "../src/grep/index.js";
import { escapeControls } from "../src/escape.js";

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

async function runPage(files: string[], spec: QuerySpec, cap: number, offset: number, mode: OutputMode, contextLines = 0): Promise<PageResult> {
  const sink = new TextSink(cap);
  const search = new ContentSearch({ query: compileQuery(spec), sink, offset, mode, contextLines, summaryReserve: 250, chunkSize: 64 });
  try {
    for (const f of files) {
      const fh = await fs.open(f, "r");
      try {
        await search.searchFile(fh, escapeControls(f));
      } finally {
        await fh.close();
      }
    }
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

let dirCount = 0;
async function writeFiles(texts: string[]): Promise<string[]> {
  const dir = path.join(root, `d${dirCount++}`);
  await fs.mkdir(dir);
  return Promise.all(
    texts.map(async (t, i) => {
      const f = path.join(dir, `f${i}.txt`);
      await fs.writeFile(f, t);
      return f;
    }),
  );
}

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
      const page: PageResult = await runPage(files, { query: "foo" }, 600, offset, "files");
      seen.push(...page.text.split("\n").filter((l) => l.startsWith("/")));
      offset = page.next;
    }
    const expected = files.flatMap((f, i) => (i % 3 === 0 ? [] : [`${f}: ${i + 1} matching lines`]));
    expect(seen).toEqual(expected);
  });
});

describe("summary", () => {
  it("states exact totals, skips with their reasons and the parameter that includes ignored files", async () => {
    const files = await writeFiles(["foo\nfoo bar\n", "bar\n", "x\0foo\n"]);
    const sink = new TextSink(10_000);
    const search = new ContentSearch({ query: compileQuery({ query: "foo" }), sink, mode: "count" });
    for (const f of files) {
      const fh = await fs.open(f, "r");
      await search.searchFile(fh, escapeControls(f)).finally(() => fh.close());
    }
    search.skip("gitignored", 3);
    search.skip("outsideLink");
    const summary = search.finish();
    expect(summary).toContain("Found 2 matching lines in 1 file; searched 2 files.");
    expect(summary).toContain(
      "Not searched: 5 files (1 binary; 3 ignored by .gitignore or in .git, a directory counting once (pass respectGitignore: false to search them); 1 symlink leading outside",
    );
    expect(sink.render("x")).toBe(summary);
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

  it("a catastrophic regex ends in a 'too costly' error or correct results, while other tasks keep running", async () => {
    const files = await writeFiles([`ok aaa\n${"a".repeat(100_000)}b\naa\n`]);
    const sink = new TextSink(10_000);
    const search = new ContentSearch({ query: compileQuery({ query: "(a+)+$", regex: true }), sink, deadlineMs: 300 });
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 5);
    const fh = await fs.open(files[0] ?? "", "r");
    try {
      const outcome = await search.searchFile(fh, escapeControls(files[0] ?? "")).then(
        (counts) => ({ counts }),
        (err: unknown) => ({ err }),
      );
      if ("err" in outcome) {
        expect(outcome.err).toBeInstanceOf(RegexTooCostlyError);
        expect(String(outcome.err)).toContain("too costly");
      } else expect(outcome.counts.matchingLines).toBe(2);
      expect(ticks).toBeGreaterThan(0);
    } finally {
      clearInterval(ticker);
      await fh.close();
      await search.close();
    }
  });

  it("an aborted regex search rejects with the signal's reason", async () => {
    const files = await writeFiles([`${"a".repeat(100_000)}b\n`]);
    const search = new ContentSearch({ query: compileQuery({ query: "(a+)+$", regex: true }), sink: new TextSink(1000), deadlineMs: 60_000 });
    const fh = await fs.open(files[0] ?? "", "r");
    const ac = new AbortController();
    setTimeout(() => ac.abort(new Error("cancelled by client")), 50);
    try {
      await expect(search.searchFile(fh, escapeControls(files[0] ?? ""), { signal: ac.signal })).rejects.toThrow("cancelled by client");
    } finally {
      await fh.close();
      await search.close();
    }
  });
});
