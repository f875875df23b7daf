/**
 * Regression guard (SPEC §5 "Races"): directory_tree and search_files showed
 * names from outside the allowed directories when a subdirectory was swapped
 * for a symlink to an outside directory between its parent's readdir and its
 * own (about 3 leaks in 300 rounds). The walk now opens each directory with
 * O_DIRECTORY|O_NOFOLLOW relative to its already-opened parent, so a swapped-in
 * symlink is refused (ENOTDIR or ELOOP) instead of followed, and opens the root
 * once, verifying its real path.
 *
 * The attacker is a separate process running a tight loop against the built
 * server; the deterministic variant swaps directories from onProgress, after
 * the parent was read and before the walk reaches them. No timing assertions.
 */
import fs from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { searchInto, treeInto } from "../../src/walking/index.js";
import type { WalkOptions } from "../../src/walking/index.js";
import { createRuntime } from "../../src/server/runtime.js";
import { describeEachStrategy, STRATEGIES, walkOptions } from "../support/fixtures.js";
import { startAttacker, type Attacker, sandbox } from "../support/hostile.js";
import { call, connect, textOf, type Connected } from "../support/spawn.js";
import { bigSink } from "../support/walk-reference.js";

const SECRET = "SECRET-";

let base: string;
let root: string;
let outside: string;
let remove: () => Promise<void>;

beforeEach(async () => {
  ({ base, root, outside, remove } = await sandbox("bfs-walk-race-", "allowed"));
  for (let i = 0; i < 4; i++) await writeFile(path.join(outside, `${SECRET}${i}.txt`), "secret");
  await mkdir(path.join(outside, `${SECRET}dir`));
  await writeFile(path.join(outside, `${SECRET}dir`, `${SECRET}inner.txt`), "secret");
});

afterEach(async () => {
  await remove?.();
});

describe("directory_tree and search_files while a subdirectory is swapped for a symlink to outside", () => {
  let server: Connected | undefined;
  let attacker: Attacker | undefined;

  afterEach(async () => {
    await attacker?.stop().catch(() => undefined);
    attacker = undefined;
    await server?.close();
    server = undefined;
  });

  // The guarantee needs /proc/self/fd; the portable strategy's window is documented in src/sandbox/platform/portable.ts.
  it.skipIf(!STRATEGIES.includes("procfd"))("never show a name from outside, over hundreds of rounds", async () => {
    const SUBS = 4;
    const subs = Array.from({ length: SUBS }, (_, i) => path.join(root, `sub${i}`));
    for (const sub of subs) {
      await mkdir(path.join(sub, "nested"), { recursive: true });
      for (let j = 0; j < 3; j++) await writeFile(path.join(sub, `inside-${j}.txt`), "inside");
    }
    server = await connect([root]);
    attacker = startAttacker(
      "const [outside, ...subs] = args; const sleeper = new Int32Array(new SharedArrayBuffer(4)); summary.swaps = 0;",
      // Each state is held for a random fraction of a millisecond, about as long as one walk takes.
      `Atomics.wait(sleeper, 0, 0, Math.random() * 0.3);
       for (const sub of subs) {
         if (i % 2 === 0) { try { fs.renameSync(sub, sub + "-parked"); fs.symlinkSync(outside, sub); summary.swaps++; } catch {} }
         else { try { fs.unlinkSync(sub); fs.renameSync(sub + "-parked", sub); } catch {} }
       }`,
      [outside, ...subs],
    );
    await attacker.started;

    const ROUNDS = 300;
    const leaks: string[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const results = await Promise.all([
        call(server.client, "directory_tree", { path: root }),
        call(server.client, "search_files", { path: root, pattern: "**/*" }),
        call(server.client, "search_files", { path: "sub0", pattern: "**" }),
      ]);
      for (const result of results) {
        const text = textOf(result);
        if (text.includes(SECRET)) leaks.push(text.slice(0, 400));
        if (!result.isError) continue;
        // Only the search rooted at the swapped directory itself may be refused, and only for a known reason.
        expect(text).toMatch(/Access denied - (path|symlink target) outside allowed directories|ENOENT|ELOOP|not a directory|No such directory/i);
      }
      const [tree, search] = results;
      for (const walk of [tree!, search!]) expect(walk.isError ?? false, textOf(walk)).toBe(false);
      // Whatever state sub0 was met in, the tree is upstream's JSON (plus the skip note).
      expect(Array.isArray(JSON.parse(textOf(tree!).replace(/\n\n\[Skipped [^\n]*\]$/, "")))).toBe(true);
    }
    const summary = (await attacker.stop()) as { swaps: number };
    attacker = undefined;

    expect(leaks).toEqual([]);
    // The attacker ran (its first batch runs before `started` resolves); which state each walk saw is
    // up to the scheduler, so only the absence of leaks is asserted.
    expect(summary.swaps).toBeGreaterThan(0);
  });
});

describe("a subdirectory swapped after its parent was read (in-process, deterministic)", () => {
  // 600 subdirectories of one file each: 1,200 entries, so onProgress(1000) fires half-way,
  // after the root was read and before the walk (and its read-ahead of 8) reached the last ~90.
  const DIRS = 600;

  function populate(): void {
    for (let i = 0; i < DIRS; i++) {
      fs.mkdirSync(path.join(root, `d${i}`));
      fs.writeFileSync(path.join(root, `d${i}`, "inside.txt"), "");
    }
  }

  /** Replaces every d<i> with a symlink to outside, once, at the first progress report. */
  function swapAllOnProgress(): WalkOptions {
    let swapped = false;
    return walkOptions(createRuntime("procfd"), [root], {
      onProgress: () => {
        if (swapped) return;
        swapped = true;
        fs.mkdirSync(path.join(base, "parked"));
        for (let i = 0; i < DIRS; i++) {
          fs.renameSync(path.join(root, `d${i}`), path.join(base, "parked", `d${i}`));
          fs.symlinkSync(outside, path.join(root, `d${i}`));
        }
      },
    });
  }

  const walks = {
    directory_tree: async (o: WalkOptions) => {
      const sink = bigSink();
      await treeInto(root, [], sink, o);
      return sink.render("advice");
    },
    search_files: async (o: WalkOptions) => {
      const sink = bigSink();
      await searchInto(root, "**/*", [], sink, o);
      return sink.render("advice");
    },
  };

  // The guarantee needs /proc/self/fd; the portable strategy's window is documented in src/sandbox/platform/portable.ts.
  it.skipIf(!STRATEGIES.includes("procfd")).each(Object.keys(walks) as (keyof typeof walks)[])(
    "%s refuses the swapped-in symlinks (ENOTDIR) and shows nothing from outside",
    async (name) => {
      populate();
      const text = await walks[name](swapAllOnProgress());
      expect(text).not.toContain(SECRET);
      const note = /\n\n\[Skipped ([\d,]+) unreadable entries: (.*)\]$/.exec(text);
      expect(note).not.toBeNull();
      // At least the directories beyond the read-ahead window were opened after the swap.
      expect(Number(note![1]!.replace(/,/g, ""))).toBeGreaterThanOrEqual(50);
      expect(note![2]).toMatch(new RegExp(`^${root.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}/d\\d+ \\((ENOTDIR|ELOOP)\\)`));
      // Every directory still appears by its inside name, in the upstream output format.
      if (name === "directory_tree") {
        const tree = JSON.parse(text.slice(0, note!.index)) as { name: string; type: string }[];
        expect(tree).toHaveLength(DIRS);
        expect(tree.every((e) => e.type === "directory")).toBe(true);
      }
    },
  );
});

describeEachStrategy("a walk root swapped for a symlink after validation", (_, runtime) => {
  it("is refused, not followed out of the allowed directories", async () => {
    // The root validated by the tool handler, swapped for a symlink to outside before the walk opens it.
    fs.renameSync(root, `${root}-parked`);
    fs.symlinkSync(outside, root);
    for (const walk of [treeInto, searchInto] as const) {
      const sink = bigSink();
      const run =
        walk === treeInto ? treeInto(root, [], sink, walkOptions(runtime, [root])) : searchInto(root, "**/*", [], sink, walkOptions(runtime, [root]));
      await expect(run).rejects.toThrow(/Access denied - path outside allowed directories/);
    }
  });
});
