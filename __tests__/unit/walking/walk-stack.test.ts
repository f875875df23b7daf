/**
 * The walk's bounded descriptors (walk-stack.ts, descriptors.ts), in process:
 * a walk hundreds of levels deep holds at most its share of descriptors while
 * its output stays the in-memory reference's, shares shrink as more walks
 * run and come back when they end, and a directory whose fd was let go and
 * that was replaced meanwhile is reported, never walked as if it were the one read.
 */
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DescriptorBudget, MAX_WALK_FDS, MIN_WALK_FDS } from "../../../src/walking/descriptors.js";
import { treeInto } from "../../../src/walking/index.js";
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

describeEachStrategy("reading ahead of the walk", (_strategy, runtime) => {
  it("reads every directory of a wide tree once, all but each directory's first subdirectory ahead of the walk, none again", async () => {
    // Ten directories of ten directories of three files: with room to spare, nothing read ahead is let go
    // (and opened again when walked), and every later sibling is read ahead, the last one too.
    for (let i = 0; i < 10; i++) {
      for (let j = 0; j < 10; j++) {
        const dir = path.join(root, `a${i}`, `b${j}`);
        fs.mkdirSync(dir, { recursive: true });
        for (const f of ["x", "y", "z"]) fs.writeFileSync(path.join(dir, f), "");
      }
    }
    const opts = walkOptions(runtime, [root]);
    const port = opts.sandbox;
    const reads = { ahead: [] as string[], now: [] as string[], again: [] as string[] };
    const counting = Object.create(port) as typeof port;
    counting.readChild = (parent, name, shown, ahead) => {
      (ahead ? reads.ahead : reads.now).push(path.relative(root, shown));
      return port.readChild(parent, name, shown, ahead);
    };
    counting.reopenChild = (parent, name, shown, id) => {
      reads.again.push(path.relative(root, shown));
      return port.reopenChild(parent, name, shown, id);
    };
    let files = 0;
    const visitor: WalkVisitor = {
      excluded: () => false,
      enter(_dir, entry) {
        if (entry.isFile()) files++;
      },
      leave() {},
    };
    await walkTree(root, visitor, { ...opts, sandbox: counting });
    expect(files).toBe(300);
    expect(reads.again).toEqual([]);
    expect(reads.now.sort()).toEqual(["a0", ...Array.from({ length: 10 }, (_, i) => path.join(`a${i}`, "b0"))].sort());
    expect(reads.ahead).toHaveLength(110 - 11);
    expect(new Set([...reads.ahead, ...reads.now]).size).toBe(110);
  });
});
