/**
 * A full disk (SPEC §18) on a small tmpfs: write_file, edit_file, append_file
 * and copy_file fail with ENOSPC, keep the old content, leave no partial file
 * or temp file, and say what was and was not written. Needs root to mount the
 * tmpfs (Linux); skipped elsewhere, as its title says.
 *
 * Regression guard: an append on a full disk wrote 7.9 of 9 MB and only said
 * `Cannot append ... ENOSPC`.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdir, readdir, readFile, rm, statfs, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { isServerEntry } from "../../src/sandbox/index.js";
import { STRATEGIES, strategyEnv, tempDir } from "../support/fixtures.js";
import { IS_ROOT } from "../support/privileges.js";
import { call, connect, textOf, type Connected } from "../support/spawn.js";

const MB = 1024 * 1024;

/** Why the suite cannot run here, or undefined when it can: mounting a tmpfs needs Linux and root. */
function cannotMount(): string | undefined {
  if (process.platform !== "linux") return "needs Linux to mount a small tmpfs";
  if (!IS_ROOT) return "needs root to mount a small tmpfs";
  return spawnSync("mount", ["--version"]).status === 0 ? undefined : "needs mount(8)";
}
const UNAVAILABLE = cannotMount();

describe.skipIf(UNAVAILABLE !== undefined)(`a full disk (${UNAVAILABLE ?? "a 24 MiB tmpfs"})`, () => {
  let base: string;
  let remove: () => Promise<void>;
  let disk: string;
  let mounted = false;

  beforeAll(async () => {
    ({ dir: base, remove } = await tempDir("bfs-enospc-"));
    disk = path.join(base, "disk");
    await mkdir(disk);
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=24m", "tmpfs", disk]);
    mounted = true;
  });
  afterAll(async () => {
    if (mounted) execFileSync("umount", [disk]);
    await remove();
  });
  beforeEach(async () => {
    for (const name of await readdir(disk)) await rm(path.join(disk, name), { recursive: true, force: true });
  });

  /** Leaves `free` bytes free on the tmpfs with a ballast file. */
  async function leaveFree(free: number): Promise<void> {
    const fs = await statfs(disk);
    const available = Number(fs.bavail) * Number(fs.bsize);
    await writeFile(path.join(disk, "ballast"), Buffer.alloc(Math.max(0, available - free)));
  }

  const leftovers = async () => (await readdir(disk)).filter((n) => isServerEntry(n) || n.endsWith(".tmp"));

  describe.each(STRATEGIES)("%s strategy", (name) => {
    let s: Connected;
    beforeAll(async () => {
      s = await connect([disk], { env: strategyEnv(name) });
    });
    afterAll(async () => {
      await s.close();
    });
    const run = (tool: string, args: Record<string, unknown>) => call(s.client, tool, args);

    it("write_file keeps the old content, or creates nothing, and says so", async () => {
      const file = path.join(disk, "w.txt");
      await writeFile(file, "old content\n");
      await leaveFree(2 * MB);
      const result = await run("write_file", { path: file, content: "x".repeat(4 * MB) });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(
        /^Cannot write .*w\.txt: no space left on device \(ENOSPC\); nothing was written: .*w\.txt keeps its previous content$/,
      );
      expect(await readFile(file, "utf8")).toBe("old content\n");
      const fresh = await run("write_file", { path: path.join(disk, "new.txt"), content: "x".repeat(4 * MB) });
      expect(textOf(fresh)).toMatch(/ENOSPC.*; nothing was written: no file was created$/);
      expect((await readdir(disk)).sort()).toEqual(["ballast", "w.txt"]);
      expect(await leftovers()).toEqual([]);
    });

    it("edit_file writes no change and says so", async () => {
      const file = path.join(disk, "e.txt");
      const text = `${"line of the file\n".repeat(300_000)}MARK\n`;
      await writeFile(file, text);
      await leaveFree(2 * MB);
      const result = await run("edit_file", { path: file, edits: [{ oldText: "MARK", newText: "EDITED" }] });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/ENOSPC.*; no changes were written: the file keeps its previous content$/);
      expect(await readFile(file, "utf8")).toBe(text);
      expect(await leftovers()).toEqual([]);
    });

    it("append_file appends nothing and says so", async () => {
      const file = path.join(disk, "a.txt");
      const text = "a line of the log\n".repeat(300_000);
      await writeFile(file, text);
      await leaveFree(2 * MB);
      const result = await run("append_file", { path: file, content: "more\n" });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/^Cannot append to .*a\.txt: no space left on device \(ENOSPC\); nothing was appended: .*a\.txt is as it was$/);
      expect(await readFile(file, "utf8")).toBe(text);
      expect(await leftovers()).toEqual([]);
    });

    it("copy_file of a file and of a tree creates nothing and says so", async () => {
      await writeFile(path.join(disk, "big.bin"), Buffer.alloc(5 * MB, 7));
      await mkdir(path.join(disk, "tree"));
      for (let i = 0; i < 5; i++) await writeFile(path.join(disk, "tree", `f${i}`), Buffer.alloc(MB, i));
      await leaveFree(3 * MB);
      const one = await run("copy_file", { source: "big.bin", destination: "copy.bin" });
      expect(textOf(one)).toMatch(
        /^Cannot copy big\.bin to copy\.bin: no space left on device \(ENOSPC\); nothing was copied: copy\.bin was not created$/,
      );
      const tree = await run("copy_file", { source: "tree", destination: "tree-copy", recursive: true });
      expect(textOf(tree)).toMatch(/ENOSPC.*; nothing was copied: tree-copy was not created$/);
      expect((await readdir(disk)).sort()).toEqual(["ballast", "big.bin", "tree"]);
      expect(await leftovers()).toEqual([]);
    });
  });
});
