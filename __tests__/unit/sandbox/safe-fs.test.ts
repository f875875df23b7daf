/**
 * Race-safe file operations (SPEC §4 "Changes from upstream behaviour", §5 Races).
 * Regression guards for the reference server's losses: a directory swapped for
 * a symlink to an outside directory, a destination created during a move, an
 * append made during an edit, permission bits reset by an edit, FIFO reads hanging.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { applyFileEdits } from "../../../src/lib.js";
import type { EditOperation } from "../../../src/editing/index.js";
import { __testHooks, __testing, isServerEntry, otherNamesNote } from "../../../src/sandbox/index.js";
import { editFileThrough } from "../../../src/editing/index.js";
import { createRuntime, type Runtime } from "../../../src/server/runtime.js";
import { describeEachStrategy } from "../../support/fixtures.js";

// The operations behind path validation, given paths as already validated: their own checks
// (the opened parent's real path, O_NOFOLLOW, fstat of the handle) are what these tests hold.
// Made per runtime: the suites under each strategy shadow these with their own strategy's.
const operations = (runtime: Runtime) => {
  const behind = (dirs: readonly string[]) => __testing.unvalidated(runtime, dirs);
  return {
    openRegularFile: async (p: string, dirs: readonly string[]) => (await behind(dirs).openFile(p)).handle,
    writeFileSafely: (p: string, content: string, dirs: readonly string[]) => behind(dirs).writeFile(p, content),
    editFileSafely: (p: string, edits: EditOperation[], dryRun: boolean, dirs: readonly string[]) => editFileThrough(behind(dirs), p, edits, dryRun),
    moveNoClobber: (source: string, destination: string, dirs: readonly string[]) => behind(dirs).move(source, destination),
    makeDirectorySafely: (p: string, dirs: readonly string[]) => behind(dirs).createDirectory(p),
  };
};
const { openRegularFile, writeFileSafely, editFileSafely, moveNoClobber, makeDirectorySafely } = operations(createRuntime());

const isWindows = process.platform === "win32";
const isLinux = process.platform === "linux";
const isRoot = process.getuid?.() === 0;

let root: string;
let allowed: string;
let outside: string;
let dirs: string[];

beforeEach(async () => {
  root = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), "safe-fs-")));
  allowed = path.join(root, "allowed");
  outside = path.join(root, "outside");
  await fs.mkdir(allowed);
  await fs.mkdir(outside);
  dirs = [allowed];
});

afterEach(async () => {
  delete __testHooks.afterOpenDir;
  delete __testHooks.beforeReplace;
  await fs.chmod(allowed, 0o755).catch(() => undefined);
  await fs.rm(root, { recursive: true, force: true });
});

const inAllowed = (...parts: string[]): string => path.join(allowed, ...parts);
const read = (p: string): Promise<string> => fs.readFile(p, "utf8");
const modeOf = async (p: string): Promise<number> => (await fs.stat(p)).mode & 0o7777;
const exists = (p: string): Promise<boolean> =>
  fs.lstat(p).then(
    () => true,
    () => false,
  );
const tempFiles = async (dir: string): Promise<string[]> => (await fs.readdir(dir)).filter((n) => n.endsWith(".tmp") || isServerEntry(n));

describeEachStrategy("race-safe file operations", (_, runtime) => {
  const { openRegularFile, writeFileSafely, editFileSafely, moveNoClobber, makeDirectorySafely } = operations(runtime);
  describe("openRegularFile", () => {
    it("opens a regular file for reading", async () => {
      await fs.writeFile(inAllowed("a.txt"), "hello");
      const handle = await openRegularFile(inAllowed("a.txt"), dirs);
      try {
        expect(await handle.readFile("utf8")).toBe("hello");
      } finally {
        await handle.close();
      }
    });

    it.skipIf(isWindows)("refuses a FIFO without hanging", async () => {
      const fifo = inAllowed("pipe");
      execFileSync("mkfifo", [fifo]);
      await expect(openRegularFile(fifo, dirs)).rejects.toThrow(`Not a regular file: ${fifo} (FIFO)`);
    });

    it.skipIf(isWindows)("refuses a character device", async () => {
      await expect(openRegularFile("/dev/null", ["/"])).rejects.toThrow("Not a regular file: /dev/null (character device)");
    });

    it("refuses a directory", async () => {
      await fs.mkdir(inAllowed("d"));
      await expect(openRegularFile(inAllowed("d"), dirs)).rejects.toThrow(`Not a regular file: ${inAllowed("d")} (directory)`);
    });

    it("refuses a symlink as the final component, even one pointing inside", async () => {
      await fs.writeFile(inAllowed("target.txt"), "inside");
      await fs.symlink(inAllowed("target.txt"), inAllowed("link.txt"));
      await expect(openRegularFile(inAllowed("link.txt"), dirs)).rejects.toThrow(`Refusing to open ${inAllowed("link.txt")}: it is a symbolic link`);
    });

    it("refuses a file whose parent resolves outside the allowed directories", async () => {
      await fs.writeFile(path.join(outside, "secret"), "SECRET");
      await fs.symlink(outside, inAllowed("escape"));
      await expect(openRegularFile(inAllowed("escape", "secret"), dirs)).rejects.toThrow("Access denied - path outside allowed directories");
    });

    it("names the path when the file does not exist", async () => {
      const err = await openRegularFile(inAllowed("missing.txt"), dirs).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Error);
      expect((err as Error).message).toContain(inAllowed("missing.txt"));
      expect((err as NodeJS.ErrnoException).code).toBe("ENOENT");
    });
  });

  describe("writeFileSafely", () => {
    it("creates a new file with the default (umask) mode", async () => {
      await fs.writeFile(inAllowed("reference"), "x");
      await writeFileSafely(inAllowed("new.txt"), "fresh", dirs);
      expect(await read(inAllowed("new.txt"))).toBe("fresh");
      expect(await modeOf(inAllowed("new.txt"))).toBe(await modeOf(inAllowed("reference")));
    });

    it.skipIf(isWindows).each([0o755, 0o600, 0o640])("replaces atomically and keeps mode %o", async (mode) => {
      const file = inAllowed("keep.sh");
      await fs.writeFile(file, "old");
      await fs.chmod(file, mode);
      const inoBefore = (await fs.stat(file)).ino;
      await writeFileSafely(file, "new", dirs);
      expect(await read(file)).toBe("new");
      expect(await modeOf(file)).toBe(mode);
      expect((await fs.stat(file)).ino).not.toBe(inoBefore);
      expect(await tempFiles(allowed)).toEqual([]);
    });

    // Running as root (containers), a rewrite would otherwise hand the user's file to root.
    it.skipIf(!isRoot)("keeps the owner of a replaced file when running as root, for writes and edits", async () => {
      const file = inAllowed("owned.txt");
      await fs.writeFile(file, "old\n");
      await fs.chown(file, 1234, 2345);
      await writeFileSafely(file, "new\n", dirs);
      expect(await fs.stat(file)).toMatchObject({ uid: 1234, gid: 2345 });
      await editFileSafely(file, [{ oldText: "new", newText: "newer" }], false, dirs);
      expect(await fs.stat(file)).toMatchObject({ uid: 1234, gid: 2345 });
      expect(await read(file)).toBe("newer\n");
    });

    it("says when the replaced file had other names (hard links), which keep the previous text, for writes and edits", async () => {
      const file = inAllowed("linked.txt");
      await fs.writeFile(file, "old\n");
      await fs.link(file, inAllowed("other-name.txt"));
      await fs.link(file, inAllowed("third-name.txt"));
      expect(await writeFileSafely(file, "new\n", dirs)).toEqual({ otherNames: 2 });
      expect(otherNamesNote(file, 2)).toBe(
        `\nNote: 2 other names (hard links) keep the previous text of ${file}: the new text was written as a new file under this name only.`,
      );
      expect(otherNamesNote(file, 0)).toBe("");
      expect(await read(inAllowed("other-name.txt"))).toBe("old\n");
      // Now a file of its own: nothing to say.
      expect(await writeFileSafely(file, "newer\n", dirs)).toEqual({ otherNames: 0 });
      expect(await writeFileSafely(inAllowed("fresh.txt"), "x", dirs)).toEqual({ otherNames: 0 });
      // A dry run says what the edit would leave.
      const dry = await editFileSafely(inAllowed("third-name.txt"), [{ oldText: "old", newText: "x" }], true, dirs);
      expect(dry).toMatch(/^```diff\n/);
      expect(
        dry.endsWith(
          `\nNote: 1 other name (a hard link) would keep the previous text of ${inAllowed("third-name.txt")}: the edit would write a new file under this name only.`,
        ),
      ).toBe(true);
      expect(await read(inAllowed("third-name.txt"))).toBe("old\n");
      const edited = await editFileSafely(inAllowed("other-name.txt"), [{ oldText: "old", newText: "edited" }], false, dirs);
      expect(edited).toMatch(/^```diff\n/);
      expect(
        edited.endsWith(
          `\nNote: 1 other name (a hard link) keeps the previous text of ${inAllowed("other-name.txt")}: the new text was written as a new file under this name only.`,
        ),
      ).toBe(true);
      expect(await read(inAllowed("third-name.txt"))).toBe("old\n");
      const alone = await editFileSafely(inAllowed("other-name.txt"), [{ oldText: "edited", newText: "again" }], false, dirs);
      expect(alone).not.toContain("Note:");
    });

    it("refuses a directory destination and creates nothing", async () => {
      await fs.mkdir(inAllowed("dir"));
      await fs.writeFile(inAllowed("dir", "inner"), "kept");
      await expect(writeFileSafely(inAllowed("dir"), "x", dirs)).rejects.toThrow(`Cannot write ${inAllowed("dir")}: it is a directory`);
      expect(await read(inAllowed("dir", "inner"))).toBe("kept");
      expect(await fs.readdir(allowed)).toEqual(["dir"]);
    });

    it("refuses a symlink destination and leaves link and target alone", async () => {
      await fs.writeFile(path.join(outside, "target"), "outside");
      await fs.symlink(path.join(outside, "target"), inAllowed("link"));
      await expect(writeFileSafely(inAllowed("link"), "x", dirs)).rejects.toThrow("it is a symbolic link");
      expect(await read(path.join(outside, "target"))).toBe("outside");
      expect((await fs.lstat(inAllowed("link"))).isSymbolicLink()).toBe(true);
      expect(await fs.readdir(allowed)).toEqual(["link"]);
    });

    it("leaves the old content and no temp file when the replace fails", async () => {
      await fs.writeFile(inAllowed("f.txt"), "old");
      __testHooks.beforeReplace = () => {
        throw new Error("injected failure");
      };
      await expect(writeFileSafely(inAllowed("f.txt"), "new", dirs)).rejects.toThrow("injected failure");
      expect(await read(inAllowed("f.txt"))).toBe("old");
      expect(await tempFiles(allowed)).toEqual([]);
    });

    it.skipIf(isRoot || isWindows)("leaves the old content and no temp file in a read-only directory", async () => {
      await fs.writeFile(inAllowed("f.txt"), "old");
      await fs.chmod(allowed, 0o555);
      const err = await writeFileSafely(inAllowed("f.txt"), "new", dirs).catch((e: unknown) => e);
      await fs.chmod(allowed, 0o755);
      expect((err as Error).message).toMatch(new RegExp(`^Cannot write ${inAllowed("f.txt")}: .*EACCES`));
      expect(await read(inAllowed("f.txt"))).toBe("old");
      expect(await tempFiles(allowed)).toEqual([]);
    });

    it("rejects a path with a NUL byte without writing anything", async () => {
      await expect(writeFileSafely(inAllowed("a\0b"), "x", dirs)).rejects.toThrow(`Cannot write ${inAllowed("a\\x00b")}`);
      expect(await fs.readdir(allowed)).toEqual([]);
    });

    it("refuses when the parent directory does not exist", async () => {
      await expect(writeFileSafely(inAllowed("no", "f.txt"), "x", dirs)).rejects.toThrow(
        `Cannot write ${inAllowed("no", "f.txt")}: parent directory does not exist`,
      );
    });

    it("refuses a parent that resolves outside and writes nothing there", async () => {
      await fs.symlink(outside, inAllowed("escape"));
      await expect(writeFileSafely(inAllowed("escape", "x"), "x", dirs)).rejects.toThrow("Access denied - path outside allowed directories");
      expect(await fs.readdir(outside)).toEqual([]);
    });
  });

  describe("editFileSafely", () => {
    const edits = [{ oldText: "beta", newText: "BETA $& $1 $$" }];

    it("returns exactly the diff applyFileEdits returns, and keeps the file's CRLF endings (SPEC §12)", async () => {
      const file = inAllowed("e.txt");
      await fs.writeFile(file, "alpha\r\nbeta\r\ngamma\r\n");
      const expected = await applyFileEdits(file, edits, true);
      expect(await editFileSafely(file, edits, false, dirs)).toBe(expected);
      expect(await read(file)).toBe("alpha\r\nBETA $& $1 $$\r\ngamma\r\n");
    });

    it("does not touch the file on dryRun", async () => {
      const file = inAllowed("e.txt");
      await fs.writeFile(file, "alpha\nbeta\n");
      const before = await fs.stat(file, { bigint: true });
      const diff = await editFileSafely(file, edits, true, dirs);
      expect(diff).toContain("+BETA $& $1 $$");
      const after = await fs.stat(file, { bigint: true });
      expect([after.ino, after.mtimeNs]).toEqual([before.ino, before.mtimeNs]);
      expect(await read(file)).toBe("alpha\nbeta\n");
    });

    it.skipIf(isWindows)("keeps permission bits (upstream reset them to 0644)", async () => {
      const file = inAllowed("run.sh");
      await fs.writeFile(file, "echo beta\n");
      await fs.chmod(file, 0o751);
      await editFileSafely(file, edits, false, dirs);
      expect(await modeOf(file)).toBe(0o751);
    });

    it("refuses when the file is appended to during the edit, keeping the append", async () => {
      const file = inAllowed("e.txt");
      await fs.writeFile(file, "alpha\nbeta\n");
      __testHooks.beforeReplace = () => fs.appendFile(file, "appended\n");
      await expect(editFileSafely(file, edits, false, dirs)).rejects.toThrow(
        `File changed during edit: ${file}; no changes were written. Read it again and retry.`,
      );
      expect(await read(file)).toBe("alpha\nbeta\nappended\n");
      expect(await tempFiles(allowed)).toEqual([]);
    });

    it("refuses when the file is replaced by another one during the edit", async () => {
      const file = inAllowed("e.txt");
      await fs.writeFile(file, "alpha\nbeta\n");
      __testHooks.beforeReplace = async () => {
        await fs.writeFile(inAllowed("other"), "alpha\nbeta\n");
        await fs.rename(inAllowed("other"), file);
      };
      await expect(editFileSafely(file, edits, false, dirs)).rejects.toThrow("File changed during edit");
      expect(await read(file)).toBe("alpha\nbeta\n");
      expect(await tempFiles(allowed)).toEqual([]);
    });

    it("leaves the file untouched when an edit does not match", async () => {
      const file = inAllowed("e.txt");
      await fs.writeFile(file, "alpha\n");
      await expect(editFileSafely(file, edits, false, dirs)).rejects.toThrow("Could not find exact match for edit:\nbeta");
      expect(await read(file)).toBe("alpha\n");
      expect(await tempFiles(allowed)).toEqual([]);
    });

    it.skipIf(isWindows)("refuses a FIFO and a symlink", async () => {
      execFileSync("mkfifo", [inAllowed("pipe")]);
      await fs.writeFile(inAllowed("real"), "beta");
      await fs.symlink(inAllowed("real"), inAllowed("link"));
      await expect(editFileSafely(inAllowed("pipe"), edits, false, dirs)).rejects.toThrow("Not a regular file");
      await expect(editFileSafely(inAllowed("link"), edits, false, dirs)).rejects.toThrow("symbolic link");
      expect(await read(inAllowed("real"))).toBe("beta");
    });
  });

  describe("moveNoClobber", () => {
    it("moves a file", async () => {
      await fs.writeFile(inAllowed("a"), "A");
      await moveNoClobber(inAllowed("a"), inAllowed("b"), dirs);
      expect(await read(inAllowed("b"))).toBe("A");
      expect(await exists(inAllowed("a"))).toBe(false);
    });

    it("moves a directory with its contents", async () => {
      await fs.mkdir(inAllowed("d", "sub"), { recursive: true });
      await fs.writeFile(inAllowed("d", "sub", "f"), "F");
      await fs.mkdir(inAllowed("into"));
      await moveNoClobber(inAllowed("d"), inAllowed("into", "moved"), dirs);
      expect(await read(inAllowed("into", "moved", "sub", "f"))).toBe("F");
      expect(await exists(inAllowed("d"))).toBe(false);
    });

    it.skipIf(isWindows)("moves a symlink itself, not its target", async () => {
      await fs.writeFile(inAllowed("t"), "T");
      await fs.symlink("t", inAllowed("l"));
      await moveNoClobber(inAllowed("l"), inAllowed("l2"), dirs);
      expect(await fs.readlink(inAllowed("l2"))).toBe("t");
      expect(await read(inAllowed("t"))).toBe("T");
      expect(await exists(inAllowed("l"))).toBe(false);
    });

    const destinations: [string, (p: string) => Promise<unknown>][] = [
      ["file", (p) => fs.writeFile(p, "precious")],
      ["empty directory", (p) => fs.mkdir(p)],
      [
        "directory",
        async (p) => {
          await fs.mkdir(p);
          await fs.writeFile(path.join(p, "x"), "precious");
        },
      ],
      ["dangling symlink", (p) => fs.symlink("nowhere", p)],
    ];
    describe.each(destinations)("refuses an existing %s destination", (_kind, makeDestination) => {
      it.each([
        ["file", (p: string) => fs.writeFile(p, "source")],
        [
          "directory",
          async (p: string) => {
            await fs.mkdir(p);
            await fs.writeFile(path.join(p, "s"), "source");
          },
        ],
      ])("when moving a %s", async (_s, makeSource) => {
        await makeSource(inAllowed("src"));
        await makeDestination(inAllowed("dst"));
        const snapshot = async () => execFileSync("ls", ["-lR", "--time-style=+", allowed], { encoding: "utf8" });
        const before = isWindows ? "" : await snapshot();
        await expect(moveNoClobber(inAllowed("src"), inAllowed("dst"), dirs)).rejects.toThrow(`Destination already exists: ${inAllowed("dst")}`);
        expect(isWindows ? "" : await snapshot()).toBe(before);
        expect(await exists(inAllowed("src"))).toBe(true);
      });
    });

    it("names the source when it does not exist", async () => {
      await expect(moveNoClobber(inAllowed("nope"), inAllowed("b"), dirs)).rejects.toThrow(
        `Cannot move ${inAllowed("nope")} to ${inAllowed("b")}: the source does not exist`,
      );
      expect(await exists(inAllowed("b"))).toBe(false);
    });

    it("leaves no placeholder when a directory cannot be moved into itself", async () => {
      await fs.mkdir(inAllowed("d"));
      await expect(moveNoClobber(inAllowed("d"), inAllowed("d", "inner"), dirs)).rejects.toThrow(
        `Cannot move ${inAllowed("d")} to ${inAllowed("d", "inner")}`,
      );
      expect(await fs.readdir(inAllowed("d"))).toEqual([]);
    });

    it("refuses a destination whose parent resolves outside", async () => {
      await fs.writeFile(inAllowed("a"), "A");
      await fs.symlink(outside, inAllowed("escape"));
      await expect(moveNoClobber(inAllowed("a"), inAllowed("escape", "a"), dirs)).rejects.toThrow("Access denied");
      expect(await fs.readdir(outside)).toEqual([]);
      expect(await read(inAllowed("a"))).toBe("A");
    });

    // The competing create waits a varying number of filesystem round trips so
    // that it lands before, during and after the move's own steps.
    it("never loses a destination file created during the move (N=200)", async () => {
      for (let i = 0; i < 200; i++) {
        const src = inAllowed(`src-${i}`);
        const dst = inAllowed(`dst-${i}`);
        await fs.writeFile(src, `src ${i}`);
        const [moved, created] = await Promise.all([
          moveNoClobber(src, dst, dirs).then(
            () => true,
            (e: Error) => e,
          ),
          (async () => {
            for (let t = 0; t < i % 12; t++) await fs.stat(allowed);
            return fs.writeFile(dst, `dst ${i}`, { flag: "wx" }).then(
              () => true,
              () => false,
            );
          })(),
        ]);
        if (created) {
          expect(moved).toBeInstanceOf(Error);
          // Found by the check before the rename, the refusal also names the path inside the directory found there.
          const inside = `, a directory: to put src-${i} inside it, pass destination ${path.join(dst, `src-${i}`)}`;
          expect([`Destination already exists: ${dst}`, `Destination already exists: ${dst}${inside}`]).toContain((moved as Error).message);
          expect(await read(dst)).toBe(`dst ${i}`);
          expect(await read(src)).toBe(`src ${i}`);
        } else {
          expect(moved).toBe(true);
          expect(await read(dst)).toBe(`src ${i}`);
          expect(await exists(src)).toBe(false);
        }
      }
    });

    // A directory is renamed into place with no placeholder made first (SPEC §24): an empty directory another
    // program makes at the destination in the window before the rename is replaced, and what it then writes
    // there lands in the moved tree. Nothing written is lost either way; anything there before the rename is kept.
    it("never loses what is created at a directory's destination during the move (N=100)", async () => {
      for (let i = 0; i < 100; i++) {
        const src = inAllowed(`src-${i}`);
        const dst = inAllowed(`dst-${i}`);
        await fs.mkdir(src);
        await fs.writeFile(path.join(src, "s"), `src ${i}`);
        const [moved, created] = await Promise.all([
          moveNoClobber(src, dst, dirs).then(
            () => true,
            (e: Error) => e,
          ),
          (async () => {
            for (let t = 0; t < i % 12; t++) await fs.stat(allowed);
            try {
              await fs.mkdir(dst);
            } catch {
              return false;
            }
            await fs.writeFile(path.join(dst, "d"), `dst ${i}`);
            return true;
          })(),
        ]);
        if (moved !== true) {
          expect(created).toBe(true);
          // Found by the check before the rename, the refusal also names the path inside the directory found there.
          const inside = `, a directory: to put src-${i} inside it, pass destination ${path.join(dst, `src-${i}`)}`;
          expect([`Destination already exists: ${dst}`, `Destination already exists: ${dst}${inside}`]).toContain((moved as Error).message);
          expect(await fs.readdir(dst)).toEqual(["d"]);
          expect(await read(path.join(src, "s"))).toBe(`src ${i}`);
        } else {
          expect(await exists(src)).toBe(false);
          expect((await fs.readdir(dst)).sort()).toEqual(created ? ["d", "s"] : ["s"]);
          expect(await read(path.join(dst, "s"))).toBe(`src ${i}`);
          if (created) expect(await read(path.join(dst, "d"))).toBe(`dst ${i}`);
        }
      }
    });
  });

  describe("makeDirectorySafely", () => {
    it("creates nested directories and succeeds when they exist", async () => {
      await makeDirectorySafely(inAllowed("a", "b", "c"), dirs);
      expect((await fs.stat(inAllowed("a", "b", "c"))).isDirectory()).toBe(true);
      await fs.writeFile(inAllowed("a", "b", "c", "keep"), "k");
      await makeDirectorySafely(inAllowed("a", "b", "c"), dirs);
      expect(await read(inAllowed("a", "b", "c", "keep"))).toBe("k");
    });

    it("refuses when the path is an existing file", async () => {
      await fs.writeFile(inAllowed("f"), "file");
      await expect(makeDirectorySafely(inAllowed("f"), dirs)).rejects.toThrow(`Cannot create directory ${inAllowed("f")}`);
      await expect(makeDirectorySafely(inAllowed("f", "sub"), dirs)).rejects.toThrow("not a directory");
      expect(await read(inAllowed("f"))).toBe("file");
    });

    it("refuses a path outside the allowed directories", async () => {
      await expect(makeDirectorySafely(path.join(outside, "x"), dirs)).rejects.toThrow("Access denied");
      expect(await fs.readdir(outside)).toEqual([]);
    });

    it.skipIf(isWindows)("refuses a component that is a symlink to outside", async () => {
      await fs.symlink(outside, inAllowed("escape"));
      await expect(makeDirectorySafely(inAllowed("escape", "x", "y"), dirs)).rejects.toThrow("Access denied");
      expect(await fs.readdir(outside)).toEqual([]);
    });

    it.skipIf(isWindows)("follows a symlink that stays inside, like mkdir -p", async () => {
      await fs.mkdir(inAllowed("real"));
      await fs.symlink(inAllowed("real"), inAllowed("alias"));
      await makeDirectorySafely(inAllowed("alias", "x"), dirs);
      expect((await fs.stat(inAllowed("real", "x"))).isDirectory()).toBe(true);
    });

    it.skipIf(isWindows)("refuses a component swapped for a symlink after the ancestor was opened", async () => {
      __testHooks.afterOpenDir = async (real: string) => {
        if (real === allowed) await fs.symlink(outside, inAllowed("a"));
      };
      await expect(makeDirectorySafely(inAllowed("a", "b"), dirs)).rejects.toThrow(
        `Cannot create directory ${inAllowed("a", "b")}: ${inAllowed("a")} is a symbolic link; refusing to follow it`,
      );
      expect(await fs.readdir(outside)).toEqual([]);
    });
  });
});

// These rely on acting through an opened directory; the portable mode has a
// documented window here, so they run where /proc/self/fd exists.
describe("directory swapped for a symlink after it was opened", () => {
  /** Moves `allowed/sub` aside to `allowed/held` and puts a symlink to `outside` in its place. */
  const swapSub = async (): Promise<void> => {
    await fs.rename(inAllowed("sub"), inAllowed("held"));
    await fs.symlink(outside, inAllowed("sub"));
  };
  const swapOnce = (): void => {
    let done = false;
    __testHooks.afterOpenDir = async (real: string) => {
      if (!done && real === inAllowed("sub")) {
        done = true;
        await swapSub();
      }
    };
  };

  beforeEach(async () => {
    await fs.mkdir(inAllowed("sub"));
    await fs.writeFile(inAllowed("sub", "f"), "inside");
    await fs.writeFile(path.join(outside, "f"), "SECRET");
  });

  it.skipIf(!isLinux)("writeFileSafely writes into the opened directory", async () => {
    swapOnce();
    await writeFileSafely(inAllowed("sub", "x"), "data", dirs);
    expect(await read(inAllowed("held", "x"))).toBe("data");
    expect((await fs.readdir(outside)).sort()).toEqual(["f"]);
  });

  it.skipIf(!isLinux)("editFileSafely edits the file in the opened directory", async () => {
    swapOnce();
    await editFileSafely(inAllowed("sub", "f"), [{ oldText: "inside", newText: "edited" }], false, dirs);
    expect(await read(inAllowed("held", "f"))).toBe("edited");
    expect(await read(path.join(outside, "f"))).toBe("SECRET");
  });

  it.skipIf(!isLinux)("openRegularFile reads the file in the opened directory", async () => {
    swapOnce();
    const handle = await openRegularFile(inAllowed("sub", "f"), dirs);
    try {
      expect(await handle.readFile("utf8")).toBe("inside");
    } finally {
      await handle.close();
    }
  });

  it.skipIf(!isLinux)("moveNoClobber moves out of the opened directory", async () => {
    swapOnce();
    await moveNoClobber(inAllowed("sub", "f"), inAllowed("g"), dirs);
    expect(await read(inAllowed("g"))).toBe("inside");
    expect(await exists(inAllowed("held", "f"))).toBe(false);
    expect(await read(path.join(outside, "f"))).toBe("SECRET");
  });

  it.skipIf(!isLinux)("moveNoClobber refuses a destination parent that now resolves outside", async () => {
    swapOnce();
    await expect(moveNoClobber(inAllowed("sub", "f"), inAllowed("sub", "g"), dirs)).rejects.toThrow("Access denied");
    expect(await read(inAllowed("held", "f"))).toBe("inside");
    expect((await fs.readdir(outside)).sort()).toEqual(["f"]);
  });

  it.skipIf(!isLinux)("makeDirectorySafely creates inside the opened directory", async () => {
    swapOnce();
    await makeDirectorySafely(inAllowed("sub", "x", "y"), dirs);
    expect((await fs.stat(inAllowed("held", "x", "y"))).isDirectory()).toBe(true);
    expect((await fs.readdir(outside)).sort()).toEqual(["f"]);
  });
});

describe("concurrent swapping of a directory and a symlink to outside", () => {
  let swapper: ChildProcess | undefined;

  afterEach(async () => {
    if (swapper && swapper.exitCode === null && swapper.signalCode === null) {
      const exited = once(swapper, "exit");
      swapper.kill("SIGKILL");
      await exited;
    }
    swapper = undefined;
  });

  // Cycles allowed/sub: real directory → moved aside → symlink to outside → removed → new real directory.
  const SWAP_LOOP = `
    const fs = require("node:fs");
    const [sub, outside, heldPrefix] = process.argv.slice(1);
    fs.writeSync(1, "ready\\n");
    const end = Date.now() + 60000;
    for (let i = 0; Date.now() < end; i++) {
      try { fs.renameSync(sub, heldPrefix + i); } catch {}
      try { fs.symlinkSync(outside, sub); } catch {}
      try { fs.unlinkSync(sub); } catch {}
      try { fs.mkdirSync(sub); } catch {}
    }`;

  it.skipIf(!isLinux)("never creates or reads anything in outside (N=200)", async () => {
    await fs.writeFile(path.join(outside, "secret"), "SECRET");
    await fs.mkdir(inAllowed("sub"));
    swapper = spawn(process.execPath, ["-e", SWAP_LOOP, inAllowed("sub"), outside, inAllowed("held-")], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    await once(swapper.stdout!, "data");

    const failures: string[] = [];
    for (let i = 0; i < 200; i++) {
      const results = await Promise.allSettled([
        writeFileSafely(inAllowed("sub", `w${i}`), "data", dirs),
        makeDirectorySafely(inAllowed("sub", `m${i}`, "deep"), dirs),
        openRegularFile(inAllowed("sub", "secret"), dirs).then(async (h) => {
          try {
            return await h.readFile("utf8");
          } finally {
            await h.close();
          }
        }),
      ]);
      for (const r of results) {
        if (r.status === "rejected") failures.push((r.reason as Error).message);
        else expect(r.value).not.toBe("SECRET");
      }
    }
    expect(await fs.readdir(outside)).toEqual(["secret"]);
    expect(await read(path.join(outside, "secret"))).toBe("SECRET");
    for (const message of failures) expect(message).toContain(inAllowed("sub"));
  });
});
