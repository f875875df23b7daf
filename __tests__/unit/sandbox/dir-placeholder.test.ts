/**
 * A directory move or copy killed at any moment leaves the destination absent or complete (SPEC §24, issue
 * 28 row 18), in process under both platform strategies. Every call that can make a name appear (mkdir,
 * rename, symlink, link) is watched, and after each one the destination is looked at: it must be absent, or
 * hold the whole tree. A kill can only land between two such calls, so this covers every kill point without
 * killing anything; the crash harness (crash.test.ts) kills the server for real.
 *
 * Regression guard: a directory move reserved its destination with an empty directory before the rename,
 * and a kill between the two left it visible (2 of 60 kills in the crash harness).
 */
import fs from "node:fs";
import fsp, { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, expect, it, vi } from "vitest";
import { isServerEntry, Sandbox } from "../../../src/sandbox/index.js";
import { describeEachStrategy, tempDir } from "../../support/fixtures.js";

let dir: string;
let remove: () => Promise<void>;
const at = (name: string) => path.join(dir, name);
const TREE = ["a.txt", "sub", "sub/b.txt", "sub/deeper", "sub/deeper/c.txt"];

beforeEach(async () => {
  ({ dir, remove } = await tempDir("bfs-dir-placeholder-"));
  await mkdir(at("tree/sub/deeper"), { recursive: true });
  for (const f of ["a.txt", "sub/b.txt", "sub/deeper/c.txt"]) await writeFile(at(`tree/${f}`), f);
});
afterEach(async () => {
  vi.restoreAllMocks();
  await remove();
});

/** What is at `p`: nothing, or the relative paths of everything it holds. */
function contentOf(p: string): string[] | undefined {
  if (!fs.existsSync(p)) return undefined;
  return (fs.readdirSync(p, { recursive: true }) as string[]).map((e) => e.split(path.sep).join("/")).sort();
}

/**
 * Watches every call that can make a name appear; after each, records what the destination `dst` holds.
 * Returns the states seen.
 */
function watchDestination(dst: string): Array<string[] | undefined> {
  const seen: Array<string[] | undefined> = [];
  const look = () => seen.push(contentOf(dst));
  for (const name of ["mkdir", "rename", "symlink", "link"] as const) {
    const original = (fsp[name] as (...a: unknown[]) => Promise<unknown>).bind(fsp);
    vi.spyOn(fsp, name).mockImplementation((async (...args: unknown[]) => {
      try {
        return await original(...args);
      } finally {
        look();
      }
    }) as never);
    const originalSync = (fs[`${name}Sync`] as (...a: unknown[]) => unknown).bind(fs);
    vi.spyOn(fs, `${name}Sync`).mockImplementation(((...args: unknown[]) => {
      try {
        return originalSync(...args);
      } finally {
        look();
      }
    }) as never);
  }
  return seen;
}

describeEachStrategy("a directory moved or copied", (_, runtime) => {
  for (const op of ["move", "copy"] as const) {
    it(`${op}: after every call that can make a name appear, the destination is absent or the whole tree`, async () => {
      const seen = watchDestination(at("dest"));
      const sandbox = new Sandbox(runtime, [dir]);
      if (op === "move") await sandbox.move(at("tree"), at("dest"));
      else await sandbox.copy(at("tree"), at("dest"), { recursive: true });
      vi.restoreAllMocks();
      expect(seen.length).toBeGreaterThan(0);
      for (const state of seen) expect([undefined, TREE.slice().sort()]).toContainEqual(state);
      expect(contentOf(at("dest"))).toEqual(TREE.slice().sort());
      expect(await readFile(at("dest/sub/deeper/c.txt"), "utf8")).toBe("sub/deeper/c.txt");
      expect((await readdir(dir)).filter(isServerEntry)).toEqual([]);
    });
  }

  it("a destination made meanwhile is never replaced when it holds anything", async () => {
    await mkdir(at("dest"));
    await writeFile(at("dest/theirs.txt"), "theirs\n");
    const sandbox = new Sandbox(runtime, [dir]);
    await expect(sandbox.move(at("tree"), at("dest"))).rejects.toThrow(/^Destination already exists/);
    await expect(sandbox.copy(at("tree"), at("dest"), { recursive: true })).rejects.toThrow(/^Destination already exists/);
    expect(contentOf(at("dest"))).toEqual(["theirs.txt"]);
    expect(contentOf(at("tree"))).toEqual(TREE.slice().sort());
  });
});
