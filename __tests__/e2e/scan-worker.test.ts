// The scan worker as a thread (SPEC §10, §16): the built dist/grep/scan-worker.js, which the
// server runs, while the unit tests run the same scan code on their own thread. What only a
// thread can show is here: a catastrophic regex ends in 'too costly' while the main thread
// keeps running, the per-call budget (other calls answered first), an aborted regex search,
// and cancellation mid-tree with every descriptor closed, under both platform strategies.
import { readdirSync, readlinkSync, writeFileSync } from "node:fs";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compileQuery, ContentSearch, RegexTooCostlyError, type QuerySpec } from "../../src/grep/index.js";
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
});
