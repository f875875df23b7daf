/**
 * The server's own names and its swap lock (SPEC §18), in process under both
 * platform strategies: the one name predicate, which holder a lock names and
 * when it is gone, and what the next holder settles that a killed one left
 * half done — a temp file or temp tree, a move's empty placeholder, a file
 * move between link(2) and unlink(2).
 */
import { spawnSync } from "node:child_process";
import fsp, { link, lstat, lutimes, mkdir, readdir, readFile, stat, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { __testing, isServerEntry } from "../../../src/sandbox/index.js";
import { describeEachStrategy, tempDir } from "../../support/fixtures.js";

const { tempName, swapLockName, lockIsStale, lockTextFor } = __testing;

/** A pid that no process has any more. */
function deadPid(): number {
  return Number(spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" }).stdout);
}

describe("the one name form", () => {
  it("recognises the temp and lock names of any entry, and nothing near them", () => {
    for (const name of ["a.txt", "", "x".repeat(300), "dir/with\nbreak"]) {
      expect(isServerEntry(tempName(name))).toBe(true);
      expect(isServerEntry(swapLockName(name))).toBe(true);
    }
    const hex = "0123456789abcdef".repeat(2);
    for (const near of [
      `.bfs-${hex.toUpperCase()}.tmp`,
      `.bfs-${hex.slice(1)}.tmp`,
      `.bfs-${hex}0.tmp`,
      `.bfs-${hex}.tmpx`,
      `bfs-${hex}.tmp`,
      `a.txt.${hex}.tmp`,
      `.bfs-${hex}.lock.tmp`,
      ".bfs-x.tmp",
    ]) {
      expect(isServerEntry(near), near).toBe(false);
    }
  });
});

describe("when a lock's holder is gone", () => {
  const alive = () => true;
  const dead = () => false;
  it("a holder of this machine: by whether its process runs, whatever the lock's age", () => {
    const text = lockTextFor(process.pid);
    expect(lockIsStale(text, 3_600_000, alive)).toBe(false);
    expect(lockIsStale(text, -3_600_000, dead)).toBe(true);
    expect(lockIsStale(text, 0, dead)).toBe(true);
    // With the real probe: this process runs, a finished one does not.
    expect(lockIsStale(text, 3_600_000)).toBe(false);
    expect(lockIsStale(lockTextFor(deadPid()), 0)).toBe(true);
  });

  it("a holder elsewhere, or one of this machine that cannot be verified: by silence (no heartbeat for 10 s)", () => {
    const elsewhere = lockTextFor(process.pid).replace(/host=[0-9a-f]{16}/, "host=0000000000000000");
    expect(lockIsStale(elsewhere, 9_000, dead)).toBe(false);
    expect(lockIsStale(elsewhere, 11_000, alive)).toBe(true);
    // Dated far ahead is no heartbeat either.
    expect(lockIsStale(elsewhere, -11_000, alive)).toBe(true);
    // A pid that runs but no start time to tell it from a later process with that pid.
    const unverified = lockTextFor(1).replace(/ start=\d*/, " start=");
    expect(lockIsStale(unverified, 9_000, alive)).toBe(false);
    expect(lockIsStale(unverified, 11_000, alive)).toBe(true);
    expect(lockIsStale(unverified, 0, dead)).toBe(true);
  });

  it("anything but a lock of this server's form is not honoured at all", () => {
    for (const junk of ["", "bfs-lock pid=0 start= host=x", "not ours", `${lockTextFor(process.pid)} extra`]) {
      expect(lockIsStale(junk, 0), junk).toBe(true);
    }
  });
});

describeEachStrategy("what a killed holder left is settled by the next", (_, runtime) => {
  let dir: string;
  let remove: () => Promise<void>;
  beforeEach(async () => {
    ({ dir, remove } = await tempDir("bfs-swap-lock-"));
  });
  afterEach(async () => {
    await remove();
  });
  const sandbox = () => __testing.unvalidated(runtime, [dir]);
  const at = (name: string) => path.join(dir, name);
  /** The text of a dead holder's lock, made before what it may leave behind (as the holder makes it first). */
  const staleText = (intent?: Parameters<typeof lockTextFor>[1]) => lockTextFor(deadPid(), intent);
  /** A dead holder's lock of `name`, dated ahead so that only "gone" can break it. */
  async function staleLock(name: string, intent?: Parameters<typeof lockTextFor>[1], text = staleText(intent)): Promise<void> {
    await symlink(text, at(swapLockName(name)));
    const future = new Date(Date.now() + 3_600_000);
    await lutimes(at(swapLockName(name)), future, future);
  }

  it("a temp file and a temp tree are removed when that name is next written", async () => {
    await writeFile(at("f.txt"), "old\n");
    await writeFile(at(tempName("f.txt")), "partial");
    await staleLock("f.txt");
    await mkdir(at(tempName("tree")));
    await mkdir(at(`${tempName("tree")}/a/b`), { recursive: true });
    await writeFile(at(`${tempName("tree")}/a/b/c`), "partial");
    await sandbox().writeFile(at("f.txt"), "new\n");
    await sandbox().writeFile(at("tree"), "now a file\n");
    expect((await readdir(dir)).sort()).toEqual(["f.txt", "tree"]);
    expect(await readFile(at("f.txt"), "utf8")).toBe("new\n");
  });

  it("a directory move's empty placeholder is removed, so the retry succeeds; anything else there is kept", async () => {
    await mkdir(at("src"));
    await writeFile(at("src/x"), "x");
    const text = staleText({ placeholder: true });
    await mkdir(at("dst"), 0o700);
    await staleLock("dst", { placeholder: true }, text);
    await sandbox().move(at("src"), at("dst"));
    expect(await readFile(at("dst/x"), "utf8")).toBe("x");
    // Not a placeholder of ours: another mode, or not empty.
    await mkdir(at("src2"));
    await mkdir(at("theirs"), 0o755);
    await staleLock("theirs", { placeholder: true });
    await expect(sandbox().move(at("src2"), at("theirs"))).rejects.toThrow(/^Destination already exists/);
    expect((await stat(at("theirs"))).isDirectory()).toBe(true);
  });

  it("deleting the placeholder a dead holder left succeeds: taking the lock removes it, and the delete says so", async () => {
    await mkdir(at("copy-dst"), 0o700);
    await staleLock("copy-dst", { placeholder: true });
    const deleted = await sandbox().delete(at("copy-dst"), { recursive: true });
    expect(deleted.kind).toBe("directory");
    expect(await readdir(dir)).toEqual([]);
    // With nothing there before the call, the delete is still refused as missing.
    await expect(sandbox().delete(at("copy-dst"), { recursive: true })).rejects.toThrow(/no such file or directory \(ENOENT\)/);
  });

  it("a file move killed between link and unlink is finished: the source name goes, the file stays", async () => {
    await writeFile(at("moved.txt"), "content\n");
    await link(at("moved.txt"), at("dest.txt"));
    await staleLock("dest.txt", { movedFrom: at("moved.txt") });
    await sandbox().appendFile(at("dest.txt"), "");
    await expect(lstat(at("moved.txt"))).rejects.toThrow(/ENOENT/);
    expect(await readFile(at("dest.txt"), "utf8")).toBe("content\n");
    // A source that is another file than the destination is left alone.
    await writeFile(at("other.txt"), "other\n");
    await writeFile(at("dest2.txt"), "dest\n");
    await staleLock("dest2.txt", { movedFrom: at("other.txt") });
    await sandbox().appendFile(at("dest2.txt"), "");
    expect(await readFile(at("other.txt"), "utf8")).toBe("other\n");
    expect((await readdir(dir)).filter(isServerEntry)).toEqual([]);
  });

  it("another server removing the stale lock it moved aside first (between this one's look and its unlink) is no failure", async () => {
    await writeFile(at("shared.txt"), "old\n");
    await staleLock("shared.txt");
    const aside = tempName(swapLockName("shared.txt"));
    const realUnlink = fsp.unlink;
    let raced = 0;
    // The other server wins each removal of the aside name: the entry is gone when this one unlinks it.
    const spy = vi.spyOn(fsp, "unlink").mockImplementation(async (p) => {
      if (String(p).endsWith(aside)) {
        raced++;
        await realUnlink(p).catch(() => undefined);
      }
      return realUnlink(p);
    });
    try {
      await sandbox().appendFile(at("shared.txt"), "more\n");
    } finally {
      spy.mockRestore();
    }
    expect(raced).toBeGreaterThan(0);
    expect(await readFile(at("shared.txt"), "utf8")).toBe("old\nmore\n");
    expect((await readdir(dir)).filter(isServerEntry)).toEqual([]);
  });

  it("moving back a file a killed move left at both names finishes that move first, then moves it", async () => {
    await writeFile(at("a.txt"), "content\n");
    await link(at("a.txt"), at("b.txt"));
    await staleLock("b.txt", { movedFrom: at("a.txt") });
    await sandbox().move(at("b.txt"), at("a.txt"));
    expect(await readFile(at("a.txt"), "utf8")).toBe("content\n");
    expect((await readdir(dir)).sort()).toEqual(["a.txt"]);
  });
});
