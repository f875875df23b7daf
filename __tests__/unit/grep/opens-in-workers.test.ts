// A search whose scan workers open the walked files themselves (SPEC §16, §23), in process under
// both platform strategies: the same text, totals and skips as when the walk opens them (hard
// links and links inside met once, in walk order; a link outside, a FIFO, a binary file), every
// descriptor closed, a directory swapped for a link to outside between the walk and the open
// never read through, and a directory's descriptor kept until the worker is done with its names.
// Scans run on the calling thread here (scan-thread.ts); e2e/scan-worker.test.ts runs the built worker.
import { execFileSync } from "node:child_process";
import { linkSync, mkdirSync, readdirSync, readlinkSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { compileQuery, ContentSearch, ScanWorkers, type OutputMode } from "../../../src/grep/index.js";
import type { ScanJob } from "../../../src/grep/protocol.js";
import { inThreadScans, type ScanThread } from "../../../src/grep/scan-thread.js";
import { TextSink } from "../../../src/kernel/bounded.js";
import { ReachHolds } from "../../../src/sandbox/reach-holds.js";
import { walkFiles, type WalkOptions } from "../../../src/walking/index.js";
import { describeEachStrategy, tempDir, walkOptions } from "../../support/fixtures.js";

const workers = new ScanWorkers();

// Descriptors of this process open on anything under `dir` (files and directories).
const openUnder = (dir: string): string[] =>
  readdirSync("/proc/self/fd").flatMap((fd) => {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      return target.startsWith(dir) ? [target] : [];
    } catch {
      return [];
    }
  });

interface Run {
  text: string;
  lines: number;
  files: number;
  skips: string[];
}

/** One search of `dir` for `query`, the files opened by the walk or (`inWorkers`) by the scan workers. */
async function search(
  dir: string,
  opts: WalkOptions,
  query: string,
  mode: OutputMode,
  inWorkers: boolean,
  scanThreads?: () => ScanThread,
): Promise<Run> {
  const sink = new TextSink(4000);
  const skips: string[] = [];
  const s = new ContentSearch({
    workers,
    query: compileQuery({ query }),
    sink,
    mode,
    batchFds: 5,
    summaryReserve: 300,
    scanThreads,
    opensInWorkers: inWorkers ? opts.sandbox : undefined,
  });
  try {
    await walkFiles(
      dir,
      { excludePatterns: [], respectGitignore: false, onUnopened: inWorkers ? (f, shown) => s.addUnopened(f, shown) : undefined },
      (file, shown) => s.addFile(file, shown),
      (reason, n) => {
        skips.push(`${reason}:${n}`);
        s.skip(reason, n);
      },
      opts,
    );
    await s.drain();
    s.finish();
  } finally {
    await s.close();
  }
  return { text: sink.render("narrow"), lines: s.totals.matchingLines, files: s.totals.filesSearched, skips };
}

describe("ReachHolds", () => {
  it("closes a reach at once when it is not held, else once its last hold ends, and a hold ends once", () => {
    const holds = new ReachHolds();
    const closed: string[] = [];
    expect(holds.closeWhenFree("/a/", () => closed.push("a"))).toBe(false);
    expect(closed).toEqual(["a"]);
    const ref = () => ({ reach: "/b/" });
    const first = holds.hold("/b/", ref);
    const second = holds.hold("/b/", ref);
    expect(second.ref).toBe(first.ref);
    expect(holds.closeWhenFree("/b/", () => closed.push("b"))).toBe(true);
    first.done();
    first.done();
    expect(closed).toEqual(["a"]);
    second.done();
    expect(closed).toEqual(["a", "b"]);
    // Held again later: a new entry, closed on its own terms.
    holds.hold("/b/", ref).done();
    expect(closed).toEqual(["a", "b"]);
  });
});

describeEachStrategy("a search whose workers open the walked files", (name, runtime) => {
  let dir: string;
  let outside: string;
  let remove: () => Promise<void>;
  let removeOutside: () => Promise<void>;
  beforeEach(async () => {
    ({ dir, remove } = await tempDir("bfs-opens-"));
    ({ dir: outside, remove: removeOutside } = await tempDir("bfs-opens-out-"));
  });
  afterEach(async () => {
    await remove();
    await removeOutside();
  });

  it("gives the same text, totals and skips as the walk's own opens, in every mode, and leaves no descriptor open", async () => {
    for (let d = 0; d < 4; d++) {
      mkdirSync(path.join(dir, `d${d}`));
      for (let f = 0; f < 9; f++) writeFileSync(path.join(dir, `d${d}`, `f${f}`), `x\n${"needle here\n".repeat((d * 9 + f) % 4)}`);
    }
    writeFileSync(path.join(dir, "bin"), "needle\0\n");
    linkSync(path.join(dir, "d1", "f1"), path.join(dir, "d3", "hard"));
    symlinkSync(path.join(dir, "d2", "f2"), path.join(dir, "a-link"));
    writeFileSync(path.join(outside, "secret"), "needle SECRET\n");
    symlinkSync(path.join(outside, "secret"), path.join(dir, "out-link"));
    execFileSync("mkfifo", [path.join(dir, "d0", "fifo")]);
    const opts = walkOptions(runtime, [dir]);
    for (const mode of ["lines", "files", "count"] as const) {
      const walked = await search(dir, opts, "needle", mode, false);
      const inWorkers = await search(dir, opts, "needle", mode, true);
      expect(inWorkers, mode).toEqual(walked);
      expect(inWorkers.text).not.toContain("SECRET");
    }
    const counted = await search(dir, opts, "needle", "count", true);
    // 4 x 9 files with (i % 4) matching lines each, the hard link and the link inside not counted twice.
    expect(counted.lines).toBe(9 * (0 + 1 + 2 + 3));
    expect(counted.text).toMatch(/1 binary/);
    expect(counted.skips).toEqual(["unreadable:1", "outsideLink:1"]);
    expect(openUnder(dir)).toEqual([]);
  });

  it("never reads through a directory swapped for a link to outside after the walk read it", async () => {
    mkdirSync(path.join(dir, "sub"));
    writeFileSync(path.join(dir, "sub", "file"), "needle inside\n");
    writeFileSync(path.join(outside, "file"), "needle SECRET\n");
    let swapped = false;
    // The swap lands after the walk read sub and before the worker opens its file.
    const swapFirst = (): ScanThread => {
      const thread = inThreadScans();
      const post = thread.postMessage.bind(thread);
      thread.postMessage = (job: ScanJob, transfer?: readonly ArrayBuffer[]) => {
        if (!swapped && job.kind === "count" && job.walked !== undefined) {
          swapped = true;
          renameSync(path.join(dir, "sub"), path.join(dir, "moved"));
          symlinkSync(outside, path.join(dir, "sub"));
        }
        post(job, transfer);
      };
      return thread;
    };
    const run = await search(dir, walkOptions(runtime, [dir]), "needle", "lines", true, swapFirst);
    expect(swapped).toBe(true);
    expect(run.text).not.toContain("SECRET");
    if (name === "procfd") {
      // Opened in the directory the walk holds, wherever its path now leads.
      expect(run.text).toContain("needle inside");
      expect(run.lines).toBe(1);
    } else {
      // Its path no longer leads to the directory the walk read: refused, counted unreadable.
      expect(run.lines).toBe(0);
      expect(run.text).toMatch(/1 unreadable/);
    }
    expect(openUnder(dir)).toEqual([]);
  });

  it("keeps a walked directory's descriptor until the worker has opened its names", async () => {
    // Four directories of one file each, in batches of five: the walk has left every directory (and let it go)
    // before the batch is sent, so a directory closed when the walk left it would be gone by then.
    for (let d = 0; d < 4; d++) {
      mkdirSync(path.join(dir, `d${d}`));
      writeFileSync(path.join(dir, `d${d}`, "f"), "needle\n");
    }
    let heldAtSend: string[] = [];
    const watchSend = (): ScanThread => {
      const thread = inThreadScans();
      const post = thread.postMessage.bind(thread);
      thread.postMessage = (job: ScanJob, transfer?: readonly ArrayBuffer[]) => {
        if (job.kind === "count" && job.walked !== undefined) heldAtSend = openUnder(dir);
        post(job, transfer);
      };
      return thread;
    };
    const run = await search(dir, walkOptions(runtime, [dir]), "needle", "count", true, watchSend);
    expect(run.lines).toBe(4);
    if (name === "procfd") expect(heldAtSend.filter((p) => /\/d\d$/.test(p)).sort()).toEqual([0, 1, 2, 3].map((d) => path.join(dir, `d${d}`)));
    else expect(heldAtSend).toEqual([]);
    expect(openUnder(dir)).toEqual([]);
  });
});
