/**
 * Recursive delete_file and copy_file while an attacker process swaps a
 * directory inside the tree for a symlink to outside and back (SPEC §5 Races,
 * §15), through the built server under both platform strategies: nothing
 * outside is ever deleted or changed, and no copy holds anything read from
 * outside. Outcomes only: which side wins each round is the scheduler's.
 */
import { lstat, mkdir, readdir, readFile, rmdir, unlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { STRATEGIES, strategyEnv } from "../support/fixtures.js";
import { expectSameSnapshot, sandbox, snapshot, startAttacker, type Attacker } from "../support/hostile.js";
import { call, connect, textOf, type Connected } from "../support/spawn.js";

const ROUNDS = 60;
// Each delete round lays the tree out again and starts its own attacker.
const DELETE_ROUNDS = 40;
// What a refused round may say: the swap was seen, or the tree changed under the call (EISDIR: a swapped entry was
// a directory again when the delete acted on it as the link it had been; seen once, portable, in a CI-length run).
const REFUSALS =
  /changed during the operation|no such file or directory|ENOENT|not a directory|ENOTDIR|illegal operation on a directory|EISDIR|symbolic link|ELOOP|Access denied|Destination already exists|File changed while copying|EAGAIN|not empty|ENOTEMPTY|changed while/;

describe.each(STRATEGIES)("a directory swapped for a symlink to outside during a tree operation (%s strategy)", (name) => {
  let root: string;
  let outside: string;
  let remove: () => Promise<void>;
  let server: Connected;
  let attacker: Attacker | undefined;

  beforeEach(async () => {
    ({ root, outside, remove } = await sandbox("bfs-tree-race-"));
    // The same names outside as inside, so anything that followed the link would show.
    await mkdir(path.join(outside, "deeper"));
    for (const file of ["a.txt", "b.txt", "OUTSIDE-ONLY.txt", "deeper/c.txt"]) await writeFile(path.join(outside, file), "secret outside\n");
    server = await connect([root], { env: strategyEnv(name) });
  });
  afterEach(async () => {
    await attacker?.stop().catch(() => undefined);
    attacker = undefined;
    await server.close();
    await remove();
  });

  /** Lays out `tree/sub/{a,b,deeper/c}.txt` (and a few siblings) under root. */
  async function layTree(tree: string): Promise<void> {
    await mkdir(path.join(tree, "sub", "deeper"), { recursive: true });
    for (const file of ["x.txt", "sub/a.txt", "sub/b.txt", "sub/deeper/c.txt"]) await writeFile(path.join(tree, file), "inside\n");
  }

  /** Swaps `<tree>/sub` for a symlink to outside and back, in a tight loop, holding each state a moment. */
  function swapper(tree: string): Attacker {
    return startAttacker(
      "const [sub, parked, outside] = args; const sleeper = new Int32Array(new SharedArrayBuffer(4));",
      `Atomics.wait(sleeper, 0, 0, Math.random() * 0.3);
       if (i % 2 === 0) { try { fs.renameSync(sub, parked); fs.symlinkSync(outside, sub); summary.swaps = (summary.swaps || 0) + 1; } catch {} }
       else { try { if (fs.lstatSync(sub).isSymbolicLink()) fs.unlinkSync(sub); fs.renameSync(parked, sub); } catch {} }`,
      [path.join(tree, "sub"), path.join(root, "parked"), outside],
    );
  }

  it(`recursive delete_file deletes nothing outside (${DELETE_ROUNDS} rounds)`, async () => {
    const before = await snapshot(outside);
    const tree = path.join(root, "tree");
    let deleted = 0;
    let swaps = 0;
    for (let i = 0; i < DELETE_ROUNDS; i++) {
      await layTree(tree);
      attacker = swapper(tree);
      await attacker.started;
      const result = await call(server.client, "delete_file", { path: tree, recursive: true });
      swaps += ((await attacker.stop()) as { swaps?: number }).swaps ?? 0;
      attacker = undefined;
      if (result.isError) expect(textOf(result)).toMatch(REFUSALS);
      else deleted++;
      // Whatever is left of the round (a refused delete, the parked directory) goes before the next.
      for (const left of ["tree", "parked"]) await removeInside(path.join(root, left));
    }
    expectSameSnapshot(before, await snapshot(outside));
    expect(deleted).toBeGreaterThan(0);
    expect(swaps).toBeGreaterThan(0);
  }, 60_000);

  it(`recursive copy_file copies nothing from outside (${ROUNDS} rounds)`, async () => {
    const before = await snapshot(outside);
    const tree = path.join(root, "src");
    await layTree(tree);
    attacker = swapper(tree);
    await attacker.started;
    let copied = 0;
    for (let i = 0; i < ROUNDS; i++) {
      const result = await call(server.client, "copy_file", { source: tree, destination: path.join(root, `copy-${i}`), recursive: true });
      if (result.isError) expect(textOf(result)).toMatch(REFUSALS);
      else copied++;
    }
    const { swaps } = (await attacker.stop()) as { swaps?: number };
    attacker = undefined;
    expectSameSnapshot(before, await snapshot(outside));
    expect(copied).toBeGreaterThan(0);
    expect(swaps ?? 0).toBeGreaterThan(0);
    // A copy may hold the link itself (copied as a link, never followed), but no file read through it.
    for (const entry of await readdir(root)) {
      if (!entry.startsWith("copy-")) continue;
      for (const file of await filesUnder(path.join(root, entry))) {
        expect(path.basename(file)).not.toBe("OUTSIDE-ONLY.txt");
        expect(await readFile(file, "utf8"), file).toBe("inside\n");
      }
    }
  }, 60_000);
});

/** Every regular file under `dir`, symlinks not followed. */
async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await filesUnder(p)));
    else if (entry.isFile()) out.push(p);
  }
  return out;
}

/** Removes `target` under the allowed directory without following any symlink in it (the test's own cleanup). */
async function removeInside(target: string): Promise<void> {
  const st = await lstat(target).catch(() => undefined);
  if (st === undefined) return;
  if (!st.isDirectory()) return unlink(target);
  for (const entry of await readdir(target)) await removeInside(path.join(target, entry));
  await rmdir(target);
}
