// The scan worker as a thread (SPEC §10, §16): the built dist/grep/scan-worker.js, which the
// server runs, while the unit tests run the same scan code on their own thread. What only a
// thread can show is here: a catastrophic regex ends in 'too costly' while the main thread
// keeps running, the per-call budget (other calls answered first), an aborted regex search,
// and cancellation mid-tree with every descriptor closed, under both platform strategies; the
// same with the workers opening the walked files themselves (SPEC §23), whose bytes then join
// the budget as they open them.
import { closeSync, openSync, readdirSync, readlinkSync, writeFileSync } from "node:fs";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compileQuery, ContentSearch, RegexTooCostlyError, ScanWorkers, type QuerySpec } from "../../src/grep/index.js";
import { workerThreads } from "../../src/grep/scan-pool.js";
import { TextSink } from "../../src/kernel/bounded.js";
import { escapeControls } from "../../src/kernel/escape.js";
import { walkFiles } from "../../src/walking/index.js";
import { describeEachStrategy, walkOptions, fileWriter, openedFile, currentRuntime } from "../support/fixtures.js";

/** The built worker (the global setup brings dist/ up to date). */
const scanThreads = workerThreads(new URL("../../dist/grep/scan-worker.js", import.meta.url));

let root: string;
beforeAll(async () => {
  root = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), "scan-worker-")));
});
afterAll(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

// A file opened as the walk hands them over: the search owns the descriptor and closes it.
const opened = openedFile;

const writeFiles = fileWriter(() => root);

describe("regex safety", () => {
  it("a catastrophic regex ends in a 'too costly' error or correct results, while other tasks keep running", async () => {
    const files = await writeFiles([`ok aaa\n${"a".repeat(100_000)}b\naa\n`]);
    const sink = new TextSink(10_000);
    const search = new ContentSearch({
      workers: currentRuntime().scanWorkers,
      scanThreads,
      query: compileQuery({ query: "(a+)+$", regex: true }),
      sink,
      budget: { baseMs: 300, perKiBMs: 0, perFileMs: 0 },
    });
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
    const search = new ContentSearch({
      workers: currentRuntime().scanWorkers,
      scanThreads,
      query: compileQuery({ query: "(a+)+$", regex: true }),
      sink: new TextSink(1000),
      budget: { baseMs: 60_000 },
    });
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

describe("the regex budget is per call (SPEC §16)", () => {
  it("many short catastrophic lines end the call with 'too costly'; a call started beside it is answered first", async () => {
    // 2,000 lines of 25 a's: each costs (a|a)* about 2^25 steps, the whole file hours; no line alone is long.
    const [hostile, plain] = await writeFiles([`${"a".repeat(25)}\n`.repeat(2000), "needle\nhay\nneedle\n"]);
    const order: string[] = [];
    const run = async (file: string, spec: QuerySpec, name: string): Promise<unknown> => {
      const search = new ContentSearch({
        workers: currentRuntime().scanWorkers,
        scanThreads,
        query: compileQuery(spec),
        sink: new TextSink(10_000),
        mode: "count",
        budget: { baseMs: 1500, perKiBMs: 0, perFileMs: 0 },
      });
      try {
        await search.addFile(opened(file), escapeControls(file));
        await search.drain();
        return search.totals.matchingLines;
      } catch (err) {
        return err;
      } finally {
        await search.close();
        order.push(name);
      }
    };
    const regex = run(hostile ?? "", { query: "(a|a)*b", regex: true }, "regex");
    const literal = run(plain ?? "", { query: "needle" }, "literal");
    const [regexOutcome, literalOutcome] = await Promise.all([regex, literal]);
    expect(literalOutcome).toBe(2);
    expect(regexOutcome).toBeInstanceOf(RegexTooCostlyError);
    expect(String(regexOutcome)).toMatch(/too costly as a regular expression: searching the files used up its 1,500 ms/);
    expect(order).toEqual(["literal", "regex"]);
  });
});

describeEachStrategy("a tree search through walkFiles", (_, runtime) => {
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

  it("is cancelled mid-tree: the walk and the workers stop, and every descriptor is closed", async () => {
    const dir = await fs.mkdtemp(path.join(root, "cancel-"));
    for (let d = 0; d < 20; d++) {
      await fs.mkdir(path.join(dir, `d${d}`));
      for (let f = 0; f < 100; f++) writeFileSync(path.join(dir, `d${d}`, `f${f}`), `${"a".repeat(24)}\n`.repeat(30));
    }
    const ac = new AbortController();
    const search = new ContentSearch({
      workers: runtime.scanWorkers,
      scanThreads,
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

  it("with the workers opening the files: cancelled mid-tree, every file and directory descriptor is closed", async () => {
    const dir = await fs.mkdtemp(path.join(root, "cancel-unopened-"));
    for (let d = 0; d < 20; d++) {
      await fs.mkdir(path.join(dir, `d${d}`));
      for (let f = 0; f < 100; f++) writeFileSync(path.join(dir, `d${d}`, `f${f}`), `${"a".repeat(24)}\n`.repeat(30));
    }
    const ac = new AbortController();
    const opts = walkOptions(runtime, [root], { signal: ac.signal });
    const search = new ContentSearch({
      workers: runtime.scanWorkers,
      scanThreads,
      query: compileQuery({ query: "(a|a)*[^a]", regex: true }),
      sink: new TextSink(10_000),
      mode: "lines",
      signal: ac.signal,
      batchFds: 16,
      opensInWorkers: opts.sandbox,
    });
    let handed = 0;
    const walked = walkFiles(
      dir,
      {
        excludePatterns: [],
        respectGitignore: false,
        onUnopened: (file, shown) => {
          handed++;
          const wait = search.addUnopened(file, shown);
          // Once the walk waits for the batches the costly regex holds up, and a worker has had time to open a
          // file and start on it: names opened (one held by a worker mid-scan), most not.
          if (wait !== undefined && !ac.signal.aborted) setTimeout(() => ac.abort(new Error("cancelled mid-tree")), 300);
          return wait;
        },
      },
      (file, shown) => search.addFile(file, shown),
      (reason, n) => search.skip(reason, n),
      opts,
    ).then(() => search.drain());
    await expect(walked).rejects.toThrow("cancelled mid-tree");
    await search.close();
    expect(handed).toBeLessThan(2000);
    expect(openUnder(dir)).toEqual([]);
  });

  it("with the workers opening the files: a worker that ends later closes none of the descriptors it once opened", async () => {
    const dir = await fs.mkdtemp(path.join(root, "kept-"));
    for (let f = 0; f < 40; f++) writeFileSync(path.join(dir, `f${f}`), "needle\n");
    const shelf = new ScanWorkers();
    const opts = walkOptions(runtime, [root]);
    // Lines mode: each matching file stays open for its lines, and this thread closes it after showing them.
    const search = new ContentSearch({
      workers: shelf,
      scanThreads,
      query: compileQuery({ query: "needle" }),
      sink: new TextSink(100_000),
      opensInWorkers: opts.sandbox,
    });
    try {
      await walkFiles(
        dir,
        { excludePatterns: [], respectGitignore: false, onUnopened: (file, shown) => search.addUnopened(file, shown) },
        (file, shown) => search.addFile(file, shown),
        (reason, n) => search.skip(reason, n),
        opts,
      );
      await search.drain();
    } finally {
      await search.close();
    }
    expect(search.totals.matchingLines).toBe(40);
    // The numbers those files had are given to files of this thread now; then the call's workers end.
    const mine = Array.from({ length: 60 }, () => openSync(path.join(dir, "f0"), "r"));
    try {
      for (let i = 0; i < 2; i++) await (await shelf.take(scanThreads)).terminate();
      expect(mine.map((fd) => readlinkSync(`/proc/self/fd/${fd}`))).toEqual(mine.map(() => path.join(dir, "f0")));
    } finally {
      for (const fd of mine) closeSync(fd);
    }
  });

  it("with the workers opening the files: a file's bytes join the regex budget once its worker opened it", async () => {
    const dir = await fs.mkdtemp(path.join(root, "budget-unopened-"));
    // 24 MiB of lines the regex (no literal to look for first) tests one by one: far longer than the budget's
    // base (none) and files share (0.1 ms) allow, well within its KiB share (2.4 s).
    const line = "Abcdef 12345 words, more words and more words here\n";
    writeFileSync(path.join(dir, "big.txt"), line.repeat(Math.ceil((24 * 1024 * 1024) / line.length)));
    const opts = walkOptions(runtime, [root]);
    const search = new ContentSearch({
      workers: runtime.scanWorkers,
      scanThreads,
      query: compileQuery({ query: "[A-Z][a-z]+ [0-9]{4,5} [a-z]+[.,;]", regex: true, caseSensitive: true }),
      sink: new TextSink(10_000),
      mode: "count",
      budget: { baseMs: 0, perKiBMs: 0.1, perFileMs: 0.1 },
      opensInWorkers: opts.sandbox,
    });
    try {
      await walkFiles(
        dir,
        { excludePatterns: [], respectGitignore: false, onUnopened: (file, shown) => search.addUnopened(file, shown) },
        (file, shown) => search.addFile(file, shown),
        (reason, n) => search.skip(reason, n),
        opts,
      );
      await search.drain();
    } finally {
      await search.close();
    }
    expect(search.totals.matchingLines).toBe(Math.ceil((24 * 1024 * 1024) / line.length));
  });
});
