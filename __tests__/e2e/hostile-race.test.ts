/**
 * Races through the built server (SPEC §5 "Races"), each against a separate
 * attacker process running a tight loop; no timing assertions, only outcomes.
 *
 * Regression guards for what the reference server lost: writes escaping
 * through a directory swapped for a symlink, move_file replacing a destination
 * created during the call, edit_file dropping an append made while it ran.
 */
import { existsSync } from "node:fs";
import { appendFile, mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { EditOperation } from "../../src/editing/index.js";
import { __testHooks, __testing } from "../../src/sandbox/index.js";
import { editFileThrough } from "../../src/editing/index.js";
import { createRuntime } from "../../src/server/runtime.js";
import { expectSameSnapshot, snapshot, startAttacker, type Attacker, sandbox } from "../support/hostile.js";
import { call, connect, textOf, type Connected } from "../support/spawn.js";

let base: string;
let root: string;
let outside: string;
let server: Connected;
let remove: () => Promise<void>;
let attacker: Attacker | undefined;

beforeEach(async () => {
  ({ base, root, outside, remove } = await sandbox("bfs-race-"));
  server = await connect([root]);
});

afterEach(async () => {
  await attacker?.stop().catch(() => undefined);
  attacker = undefined;
  await server?.close();
  await remove?.();
});

// The in-process cases call the edit behind path validation (the paths here are already real).
const editFileSafely = (file: string, edits: EditOperation[], dryRun: boolean, dirs: readonly string[]) =>
  editFileThrough(__testing.unvalidated(createRuntime(), dirs), file, edits, dryRun);

const run = (name: string, args: Record<string, unknown>) => call(server.client, name, args);
const pause = () => new Promise((resolve) => setTimeout(resolve, 1));

/** Counts outcomes and checks that every refusal is one of the expected, explained kinds. */
class Tally {
  ok = 0;
  refused = 0;
  readonly reasons = new Set<string>();

  constructor(private readonly allowed: RegExp) {}

  add(result: CallToolResult): boolean {
    const text = textOf(result);
    if (!result.isError) {
      this.ok++;
      return true;
    }
    this.refused++;
    expect(text).toMatch(this.allowed);
    this.reasons.add(text.replaceAll(base, "<base>").slice(0, 120));
    return false;
  }
}

describe("a directory swapped between a real directory and a symlink to outside", () => {
  it("never lets write_file, create_directory, edit_file or move_file touch anything outside", async () => {
    const swap = path.join(root, "swap");
    const parked = path.join(root, "parked");
    await mkdir(swap);
    // The same names inside and outside, so any write that followed the symlink would show.
    for (const dir of [swap, outside]) {
      await writeFile(path.join(dir, "f.txt"), "edit me\n");
      await writeFile(path.join(dir, "m-a.txt"), "move me\n");
    }
    const before = await snapshot(outside);

    attacker = startAttacker(
      "const [swap, parked, outside] = args;",
      // create_directory may recreate a real "swap" while the old one is parked; such a directory
      // is parked under a fresh name so that the swapping goes on.
      `if (i % 2 === 0) {
         try { fs.renameSync(swap, parked); } catch { try { fs.renameSync(swap, parked + "-" + i); } catch {} }
         try { fs.symlinkSync(outside, swap); summary.swaps = (summary.swaps || 0) + 1; } catch {}
       } else {
         try { if (fs.lstatSync(swap).isSymbolicLink()) fs.unlinkSync(swap); } catch {}
         try { fs.renameSync(parked, swap); } catch {}
       }`,
      [swap, parked, outside],
    );
    await attacker.started;

    const tally = new Tally(
      /Access denied - (path|symlink target) outside allowed directories|symbolic link|Parent directory does not exist|parent directory does not exist|no such file or directory|ENOENT|source does not exist|Destination already exists|File changed during edit|not a directory/,
    );
    const written: string[] = [];
    const N = 120;
    for (let i = 0; i < N; i++) {
      const results = await Promise.all([
        run("write_file", { path: `swap/w-${i}.txt`, content: `written ${i}` }),
        run("create_directory", { path: `swap/d-${i}/e` }),
        run("edit_file", { path: "swap/f.txt", edits: [{ oldText: "edit me", newText: "edit me" }] }),
        run("move_file", { source: "swap/m-a.txt", destination: "swap/m-b.txt" }),
        run("move_file", { source: "swap/m-b.txt", destination: "swap/m-a.txt" }),
        run("write_file", { path: `${root}/swap/abs-${i}.txt`, content: `written ${i}` }),
      ]);
      if (tally.add(results[0]!)) written.push(`w-${i}.txt`);
      for (const r of results.slice(1)) tally.add(r);
    }
    const summary = (await attacker.stop()) as { swaps?: number };
    attacker = undefined;

    expectSameSnapshot(before, await snapshot(outside));
    // The attacker ran (its first batch of swaps runs before `started` resolves); which side won
    // each round is up to the scheduler, so only the safety properties above and below are asserted.
    expect(summary.swaps ?? 0).toBeGreaterThan(0);
    // Every write reported as done is in one of the real directories the attacker shuffled around.
    const realDirs: string[] = [];
    for (const entry of await readdir(root, { withFileTypes: true })) {
      if (entry.isDirectory()) realDirs.push(path.join(root, entry.name));
    }
    for (const name of written) {
      const found = realDirs.filter((dir) => existsSync(path.join(dir, name)));
      expect(found, name).toHaveLength(1);
      expect(await readFile(path.join(found[0]!, name), "utf8")).toMatch(/^written \d+$/);
    }
  });
});

describe("listings and file info while a directory is swapped for a symlink to outside", () => {
  it("list_directory, list_directory_with_sizes and get_file_info never describe anything outside", async () => {
    const swap = path.join(root, "swap");
    const parked = path.join(root, "parked");
    await mkdir(path.join(swap, "inner"), { recursive: true });
    await writeFile(path.join(swap, "inside.txt"), "inside");
    // Outside, `inner` is a file of a telltale size, and a name that exists only there.
    await writeFile(path.join(outside, "inner"), "o".repeat(12_345));
    await writeFile(path.join(outside, "OUTSIDE-ONLY.txt"), "secret");
    // Each state is held for a random fraction of a millisecond, about as long as one call takes.
    attacker = startAttacker(
      "const [swap, parked, outside] = args; const sleeper = new Int32Array(new SharedArrayBuffer(4));",
      `Atomics.wait(sleeper, 0, 0, Math.random() * 0.6);
       if (i % 2 === 0) { try { fs.renameSync(swap, parked); fs.symlinkSync(outside, swap); } catch {} }
       else { try { fs.unlinkSync(swap); fs.renameSync(parked, swap); } catch {} }`,
      [swap, parked, outside],
    );
    await attacker.started;
    const tally = new Tally(
      /Access denied - (path|symlink target) outside allowed directories|parent directory does not exist|ENOENT|no such file|symbolic link|not a directory|No such directory/i,
    );
    for (let i = 0; i < 250; i++) {
      const results = await Promise.all([
        run("list_directory", { path: "swap" }),
        run("list_directory_with_sizes", { path: `${root}/swap` }),
        run("get_file_info", { path: "swap/inner" }),
      ]);
      for (const result of results) {
        tally.add(result);
        const text = textOf(result);
        expect(text).not.toContain("OUTSIDE-ONLY");
        expect(text).not.toMatch(/size: 12345|12\.06 KB/);
      }
    }
    const summary = (await attacker.stop()) as { iterations: number };
    attacker = undefined;
    expect(summary.iterations).toBeGreaterThan(0);
    // Every call was answered, as a success or a refusal.
    expect(tally.ok + tally.refused).toBe(250 * 3);
  });
});

describe("move_file while another process creates the destination", () => {
  it("never replaces what the other process created, for files and directories", async () => {
    const N = 150;
    const src = (i: number) => path.join(root, `src-${i}`);
    const dst = (i: number) => path.join(root, `dst-${i}`);
    attacker = startAttacker(
      "const [dir] = args; summary.created = []; let next = 0;",
      `const go = path.join(dir, "go-" + next);
       if (!fs.existsSync(go)) return;
       // A random short delay so the creation lands before, during or after the move.
       const spin = Math.floor(Math.random() * 400);
       for (let s = 0; s < spin; s++) fs.existsSync(go);
       try { fs.writeFileSync(path.join(dir, "dst-" + next), "created by the other process " + next, { flag: "wx" }); summary.created.push(next); } catch {}
       fs.writeFileSync(path.join(dir, "done-" + next), "");
       next++;`,
      [root],
    );
    await attacker.started;
    const moved: boolean[] = [];
    for (let i = 0; i < N; i++) {
      if (i % 2 === 0) await writeFile(src(i), `source ${i}`);
      else {
        await mkdir(src(i));
        await writeFile(path.join(src(i), "inner.txt"), `source ${i}`);
      }
      await writeFile(path.join(root, `go-${i}`), "");
      const result = await run("move_file", { source: `src-${i}`, destination: `dst-${i}` });
      if (result.isError) expect(textOf(result)).toMatch(new RegExp(`^Destination already exists: (${root}/)?dst-${i}$`));
      moved.push(!result.isError);
      while (!existsSync(path.join(root, `done-${i}`))) await pause();
    }
    const { created } = (await attacker.stop()) as { created: number[] };
    attacker = undefined;

    let racesLostByMove = 0;
    for (let i = 0; i < N; i++) {
      const byOther = created.includes(i);
      // Exactly one side won: never both (that would be a clobber), never neither.
      expect(byOther !== moved[i], `iteration ${i}: created=${byOther} moved=${moved[i]}`).toBe(true);
      const sourceText = i % 2 === 0 ? () => readFile(src(i), "utf8") : () => readFile(path.join(src(i), "inner.txt"), "utf8");
      if (byOther) {
        racesLostByMove++;
        expect(await readFile(dst(i), "utf8")).toBe(`created by the other process ${i}`);
        expect(await sourceText()).toBe(`source ${i}`);
      } else {
        expect(existsSync(src(i))).toBe(false);
        const movedText = i % 2 === 0 ? await readFile(dst(i), "utf8") : await readFile(path.join(dst(i), "inner.txt"), "utf8");
        expect(movedText).toBe(`source ${i}`);
      }
    }
    // Which side won each round is up to the scheduler; whoever did, the directory ends up holding
    // every destination, exactly the sources of the rounds the move lost, and nothing else (no temp
    // or lock file, no second copy): a move that copied, clobbered or left debris shows here.
    const left = (await readdir(root)).filter((n) => !/^(go|done)-\d+$/.test(n)).sort();
    const destinations = Array.from({ length: N }, (_, i) => `dst-${i}`);
    const lostSources = moved.flatMap((won, i) => (won ? [] : [`src-${i}`]));
    expect(lostSources).toHaveLength(racesLostByMove);
    expect(left).toEqual([...destinations, ...lostSources].sort());
  });
});

describe("edit_file while another process appends", () => {
  it("never drops an append: the edit refuses with 'changed during edit' or the append survives", async () => {
    const file = path.join(root, "log.txt");
    await writeFile(file, "edits=0\n");
    attacker = startAttacker(
      "const [file] = args; summary.appended = []; const sleeper = new Int32Array(new SharedArrayBuffer(4));",
      `Atomics.wait(sleeper, 0, 0, Math.random() * 3);
       fs.appendFileSync(file, "append-" + i + "\\n");
       summary.appended.push(i);`,
      [file],
    );
    await attacker.started;
    const N = 150;
    for (let i = 0; i < N; i++) {
      for (;;) {
        const result = await run("edit_file", { path: "log.txt", edits: [{ oldText: `edits=${i}\n`, newText: `edits=${i + 1}\n` }] });
        if (!result.isError) break;
        expect(textOf(result)).toMatch(/^File changed during edit: .*log\.txt; no changes were written/);
      }
    }
    const { appended } = (await attacker.stop()) as { appended: number[] };
    attacker = undefined;

    const lines = (await readFile(file, "utf8")).split("\n");
    expect(lines[0]).toBe(`edits=${N}`);
    const present = new Set(lines.filter((l) => l.startsWith("append-")));
    const missing = appended.filter((k) => !present.has(`append-${k}`));
    expect(missing).toEqual([]);
    expect(lines.filter((l) => l.startsWith("append-")).length).toBe(appended.length);
    expect(appended.length).toBeGreaterThan(0);
  });
});

describe("edit_file: a write between the last check and the rename (in-process, deterministic)", () => {
  afterEach(() => {
    delete __testHooks.afterCheck;
  });

  it("an append made there is carried over to the new file, and the result says so", async () => {
    const file = path.join(root, "late-append.txt");
    await writeFile(file, "one\ntwo\n");
    __testHooks.afterCheck = async () => {
      delete __testHooks.afterCheck;
      await appendFile(file, "appended late\n");
    };
    const diff = await editFileSafely(file, [{ oldText: "two", newText: "TWO" }], false, [root]);
    expect(diff).toMatch(/\nNote: 14 bytes that another process appended to .*late-append\.txt during the edit were kept at the end of the file\.$/);
    expect(await readFile(file, "utf8")).toBe("one\nTWO\nappended late\n");
  });

  it("an in-place change made there is put back and the edit refused", async () => {
    const file = path.join(root, "late-change.txt");
    await writeFile(file, "one\ntwo\n");
    __testHooks.afterCheck = async () => {
      delete __testHooks.afterCheck;
      // Same inode, same size: only the content and mtime change.
      await writeFile(file, "ONE\ntwo\n", { flag: "r+" });
    };
    await expect(editFileSafely(file, [{ oldText: "two", newText: "2" }], false, [root])).rejects.toThrow(
      /^File changed during edit: .*late-change\.txt; no changes were written/,
    );
    expect(await readFile(file, "utf8")).toBe("ONE\ntwo\n");
    expect((await readdir(root)).filter((n) => n.endsWith(".tmp"))).toEqual([]);
  });
});
