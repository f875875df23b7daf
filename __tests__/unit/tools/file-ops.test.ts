/**
 * delete_file and copy_file through the built server under both platform
 * strategies (SPEC §15): files, links in and out, empty and non-empty
 * directories, whole trees, the allowed directory itself, an existing
 * destination, mode kept, no partial destination after a failure, the
 * server's own leftovers, a 5,000-deep tree, and a 600 MiB copy compared
 * byte for byte (its memory is measured by `npm run bench`, not here).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { createReadStream, existsSync } from "node:fs";
import { chmod, lstat, mkdir, mkdtemp, open, readdir, readFile, readlink, realpath, rm, stat, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { __testing, isServerEntry } from "../../../src/sandbox/index.js";
import { materialize, STRATEGIES, tempDir } from "../../support/fixtures.js";
import { expectOk, expectRefused, expectSameSnapshot, snapshot } from "../../support/hostile.js";
import { call, inProcess, textOf, type InProcess } from "../../support/in-process.js";

const leftovers = async (dir: string) => (await readdir(dir)).filter((n) => isServerEntry(n) || n.endsWith(".tmp"));

async function sha256(file: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(file, { highWaterMark: 4 * 1024 * 1024 })) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

/** Makes a chain of `depth` directories named `d` under `dir` (deeper than PATH_MAX allows by path), with a file at the bottom. */
function deepChain(dir: string, depth: number): void {
  const script = `process.chdir(${JSON.stringify(dir)}); const fs = require("node:fs");
    for (let i = 0; i < ${depth}; i++) { fs.mkdirSync("d"); process.chdir("d"); } fs.writeFileSync("leaf", "bottom");`;
  execFileSync(process.execPath, ["-e", script]);
}

/** Removes a tree too deep for Node's rm (it goes by path): GNU rm walks it relatively. */
function removeDeep(dir: string): void {
  execFileSync("rm", ["-rf", dir]);
}

/** How deep the chain under `dir` goes and what its leaf holds, read by walking down relatively. */
function readChain(dir: string): { depth: number; leaf: string | null } {
  const script = `process.chdir(${JSON.stringify(dir)}); const fs = require("node:fs"); let depth = 0;
    while (fs.existsSync("d")) { process.chdir("d"); depth++; }
    process.stdout.write(JSON.stringify({ depth, leaf: fs.existsSync("leaf") ? fs.readFileSync("leaf", "utf8") : null }));`;
  return JSON.parse(execFileSync(process.execPath, ["-e", script], { encoding: "utf8" })) as { depth: number; leaf: string | null };
}

describe.each(STRATEGIES)("delete_file and copy_file (%s strategy)", (name) => {
  let base: string;
  let root: string;
  let outside: string;
  let remove: () => Promise<void>;
  let s: InProcess;
  const run = (tool: string, args: Record<string, unknown>) => call(s.client, tool, args);
  const at = (...parts: string[]) => path.join(root, ...parts);

  beforeAll(async () => {
    ({ dir: base, remove } = await tempDir("bfs-fileops-"));
    root = path.join(base, "root");
    outside = path.join(base, "outside");
    await mkdir(path.join(root, "nested-allowed"), { recursive: true });
    await mkdir(outside);
    await writeFile(path.join(outside, "secret.txt"), "outside\n");
    s = await inProcess([root, path.join(root, "nested-allowed")], { strategy: name });
  });
  afterAll(async () => {
    await s.close();
    await remove();
  });

  describe("delete_file", () => {
    it("deletes a file, and fails for it the second time with the state unchanged (idempotent)", async () => {
      await writeFile(at("scratch.txt"), "x");
      expect(expectOk(await run("delete_file", { path: "scratch.txt" }))).toBe("Successfully deleted scratch.txt");
      await expect(lstat(at("scratch.txt"))).rejects.toThrow(/ENOENT/);
      expectRefused(await run("delete_file", { path: "scratch.txt" }), /^Cannot delete scratch\.txt: no such file or directory/);
    });

    it("deletes a link itself, never its target, inside or outside", async () => {
      await writeFile(at("target.txt"), "kept");
      await symlink(at("target.txt"), at("in-link"));
      await symlink(path.join(outside, "secret.txt"), at("out-link"));
      await symlink(path.join(outside, "missing"), at("dangling-out"));
      const before = await snapshot(outside);
      for (const link of ["in-link", "out-link", "dangling-out"]) {
        expectOk(await run("delete_file", { path: link }));
        await expect(lstat(at(link))).rejects.toThrow(/ENOENT/);
      }
      expect(await readFile(at("target.txt"), "utf8")).toBe("kept");
      expectSameSnapshot(before, await snapshot(outside));
    });

    it("deletes an empty directory; refuses a non-empty one without recursive, naming recursive, deleting nothing", async () => {
      await mkdir(at("empty"));
      expectOk(await run("delete_file", { path: "empty" }));
      materialize(root, { full: { a: "1", sub: { b: "2" } } });
      expectRefused(
        await run("delete_file", { path: "full" }),
        /^Cannot delete full: the directory is not empty \(2 entries\); pass recursive: true/,
      );
      expect(await readFile(at("full", "sub", "b"), "utf8")).toBe("2");
    });

    it("deletes a whole tree with recursive, counting its entries, without following a link to outside", async () => {
      materialize(root, {
        tree: { a: "1", b: { c: "2", d: { e: "3" } }, out: { link: path.join(outside) }, file: { link: path.join(outside, "secret.txt") } },
      });
      const before = await snapshot(outside);
      expect(expectOk(await run("delete_file", { path: "tree", recursive: true }))).toBe("Successfully deleted tree (7 entries)");
      await expect(lstat(at("tree"))).rejects.toThrow(/ENOENT/);
      expectSameSnapshot(before, await snapshot(outside));
    });

    it("refuses an allowed directory itself, a directory holding one, a path outside, and a file named as a directory", async () => {
      expectRefused(await run("delete_file", { path: root, recursive: true }), /^Cannot delete .*: it is one of the allowed directories/);
      expectRefused(await run("delete_file", { path: at("nested-allowed"), recursive: true }), /one of the allowed directories/);
      await writeFile(at("nested-allowed", "keep"), "k");
      expect(await readFile(at("nested-allowed", "keep"), "utf8")).toBe("k");
      await mkdir(at("holder"));
      const two = await inProcess([root, at("holder")], { strategy: name });
      try {
        expectRefused(await call(two.client, "delete_file", { path: root, recursive: true }), /allowed directories/);
        // From the outer allowed directory, deleting the inner one's parent would delete it too.
        await mkdir(at("holder", "inner"));
        const three = await inProcess([root, at("holder", "inner")], { strategy: name });
        try {
          expectRefused(await call(three.client, "delete_file", { path: "holder", recursive: true }), /holds one of the allowed directories/);
        } finally {
          await three.close();
        }
      } finally {
        await two.close();
      }
      expect((await stat(at("holder", "inner"))).isDirectory()).toBe(true);
      expectRefused(await run("delete_file", { path: path.join(outside, "secret.txt") }), /^Access denied - path outside allowed directories/);
      await writeFile(at("plain.txt"), "p");
      expectRefused(await run("delete_file", { path: "plain.txt/" }), /^Not a directory: plain\.txt\/$/);
      expect(await readFile(path.join(outside, "secret.txt"), "utf8")).toBe("outside\n");
    });

    it("deletes a directory that holds only the server's own leftovers without recursive", async () => {
      await mkdir(at("stale"));
      await writeFile(at("stale", __testing.tempName("x.txt")), "partial copy of a killed server");
      expectOk(await run("delete_file", { path: "stale" }));
      await expect(lstat(at("stale"))).rejects.toThrow(/ENOENT/);
    });
  });

  describe("copy_file", () => {
    it("copies a file byte for byte with its mode, and never replaces an existing destination", async () => {
      const bytes = Buffer.from(Array.from({ length: 256 * 64 }, (_, i) => i % 256));
      await writeFile(at("bin"), bytes);
      await chmod(at("bin"), 0o754);
      expect(expectOk(await run("copy_file", { source: "bin", destination: "bin-copy" }))).toBe("Successfully copied bin to bin-copy");
      expect((await readFile(at("bin-copy"))).equals(bytes)).toBe(true);
      expect((await stat(at("bin-copy"))).mode & 0o7777).toBe(0o754);
      await writeFile(at("occupied"), "mine");
      await mkdir(at("occupied-dir"));
      await symlink("nowhere", at("occupied-link"));
      for (const destination of ["occupied", "occupied-dir", "occupied-link", root]) {
        expectRefused(await run("copy_file", { source: "bin", destination }), /^Destination already exists: /, destination);
      }
      expect(await readFile(at("occupied"), "utf8")).toBe("mine");
      expect(await readdir(at("occupied-dir"))).toEqual([]);
      expect(await readlink(at("occupied-link"))).toBe("nowhere");
      expect(await leftovers(root)).toEqual([]);
    });

    it("copies links as links (same target text); refuses one that would lead outside from its new place", async () => {
      materialize(root, { links: { t: "t", rel: { link: "t" }, abs: { link: at("links", "t") }, up: { link: "../links/t" } } });
      for (const [source, destination] of [
        ["links/rel", "links/rel-copy"],
        ["links/abs", "abs-copy"],
        ["links/up", "links/up-copy"],
      ] as const) {
        expectOk(await run("copy_file", { source, destination }));
        expect(await readlink(at(destination))).toBe(await readlink(at(source)));
      }
      // "../links/t" from the allowed directory itself would lead out of it.
      expectRefused(await run("copy_file", { source: "links/up", destination: "up-at-root" }), /^Access denied/);
      await expect(lstat(at("up-at-root"))).rejects.toThrow(/ENOENT/);
    });

    it("copies a tree with recursive: files, modes, links, empty directories; refuses it without recursive", async () => {
      materialize(root, {
        src: { a: "alpha", empty: {}, sub: { b: "beta", deeper: { c: "gamma" } }, link: { link: "sub/b" }, ".hidden": "h" },
      });
      await chmod(at("src", "sub"), 0o750);
      await chmod(at("src", "a"), 0o600);
      expectRefused(await run("copy_file", { source: "src", destination: "dst" }), /^Cannot copy src: it is a directory; pass recursive: true/);
      await expect(lstat(at("dst"))).rejects.toThrow(/ENOENT/);
      expect(expectOk(await run("copy_file", { source: "src", destination: "dst", recursive: true }))).toBe(
        "Successfully copied src to dst (4 directories, 4 files, 1 link; 15 bytes)",
      );
      const strip = <T extends { mtimeNs: bigint }>(m: Map<string, T>) => new Map([...m].map(([k, v]) => [k, { ...v, mtimeNs: 0n }]));
      expectSameSnapshot(strip(await snapshot(at("src"))), strip(await snapshot(at("dst"))));
      expectRefused(await run("copy_file", { source: "src", destination: "src/inside", recursive: true }), /the destination lies inside the source/);
    });

    it("leaves no partial destination after a failure part way, and skips FIFOs with a count", async () => {
      // The tree's last entry in readdir order is not known, so the failing link sits in a directory of its own after copied files.
      materialize(root, { bad: { a: "1", b: "2", zz: { escape: { link: "../../../../outside/secret.txt" } } } });
      expectRefused(await run("copy_file", { source: "bad", destination: "bad-copy", recursive: true }), /^Access denied/);
      await expect(lstat(at("bad-copy"))).rejects.toThrow(/ENOENT/);
      expect(await leftovers(root)).toEqual([]);
      materialize(root, { special: { f: "file" } });
      expect(spawnSync("mkfifo", [at("special", "fifo")]).status).toBe(0);
      expect(expectOk(await run("copy_file", { source: "special", destination: "special-copy", recursive: true }))).toMatch(
        /\(1 directory, 1 file; 4 bytes; 1 special file \(FIFO, socket, device\) not copied\)$/,
      );
      expect(await readdir(at("special-copy"))).toEqual(["f"]);
    });

    it("a name that is not valid UTF-8: a tree's copy counts it as not copied, a delete names it as what is left", async (ctx) => {
      materialize(root, { latin: { sub: { "ok.txt": "ok" } } });
      try {
        // caf\xe9.txt: listed by Node as "caf\uFFFD.txt", which reaches nothing.
        await writeFile(Buffer.concat([Buffer.from(`${at("latin", "sub")}/caf`), Buffer.from([0xe9]), Buffer.from(".txt")]), "x");
      } catch (error) {
        ctx.skip(`this file system refuses a name that is not valid UTF-8 (${(error as Error).message})`);
      }
      expect(expectOk(await run("copy_file", { source: "latin", destination: "latin-copy", recursive: true }))).toBe(
        "Successfully copied latin to latin-copy (2 directories, 1 file; 2 bytes; 1 entry whose name is not valid UTF-8 not copied (this server cannot open such a name))",
      );
      expect(await readdir(at("latin-copy", "sub"))).toEqual(["ok.txt"]);
      const deleted = await run("delete_file", { path: "latin", recursive: true });
      expectRefused(deleted, /^Cannot delete latin: directory not empty \(ENOTEMPTY\)/);
      expect(textOf(deleted)).toContain(
        "1 entry inside it was deleted, the rest is still there; 1 entry inside has a name that is not valid UTF-8, which this server cannot remove (rename or delete it in a shell)",
      );
      expect((await readdir(at("latin", "sub"), { encoding: "buffer" })).map((n) => n.toString("latin1"))).toEqual(["caf\xe9.txt"]);
      await rm(at("latin"), { recursive: true });
    });

    it("refuses a source or destination outside", async () => {
      expectRefused(await run("copy_file", { source: path.join(outside, "secret.txt"), destination: "stolen" }), /^Access denied/);
      await writeFile(at("mine.txt"), "m");
      expectRefused(await run("copy_file", { source: "mine.txt", destination: path.join(outside, "planted") }), /^Access denied/);
      await expect(lstat(path.join(outside, "planted"))).rejects.toThrow(/ENOENT/);
      await expect(lstat(at("stolen"))).rejects.toThrow(/ENOENT/);
    });
  });
});

// Off the disk where there is a tmpfs: 5,000 rmdir(2) calls on a busy journaled disk take as long as GNU rm's (seconds).
const DEEP_BASE = existsSync("/dev/shm") ? "/dev/shm" : os.tmpdir();

describe.skipIf(!STRATEGIES.includes("procfd"))("a 5,000-deep tree (procfd only: the portable strategy cannot enter paths past PATH_MAX)", () => {
  let root: string;
  let s: InProcess;

  beforeAll(async () => {
    root = await realpath(await mkdtemp(path.join(DEEP_BASE, "bfs-fileops-deep-")));
    s = await inProcess([root], { strategy: "procfd" });
  });
  afterAll(async () => {
    await s.close();
    removeDeep(root);
  });

  it("is copied and deleted completely", async () => {
    await mkdir(path.join(root, "src"));
    deepChain(path.join(root, "src"), 5000);
    expect(readChain(path.join(root, "src"))).toEqual({ depth: 5000, leaf: "bottom" });
    expect(expectOk(await call(s.client, "copy_file", { source: "src", destination: "dst", recursive: true }))).toBe(
      "Successfully copied src to dst (5,001 directories, 1 file; 6 bytes)",
    );
    expect(readChain(path.join(root, "dst"))).toEqual({ depth: 5000, leaf: "bottom" });
    for (const tree of ["src", "dst"]) {
      expect(expectOk(await call(s.client, "delete_file", { path: tree, recursive: true }))).toBe(`Successfully deleted ${tree} (5,001 entries)`);
    }
    expect(await readdir(root)).toEqual([]);
  }, 120_000);
});

describe("a 600 MiB file copied byte for byte", () => {
  let root: string;
  let remove: () => Promise<void>;
  let digest: string;
  const SIZE = 600 * 1024 * 1024;

  beforeAll(async () => {
    ({ dir: root, remove } = await tempDir("bfs-fileops-big-"));
    const handle = await open(path.join(root, "big.bin"), "w");
    try {
      const chunk = randomBytes(1024 * 1024 + 7);
      for (let at = 0; at < SIZE; at += chunk.length) await handle.write(chunk, 0, Math.min(chunk.length, SIZE - at));
    } finally {
      await handle.close();
    }
    digest = await sha256(path.join(root, "big.bin"));
  }, 60_000);
  afterAll(async () => {
    await remove();
  });

  it.each(STRATEGIES)(
    "under the %s strategy",
    async (name) => {
      const s = await inProcess([root], { strategy: name });
      try {
        const copy = `copy-${name}.bin`;
        expect(textOf(await call(s.client, "copy_file", { source: "big.bin", destination: copy }))).toBe(`Successfully copied big.bin to ${copy}`);
        expect((await stat(path.join(root, copy))).size).toBe(SIZE);
        expect(await sha256(path.join(root, copy))).toBe(digest);
        await rm(path.join(root, copy));
      } finally {
        await s.close();
      }
    },
    60_000,
  );
});
