/**
 * The sandbox's refusals as values (issue 24 item 4, STYLE 27): each refusal a tool can meet is
 * asserted by its kind and fields, as `refusalOf` reads them, and its wording is checked once here
 * (the wording lives in errors.ts `refusalText` alone). Under both platform strategies.
 */
import { execFileSync } from "node:child_process";
import { statSync } from "node:fs";
import { chmod, lstat, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { refusalOf, Sandbox } from "../../../src/sandbox/index.js";
import { describeEachStrategy, tempDir } from "../../support/fixtures.js";

let dir: string;
let remove: () => Promise<void>;
const at = (name: string): string => path.join(dir, name);

beforeEach(async () => {
  ({ dir, remove } = await tempDir("bfs-refusals-"));
  await writeFile(at("a.txt"), "alpha\n");
  await writeFile(at("b.txt"), "beta\n");
  await mkdir(at("sub/deeper"), { recursive: true });
  for (let i = 0; i < 50; i++) await writeFile(at(`sub/deeper/f${i}.txt`), `${i}\n`);
});
afterEach(() => remove());

/** The error `run` rejects with. */
async function failure(run: () => Promise<unknown>): Promise<Error> {
  try {
    await run();
  } catch (err) {
    return err as Error;
  }
  throw new Error("expected a refusal, the call succeeded");
}

describeEachStrategy("the sandbox's refusals, by kind and fields", (_, runtime) => {
  const sandbox = (): Sandbox => new Sandbox(runtime, [dir]);

  it("outside: the path as given and the allowed directories, nothing about what lies there", async () => {
    const err = await failure(() => sandbox().openFile("/etc/passwd"));
    expect(refusalOf(err)).toEqual({ kind: "outside", path: "/etc/passwd", allowed: [dir] });
    expect(err.message).toBe(`Access denied - path outside allowed directories: /etc/passwd not in ${dir}`);
  });

  it("notRegular: a directory, and a FIFO, where a regular file is needed", async () => {
    const err = await failure(() => sandbox().openFile(at("sub")));
    expect(refusalOf(err)).toEqual({ kind: "notRegular", path: at("sub"), what: "directory" });
    expect(err.message).toBe(`Not a regular file: ${at("sub")} (directory)`);
    execFileSync("mkfifo", [at("pipe")]);
    expect(refusalOf(await failure(() => sandbox().openFile(at("pipe"))))).toEqual({ kind: "notRegular", path: at("pipe"), what: "FIFO" });
  });

  it("noDirectory: a file where a directory is needed", async () => {
    const err = await failure(() => sandbox().openDirectory(at("a.txt")));
    expect(refusalOf(err)).toEqual({ kind: "noDirectory", path: at("a.txt"), not: "directory" });
    expect(err.message).toBe(`Not a directory: ${at("a.txt")}`);
  });

  it("exists: a move or copy onto a name that is taken replaces nothing", async () => {
    const moved = await failure(() => sandbox().move(at("a.txt"), at("b.txt")));
    expect(refusalOf(moved)).toEqual({ kind: "exists", path: at("b.txt") });
    expect(moved.message).toBe(`Destination already exists: ${at("b.txt")}`);
    const copied = await failure(() => sandbox().copy(at("a.txt"), at("b.txt"), { recursive: false }));
    expect(refusalOf(copied)).toEqual({ kind: "exists", path: at("b.txt") });
    expect(await readFile(at("b.txt"), "utf8")).toBe("beta\n");
  });

  it("linkWouldLeave: a relative link that would lead outside once moved or copied, named as given; not where it leads", async () => {
    // ../a.txt leads to a.txt from sub; from the allowed directory itself it would lead out of it.
    await symlink("../a.txt", at("sub/up"));
    for (const action of ["move", "copy"] as const) {
      const err = await failure(() =>
        action === "move" ? sandbox().move(at("sub/up"), at("up")) : sandbox().copy(at("sub/up"), at("up"), { recursive: false }),
      );
      expect(refusalOf(err)).toEqual({ kind: "linkWouldLeave", action, path: at("sub/up"), allowed: [dir] });
      expect(err.message).toBe(
        `Access denied - the symlink ${at("sub/up")} would lead outside the allowed directories (${dir}) from its new place: ` +
          `a link is ${action === "move" ? "moved" : "copied"} as a link, its target text unchanged`,
      );
      await expect(lstat(at("up"))).rejects.toThrow(/ENOENT/);
    }
    // In a tree copied one level up: named by its path in the source, and nothing of the copy is left.
    await symlink("../../a.txt", at("sub/deeper/up2"));
    const tree = await failure(() => sandbox().copy(at("sub/deeper"), at("deeper-copy"), { recursive: true }));
    expect(refusalOf(tree)).toEqual({ kind: "linkWouldLeave", action: "copy", path: at("sub/deeper/up2"), allowed: [dir] });
    await expect(lstat(at("deeper-copy"))).rejects.toThrow(/ENOENT/);
  });

  it("intoItself: a directory moved or copied into itself is refused before anything moves", async () => {
    for (const action of ["move", "copy"] as const) {
      const err = await failure(() =>
        action === "move" ? sandbox().move(at("sub"), at("sub/deeper/x")) : sandbox().copy(at("sub"), at("sub/deeper/x"), { recursive: true }),
      );
      expect(refusalOf(err)).toEqual({ kind: "intoItself", action, path: at("sub"), destination: at("sub/deeper/x") });
      expect(err.message).toBe(`Cannot ${action} ${at("sub")} to ${at("sub/deeper/x")}: the destination lies inside the source`);
    }
    expect(await readdir(at("sub/deeper"))).toHaveLength(50);
  });

  // A second file system beside the temp directory: /dev/shm (tmpfs) on most Linux machines; elsewhere none is at hand.
  const otherFs = ((): string | undefined => {
    try {
      return statSync("/dev/shm").dev !== statSync(os.tmpdir()).dev ? "/dev/shm" : undefined;
    } catch {
      return undefined;
    }
  })();

  it.skipIf(otherFs === undefined)(
    "crossDevice: a file or directory moved to another file system is refused naming both and the two calls that do it, nothing moved (skipped where no second file system such as /dev/shm is at hand)",
    async () => {
      const far = await mkdtemp(path.join(otherFs as string, "bfs-refusals-"));
      try {
        const box = new Sandbox(runtime, [dir, far]);
        for (const [name, isDir] of [
          ["a.txt", false],
          ["sub", true],
        ] as const) {
          const err = await failure(() => box.move(at(name), path.join(far, name)));
          expect(refusalOf(err)).toEqual({ kind: "crossDevice", path: at(name), destination: path.join(far, name), isDir });
          expect(err.message).toBe(
            `Cannot move ${at(name)} to ${path.join(far, name)}: they are on different file systems, which a move (a rename) cannot ` +
              `cross (EXDEV); nothing was moved. Copy it with copy_file${isDir ? " (recursive: true)" : ""}, then delete the source with delete_file.`,
          );
        }
        expect(await readFile(at("a.txt"), "utf8")).toBe("alpha\n");
        expect(await readdir(at("sub/deeper"))).toHaveLength(50);
        expect(await readdir(far)).toEqual([]);
      } finally {
        await rm(far, { recursive: true, force: true });
      }
    },
  );

  it("readOnly: a file with no write bit is not replaced, even by root", async () => {
    await chmod(at("a.txt"), 0o444);
    const err = await failure(() => sandbox().writeFile(at("a.txt"), "new\n"));
    const uid = String(process.getuid?.() ?? 0);
    const gid = String(process.getgid?.() ?? 0);
    expect(refusalOf(err)).toEqual({ kind: "readOnly", path: at("a.txt"), action: "write", mode: "0444", uid, gid });
    expect(err.message).toBe(
      `Cannot write ${at("a.txt")}: it is read-only for this server's user (mode 0444, owner uid ${uid}, group gid ${gid}); ` +
        "refusing to replace it. Change its permissions first if it should be written.",
    );
    expect(await readFile(at("a.txt"), "utf8")).toBe("alpha\n");
  });

  it("changed: an edit whose file another writer changed in place while it was read writes nothing", async () => {
    const err = await failure(() =>
      sandbox().rewrite(at("a.txt"), { dryRun: false }, async (source, sink) => {
        const bytes = await source.read(0, source.size);
        await writeFile(at("a.txt"), "ALPHA\n", { flag: "r+" });
        await sink?.write(bytes);
      }),
    );
    expect(refusalOf(err)).toEqual({ kind: "changed", path: at("a.txt") });
    expect(err.message).toBe(`File changed during edit: ${at("a.txt")}; no changes were written. Read it again and retry.`);
    expect(await readFile(at("a.txt"), "utf8")).toBe("ALPHA\n");
  });

  it("cancelled: a recursive delete and a recursive copy stopped part way say what was done", async () => {
    const stopDelete = new AbortController();
    const deleted = await failure(() =>
      sandbox().delete(at("sub"), { recursive: true, signal: stopDelete.signal, onProgress: (done) => done >= 5 && stopDelete.abort() }),
    );
    const r = refusalOf(deleted);
    expect(r).toMatchObject({ kind: "cancelled", action: "delete", path: at("sub") });
    expect(r?.kind === "cancelled" && r.kept).toMatch(/^\d+ entries inside it were deleted, the rest is still there$/);
    expect(deleted.message).toMatch(new RegExp(`^Deleting ${at("sub").replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} was cancelled: \\d+ entries`));

    const stopCopy = new AbortController();
    const copied = await failure(() =>
      sandbox().copy(at("sub"), at("copy"), { recursive: true, signal: stopCopy.signal, onProgress: (done) => done >= 5 && stopCopy.abort() }),
    );
    expect(refusalOf(copied)).toEqual({
      kind: "cancelled",
      action: "copy",
      path: at("sub"),
      kept: `nothing was copied: ${at("copy")} was not created`,
    });
    expect(copied.message).toBe(`Copy of ${at("sub")} cancelled; nothing was copied: ${at("copy")} was not created`);
  });
});
