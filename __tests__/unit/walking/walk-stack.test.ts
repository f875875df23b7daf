/**
 * The walk's bounded descriptors (walk-stack.ts, descriptors.ts), in process:
 * a walk hundreds of levels deep holds at most its share of descriptors while
 * its output stays the in-memory reference's, shares shrink as more walks
 * run and come back when they end, and a directory whose fd was let go and
 * that was replaced meanwhile is reported, never walked as if it were the one read;
 * reads ahead of the walk hold at most AHEAD_FDS_BORROWING descriptors, and
 * those let go to keep within it are opened again, the walk's output unchanged.
 */
import { execFileSync, spawnSync } from "node:child_process";
import fs, { type Dirent } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Reach, WalkPort } from "../../../src/sandbox/index.js";
import { DescriptorBudget, MAX_WALK_FDS, MIN_WALK_FDS } from "../../../src/walking/descriptors.js";
import { readDirEntries } from "../../../src/sandbox/platform/host.js";
import { treeInto, walkFiles } from "../../../src/walking/index.js";
import { AHEAD_FDS_BORROWING } from "../../../src/walking/walk-stack.js";
import { walkTree, type WalkVisitor } from "../../../src/walking/walker.js";
import { describeEachStrategy, STRATEGIES, tempDir, walkOptions } from "../../support/fixtures.js";
import { bigSink, buildTreeInMemory } from "../../support/walk-reference.js";

const LEVELS = 600;
let root: string;
let remove: () => Promise<void>;

// A chain of `levels` directories named d, each beside two files made before and after it (so that in any
// readdir order most levels have an entry left after d: the walk needs them again on its way up);
// made by walking down with chdir.
function chain(dir: string, levels: number): void {
  const made = spawnSync(
    process.execPath,
    [
      "-e",
      `const fs = require("node:fs"); process.chdir(process.argv[1]);
       for (let i = 0; i < Number(process.argv[2]); i++) {
         fs.writeFileSync("a" + i, ""); fs.mkdirSync("d"); fs.writeFileSync("z" + i, ""); process.chdir("d");
       }`,
      dir,
      String(levels),
    ],
    { stdio: "inherit" },
  );
  expect(made.status).toBe(0);
}

beforeEach(async () => {
  const t = await tempDir("bfs-walk-stack-");
  root = t.dir;
  remove = async () => {
    execFileSync("rm", ["-rf", root]);
    await t.remove();
  };
});
afterEach(() => remove());

const openFds = (): number => fs.readdirSync("/proc/self/fd").length;

describe("shares of the walks' descriptors", () => {
  it("halve what is left, never go under the minimum, and come back when given back", () => {
    const budget = new DescriptorBudget();
    const takeShare = (limit: number) => budget.takeShare(limit);
    const first = takeShare(256);
    const second = takeShare(256);
    const third = takeShare(256);
    expect([first.count, second.count, third.count]).toEqual([MAX_WALK_FDS, 32, MIN_WALK_FDS]);
    third.giveBack();
    second.giveBack();
    // Giving back twice gives back once.
    second.giveBack();
    const again = takeShare(256);
    expect(again.count).toBe(32);
    again.giveBack();
    first.giveBack();
    const unlimited = takeShare(Infinity);
    expect(unlimited.count).toBe(MAX_WALK_FDS);
    unlimited.giveBack();
  });
});

describeEachStrategy("a walk hundreds of levels deep", (strategy, runtime) => {
  it("lists what the in-memory reference lists", async () => {
    chain(root, LEVELS);
    const sink = bigSink();
    await treeInto(root, [], sink, walkOptions(runtime, [root]));
    expect(sink.render("advice")).toBe(JSON.stringify(await buildTreeInMemory(root, []), null, 2));
  });

  it.skipIf(strategy !== "procfd" || !STRATEGIES.includes("procfd"))("holds no more descriptors than one walk's share", async () => {
    chain(root, LEVELS);
    const before = openFds();
    let most = 0;
    let entered = 0;
    const visitor: WalkVisitor = {
      excluded: () => false,
      enter() {
        if (++entered % 25 === 0) most = Math.max(most, openFds() - before);
      },
      leave() {},
    };
    await walkTree(root, visitor, walkOptions(runtime, [root]));
    expect(entered).toBe(3 * LEVELS);
    // The root's own descriptor is the caller's, and one more may be opening.
    expect(most).toBeGreaterThan(4);
    expect(most).toBeLessThanOrEqual(MAX_WALK_FDS);
    expect(openFds()).toBe(before);
  });

  it.skipIf(strategy !== "procfd" || !STRATEGIES.includes("procfd"))(
    "a directory replaced while its fd was let go is reported when the walk comes back, and nothing of the new one is listed",
    async () => {
      chain(root, LEVELS);
      const swapped = path.join(root, ...Array<string>(100).fill("d"));
      const names: string[] = [];
      let swappedOnce = false;
      const visitor: WalkVisitor = {
        excluded: () => false,
        enter(dir, entry) {
          names.push(path.join(dir, entry.name));
          // Deep below it, with level 100's fd long let go: it is moved away and another takes its name.
          if (!swappedOnce && dir.length > swapped.length + 2 * 300) {
            swappedOnce = true;
            fs.renameSync(swapped, `${swapped}-moved`);
            fs.mkdirSync(swapped);
            fs.writeFileSync(path.join(swapped, "planted"), "");
          }
        },
        leave() {},
      };
      const skipped = await walkTree(root, visitor, walkOptions(runtime, [root]));
      expect(swappedOnce).toBe(true);
      expect(names.some((n) => n.endsWith("planted"))).toBe(false);
      const sink = bigSink();
      skipped.appendNote(sink);
      expect(sink.render("advice")).toMatch(/\[Skipped 1 unreadable entry: .*\/d \(ESTALE\)\]$/);
    },
  );
});

describeEachStrategy("reading ahead of the walk", (strategy, runtime) => {
  // The walk's port, recording every directory read (ahead of the walk or when the walk needs it) and every one
  // opened again, and counting the reads ahead that hold a descriptor: from their start (a portable read holds one
  // until it settles) until they are let go or the walk stands in the directory (`opened`), which is when the walk
  // stack stops counting them against AHEAD_FDS_BORROWING. `most` is the largest count seen as a read ahead starts.
  // `slow`: reads ahead settle only once `settle` is called, as from a thread pool busy while the walk goes down.
  function watched(port: WalkPort, slow = false) {
    const reads = { ahead: [] as string[], now: [] as string[], again: [] as string[] };
    const held = { settling: 0, open: new Set<Reach>(), most: 0 };
    let settle = (): void => {};
    const settled = slow ? new Promise<void>((resolve) => (settle = resolve)) : Promise.resolve();
    const sandbox = Object.create(port) as WalkPort;
    sandbox.readChild = (parent, name, shown, ahead) => {
      (ahead ? reads.ahead : reads.now).push(path.relative(root, shown));
      if (!ahead) return port.readChild(parent, name, shown, ahead);
      held.settling++;
      held.most = Math.max(held.most, held.settling + held.open.size);
      return Promise.all([port.readChild(parent, name, shown, ahead), settled]).then(([read]) => {
        held.settling--;
        if ("entries" in read && read.fd >= 0) held.open.add(read);
        return read;
      });
    };
    sandbox.reopenChild = (parent, name, shown, id) => {
      reads.again.push(path.relative(root, shown));
      return port.reopenChild(parent, name, shown, id);
    };
    sandbox.release = (read) => {
      held.open.delete(read);
      port.release(read);
    };
    // The walk now stands in the directory whose listing is `entries`: a descriptor read ahead for it is the frame's.
    const opened = (entries: readonly Dirent[]): void => {
      for (const read of held.open) if ("entries" in read && read.entries === entries) held.open.delete(read);
    };
    return { sandbox, reads, held, opened, settle };
  }

  // Ten directories of ten directories of three files (a0/b0/x … a9/b9/z): 110 directories, 300 files.
  function wideTree(): void {
    for (let i = 0; i < 10; i++) {
      for (let j = 0; j < 10; j++) {
        const dir = path.join(root, `a${i}`, `b${j}`);
        fs.mkdirSync(dir, { recursive: true });
        for (const f of ["x", "y", "z"]) fs.writeFileSync(path.join(dir, f), "");
      }
    }
  }

  it("reads every directory of a wide tree once, all but each directory's first subdirectory ahead of the walk, none again", async () => {
    // With room to spare, nothing read ahead is let go (and opened again when walked), and every later
    // sibling is read ahead, the last one too.
    wideTree();
    const opts = walkOptions(runtime, [root]);
    const { sandbox, reads } = watched(opts.sandbox);
    let files = 0;
    const visitor: WalkVisitor = {
      excluded: () => false,
      enter(_dir, entry) {
        if (entry.isFile()) files++;
      },
      leave() {},
    };
    await walkTree(root, visitor, { ...opts, sandbox });
    expect(files).toBe(300);
    expect(reads.again).toEqual([]);
    expect(reads.now.sort()).toEqual(["a0", ...Array.from({ length: 10 }, (_, i) => path.join(`a${i}`, "b0"))].sort());
    expect(reads.ahead).toHaveLength(110 - 11);
    expect(new Set([...reads.ahead, ...reads.now]).size).toBe(110);
  });

  it("reads no directory in the thread pool for a content search's walk (walkFiles): each small one at once, once", async () => {
    wideTree();
    const opts = walkOptions(runtime, [root]);
    const { sandbox, reads } = watched(opts.sandbox);
    const shown: string[] = [];
    const take = (file: { close(): unknown }, path: string): undefined => {
      shown.push(path);
      file.close();
      return undefined;
    };
    await walkFiles(root, { excludePatterns: [], respectGitignore: false }, take, () => {}, { ...opts, sandbox });
    expect(shown).toHaveLength(300);
    // Walk order: every directory's files before the next directory's.
    expect(shown).toEqual([...shown].sort());
    expect(reads.ahead).toEqual([]);
    expect(reads.again).toEqual([]);
    expect(reads.now).toHaveLength(110);
    expect(new Set(reads.now).size).toBe(110);
  });

  it("holds at most AHEAD_FDS_BORROWING directories read ahead where 40 could be, and still walks each entry once, in order", async (ctx) => {
    // A walk's share is 64 descriptors from an open-file limit of 256 up; below, the cap itself is not what binds.
    const limit = runtime.strategy.descriptorLimit();
    if (limit < 256) ctx.skip(`the open-file limit is ${limit}: a walk's share is then below the read-ahead's cap`);
    // Sixty directories d00…d59, each holding a file f; the first two of every level hold ten more such directories,
    // four levels down. Going down d00/d00/d00/d00/d00, each of the five levels has eight subdirectories to read
    // ahead (AHEAD_PER_DIR): 40 at once, past the cap of 24, with the frames of a 64-descriptor share lending ~50.
    const dirs: string[] = [];
    const grow = (dir: string, rel: string, width: number, levels: number): void => {
      for (let i = 0; i < width; i++) {
        const name = `d${String(i).padStart(2, "0")}`;
        fs.mkdirSync(path.join(dir, name));
        fs.writeFileSync(path.join(dir, name, "f"), "");
        dirs.push(path.join(rel, name));
        if (i < 2 && levels > 1) grow(path.join(dir, name), path.join(rel, name), 10, levels - 1);
      }
    };
    grow(root, "", 60, 5);
    expect(dirs).toHaveLength(60 + 20 + 40 + 80 + 160);
    // The order of a walk that reads nothing ahead: depth first, each directory's entries in readdir's order.
    const inOrder = (dir: string, rel: string): string[] =>
      fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
        const r = path.join(rel, entry.name);
        return entry.isDirectory() ? [r, ...inOrder(path.join(dir, entry.name), r)] : [r];
      });
    const expected = inOrder(root, "");

    // Reads ahead settle only when the walk reaches its first file (d00/d00/d00/d00/d00/f), at the bottom of the
    // way down: until then none is walked into, so the count is the walk's own doing, not the thread pool's pace.
    const opts = walkOptions(runtime, [root]);
    const { sandbox, reads, held, opened, settle } = watched(opts.sandbox, true);
    const entered: string[] = [];
    const visitor: WalkVisitor = {
      excluded: () => false,
      enter(_dir, entry, rel) {
        entered.push(rel);
        if (entry.isFile()) settle();
      },
      leave() {},
      opened(_rel, entries) {
        opened(entries);
      },
    };
    await walkTree(root, visitor, { ...opts, sandbox });

    // The cap reached, never passed; every read ahead settled, and was let go or walked into.
    expect(held.most).toBe(AHEAD_FDS_BORROWING);
    expect(held.settling).toBe(0);
    expect(held.open.size).toBe(0);
    // Each entry once, in the order of a walk that reads nothing ahead.
    expect(entered).toHaveLength(2 * dirs.length);
    expect(entered).toEqual(expected);
    // Each directory read once, ahead or when walked.
    expect([...reads.ahead, ...reads.now].sort()).toEqual([...dirs].sort());
    if (strategy === "procfd") {
      // Past the cap, the reads ahead of the levels above were parked (the root's first) and their fds let go:
      // each is opened again when walked, once, and only those read ahead.
      expect(reads.again.length).toBeGreaterThan(0);
      expect(new Set(reads.again).size).toBe(reads.again.length);
      const aheadOnes = new Set(reads.ahead);
      expect(reads.again.filter((dir) => !aheadOnes.has(dir))).toEqual([]);
    } else {
      // A portable read holds no fd once settled: nothing is let go, so nothing is opened again.
      expect(reads.again).toEqual([]);
    }
  });
});

describe("readDirEntries", () => {
  it("reads a small directory at once unless told it may go to the thread pool; a large or unsized one always goes there", async () => {
    for (const f of ["b", "a", "c"]) fs.writeFileSync(path.join(root, f), "");
    const size = fs.statSync(root).size;
    const now = readDirEntries(root, size, false);
    expect(now).toBeInstanceOf(Array);
    const names = (entries: Dirent[]): string[] => entries.map((e) => e.name);
    // readdirSync keeps fs.readdir's order.
    expect(names(now as Dirent[])).toEqual(names(await fs.promises.readdir(root, { withFileTypes: true })));
    for (const [s, inPool] of [
      [size, true],
      [0, false],
      [16 * 1024 + 1, false],
    ] as const) {
      const later = readDirEntries(root, s, inPool);
      expect(later, `${s} ${inPool}`).toBeInstanceOf(Promise);
      expect(names(await later), `${s} ${inPool}`).toEqual(names(now as Dirent[]));
    }
  });
});
