/**
 * edit_file never loses an edit (SPEC §12): calls on one file in one server run
 * one after another, another server process's replace cannot slip between the
 * last check and the rename, and a file's owner and read-only mode are respected.
 */
import { spawnSync } from "node:child_process";
import { appendFile, chmod, chown, lutimes, readdir, readFile, rename, stat, symlink, truncate, unlink, utimes, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { EditOperation } from "../../src/editing/index.js";
import { __testHooks, __testing, isServerEntry, type RewriteEngine, type RewriteSource } from "../../src/sandbox/index.js";
import { editFileThrough } from "../../src/editing/index.js";
import { createRuntime, type Runtime } from "../../src/server/runtime.js";
import { describeEachStrategy, tempDir } from "../support/fixtures.js";
import { IS_ROOT, NOBODY, NOBODY_SUITE, NOBODY_UNAVAILABLE, serverAsNobody } from "../support/privileges.js";
import { call, connect, textOf, type Connected } from "../support/spawn.js";

let root: string;
let remove: () => Promise<void>;
const servers: Connected[] = [];

beforeAll(async () => {
  ({ dir: root, remove } = await tempDir("bfs-edit-safety-"));
});
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await remove();
});
afterEach(() => {
  delete __testHooks.beforeReplace;
  delete __testHooks.afterCheck;
});

// Two servers on `root`, started once: most suites use the first.
async function server(which = 0): Promise<Connected> {
  while (servers.length <= which) servers.push(await connect([root]));
  return servers[which]!;
}

const edit = (s: Connected, file: string, oldText: string, newText: string) =>
  call(s.client, "edit_file", { path: file, edits: [{ oldText, newText }] });

// The in-process cases call the operations behind path validation (the paths here are already real).
// The runtime of the in-process suites that run on the platform's own strategy; the one that runs both passes its own.
const platformRuntime = createRuntime();
const editFileSafely = (file: string, edits: EditOperation[], dryRun: boolean, dirs: readonly string[], runtime: Runtime = platformRuntime) =>
  editFileThrough(__testing.unvalidated(runtime, dirs), file, edits, dryRun);
const rewriteFile = <T>(
  file: string,
  dirs: readonly string[],
  options: { dryRun: boolean; signal?: AbortSignal },
  engine: RewriteEngine<T>,
  runtime: Runtime = platformRuntime,
) => __testing.unvalidated(runtime, dirs).rewrite(file, options, engine);
const { swapLockName: lockNameOf, lockTextFor } = __testing;

const leftovers = async (dir: string) => (await readdir(dir)).filter((n) => n.endsWith(".tmp") || isServerEntry(n));

describe("two edits of one file in one server", () => {
  it("both succeed and both are in the file, every round (120 rounds, sent together)", async () => {
    const s = await server();
    const file = path.join(root, "pair.txt");
    await writeFile(file, "alpha=0\nbeta=0\n");
    let alpha = 0;
    let beta = 0;
    for (let round = 0; round < 120; round++) {
      const [a, b] = await Promise.all([
        edit(s, file, `alpha=${alpha}\n`, `alpha=${alpha + 1}\n`),
        edit(s, file, `beta=${beta}\n`, `beta=${beta + 1}\n`),
      ]);
      if (!a.isError) alpha++;
      if (!b.isError) beta++;
      // A success must be in the file; with the per-file lock there is nothing to refuse.
      expect([a.isError, b.isError], `${textOf(a)}\n${textOf(b)}`).toEqual([undefined, undefined]);
      expect(await readFile(file, "utf8")).toBe(`alpha=${alpha}\nbeta=${beta}\n`);
    }
    expect(await leftovers(root)).toEqual([]);
  });

  it("write_file and edit_file sent together: the edit is either in the written text or refused", async () => {
    const s = await server();
    const file = path.join(root, "mixed.txt");
    for (let round = 0; round < 40; round++) {
      await writeFile(file, "keep\nx=0\n");
      const [w, e] = await Promise.all([
        call(s.client, "write_file", { path: file, content: `keep\nx=0\nwritten=${round}\n` }),
        edit(s, file, "x=0\n", "x=1\n"),
      ]);
      expect(w.isError).toBeFalsy();
      const now = await readFile(file, "utf8");
      // Serialised: either the edit ran first (and was then overwritten, as any later write would)
      // or second, on the written text; it never reports success for text it did not see.
      expect([`keep\nx=0\nwritten=${round}\n`, `keep\nx=1\nwritten=${round}\n`]).toContain(now);
      if (now.includes("x=1")) expect(e.isError).toBeFalsy();
    }
  });
});

describe("edit_file and move_file on one file in one server", () => {
  it("never reports an edit that is in neither place: the edit lands before the move or is refused", async () => {
    const s = await server();
    for (let round = 0; round < 40; round++) {
      const from = path.join(root, `moving-${round}.txt`);
      const to = path.join(root, `moved-${round}.txt`);
      await writeFile(from, "one\n");
      const [e, m] = await Promise.all([edit(s, from, "one", "1"), call(s.client, "move_file", { source: from, destination: to })]);
      expect(m.isError, textOf(m)).toBeFalsy();
      await expect(stat(from)).rejects.toThrow(/ENOENT/);
      expect(await readFile(to, "utf8")).toBe(e.isError ? "one\n" : "1\n");
    }
    expect(await leftovers(root)).toEqual([]);
  });
});

describe("two server processes editing one file", () => {
  it("every reported success is in the file; a lost race is refused as 'changed during edit'", async () => {
    const [p, q] = [await server(0), await server(1)];
    const file = path.join(root, "shared.txt");
    await writeFile(file, "alpha=0\nbeta=0\n");
    const N = 100;
    const run = async (s: Connected, key: string) => {
      let refused = 0;
      for (let i = 0; i < N; ) {
        const result = await edit(s, file, `${key}=${i}\n`, `${key}=${i + 1}\n`);
        if (!result.isError) {
          i++;
          continue;
        }
        // A success that was lost would surface here as "Could not find exact match".
        expect(textOf(result)).toMatch(/^File changed during edit: .*shared\.txt; no changes were written/);
        if (++refused > 20 * N) throw new Error(`${key}: too many refusals`);
      }
      return refused;
    };
    await Promise.all([run(p, "alpha"), run(q, "beta")]);
    expect(await readFile(file, "utf8")).toBe(`alpha=${N}\nbeta=${N}\n`);
    expect(await leftovers(root)).toEqual([]);
  });
});

describe("another writer's replace around the swap (in-process, deterministic)", () => {
  it("a rename by another writer before the check is detected: the edit is refused and theirs kept", async () => {
    const file = path.join(root, "renamed.txt");
    await writeFile(file, "one\ntwo\n");
    __testHooks.beforeReplace = async () => {
      delete __testHooks.beforeReplace;
      await writeFile(`${file}.theirs`, "theirs\n");
      await rename(`${file}.theirs`, file);
    };
    await expect(editFileSafely(file, [{ oldText: "two", newText: "2" }], false, [root])).rejects.toThrow(
      /^File changed during edit: .*renamed\.txt; no changes were written/,
    );
    expect(await readFile(file, "utf8")).toBe("theirs\n");
    expect(await leftovers(root)).toEqual([]);
  });

  it("another process holding the swap lock is waited for, and its rename is then seen", async () => {
    const file = path.join(root, "locked.txt");
    await writeFile(file, "one\ntwo\n");
    const lock = path.join(root, lockNameOf("locked.txt"));
    // Play the other process: it holds the lock (a live process of this machine: this one), renames
    // its version in and lets go. Holders keep the lock for their whole change, so the edit waits
    // for it and then works on their version: both changes end up in the file, in that order.
    await symlink(lockTextFor(process.pid), lock);
    setTimeout(() => {
      void (async () => {
        await writeFile(`${file}.theirs`, "theirs\ntwo\n");
        await rename(`${file}.theirs`, file);
        await unlink(lock);
      })();
    }, 20);
    await editFileSafely(file, [{ oldText: "two", newText: "2" }], false, [root]);
    expect(await readFile(file, "utf8")).toBe("theirs\n2\n");
    expect(await leftovers(root)).toEqual([]);
  });

  it("a lock naming a process of this machine that is gone is broken at once, whatever its age", async () => {
    const file = path.join(root, "dead-holder.txt");
    await writeFile(file, "one\ntwo\n");
    const gone = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
    const lock = path.join(root, lockNameOf("dead-holder.txt"));
    await symlink(lockTextFor(Number(gone.stdout)), lock);
    // Fresh for an hour: only the holder being gone can break it, so an edit that succeeds proves that rule.
    const future = new Date(Date.now() + 3_600_000);
    await lutimes(lock, future, future);
    await editFileSafely(file, [{ oldText: "two", newText: "2" }], false, [root]);
    expect(await readFile(file, "utf8")).toBe("one\n2\n");
    expect(await leftovers(root)).toEqual([]);
  });

  it("a lock left behind by a process that died is broken, not waited on forever", async () => {
    const file = path.join(root, "stale.txt");
    await writeFile(file, "one\ntwo\n");
    const lock = path.join(root, lockNameOf("stale.txt"));
    await writeFile(lock, "");
    const past = new Date(Date.now() - 60_000);
    await utimes(lock, past, past);
    await editFileSafely(file, [{ oldText: "two", newText: "2" }], false, [root]);
    expect(await readFile(file, "utf8")).toBe("one\n2\n");
    expect(await leftovers(root)).toEqual([]);
  });

  it("releases every in-process lock, after success and after failure", async () => {
    const file = path.join(root, "released.txt");
    await writeFile(file, "one\n");
    await editFileSafely(file, [{ oldText: "one", newText: "1" }], false, [root]);
    await expect(editFileSafely(file, [{ oldText: "absent", newText: "x" }], false, [root])).rejects.toThrow("Could not find exact match");
    expect(platformRuntime.locks.size).toBe(0);
  });
});

describe("rewriteFile: the primitive an edit engine plugs into (in-process)", () => {
  /** Reads `source` in 4-byte chunks, last chunk first (so not in order), and returns the text. */
  async function readBackwards(source: RewriteSource): Promise<string> {
    const parts: Buffer[] = [];
    for (let end = source.size; end > 0; end -= 4) parts.unshift(await source.read(Math.max(0, end - 4), end - Math.max(0, end - 4)));
    return Buffer.concat(parts).toString("utf8");
  }

  it("passes the engine's own error on as it is, and words a failure of the swap around it, the file unchanged", async () => {
    const file = path.join(root, "engine-error.txt");
    await writeFile(file, "one\n");
    const own = new Error("the engine's own report");
    await expect(rewriteFile(file, [root], { dryRun: false }, async () => Promise.reject(own))).rejects.toBe(own);
    __testHooks.afterCheck = async () => {
      delete __testHooks.afterCheck;
      throw new Error("a failure after the engine");
    };
    await expect(rewriteFile(file, [root], { dryRun: false }, async (_source, sink) => void (await sink!.write("two\n")))).rejects.toThrow(
      `Cannot edit ${file}: a failure after the engine; no changes were written: the file keeps its previous content`,
    );
    expect(await readFile(file, "utf8")).toBe("one\n");
    expect(await leftovers(root)).toEqual([]);
  });

  it("runs a chunked engine, keeps an append made before the rename, and reports it", async () => {
    const file = path.join(root, "engine.txt");
    await writeFile(file, "one two three\n");
    __testHooks.afterCheck = async () => {
      delete __testHooks.afterCheck;
      await appendFile(file, "late\n");
    };
    const done = await rewriteFile(file, [root], { dryRun: false }, async (source, sink) => {
      const text = await readBackwards(source);
      await sink!.write(text.toUpperCase().slice(0, 5));
      await sink!.write(Buffer.from(text.toUpperCase().slice(5)));
      return text.length;
    });
    expect(done).toEqual({ value: 14, appendedBytes: 5, otherNames: 0 });
    expect(await readFile(file, "utf8")).toBe("ONE TWO THREE\nlate\n");
    expect(await leftovers(root)).toEqual([]);
  });

  it("hands a dry run no sink and writes nothing; an engine's own error passes through and leaves no temp file", async () => {
    const file = path.join(root, "engine-dry.txt");
    await writeFile(file, "same\n");
    const dry = await rewriteFile(file, [root], { dryRun: true }, async (source, sink) => [source.size, sink]);
    expect(dry).toEqual({ value: [5, null], appendedBytes: 0, otherNames: 0 });
    const failing = rewriteFile(file, [root], { dryRun: false }, async (_source, sink) => {
      await sink!.write("partial");
      throw new Error("engine says no");
    });
    await expect(failing).rejects.toThrow(/^engine says no$/);
    expect(await readFile(file, "utf8")).toBe("same\n");
    expect(await leftovers(root)).toEqual([]);
  });

  it("a cancelled rewrite writes nothing", async () => {
    const file = path.join(root, "engine-cancel.txt");
    await writeFile(file, "same\n");
    const controller = new AbortController();
    const cancelled = rewriteFile(file, [root], { dryRun: false, signal: controller.signal }, async (_source, sink) => {
      await sink!.write("changed\n");
      controller.abort();
    });
    await expect(cancelled).rejects.toThrow(/cancelled; no changes were written/);
    expect(await readFile(file, "utf8")).toBe("same\n");
    expect(await leftovers(root)).toEqual([]);
  });
});

describeEachStrategy("a large file's unchanged start copied by the platform's copy (in-process)", (_, runtime) => {
  it("an edit near the end of a 3 MB file: the result is whole, mode kept, nothing left behind", async () => {
    const file = path.join(root, "large-prefix.txt");
    const body = Array.from({ length: 100_000 }, (_, i) => `row ${i} of a large file\r\n`).join("");
    await writeFile(file, body);
    await chmod(file, 0o640);
    const diff = await editFileSafely(file, [{ oldText: "row 99990 of", newText: "ROW 99990 of\nand more" }], false, [root], runtime);
    expect(diff).toContain("+ROW 99990 of");
    expect(await readFile(file, "utf8")).toBe(body.replace("row 99990 of", "ROW 99990 of\r\nand more"));
    expect((await stat(file)).mode & 0o777).toBe(0o640);
    expect(await leftovers(root)).toEqual([]);
  });

  it("a file that shrank after it was read is refused, left as the other writer made it", async () => {
    const file = path.join(root, "large-shrunk.txt");
    const body = Array.from({ length: 100_000 }, (_, i) => `row ${i} of a large file\n`).join("");
    await writeFile(file, body);
    const done = rewriteFile(
      file,
      [root],
      { dryRun: false },
      async (source, sink) => {
        await source.read(0, source.size);
        // Another writer cuts the file between the engine's read and its copy.
        await writeFile(file, "short\n", { flag: "r+" });
        await truncate(file, 6);
        await sink!.copyPrefix!(source.size - 10);
      },
      runtime,
    );
    await expect(done).rejects.toThrow(/File changed during edit/);
    expect(await readFile(file, "utf8")).toBe("short\n");
    expect(await leftovers(root)).toEqual([]);
  });
});

describe("owner, group and permission", () => {
  it("a read-only (0444) file is refused and left as it was", async () => {
    const s = await server();
    const file = path.join(root, "readonly.txt");
    await writeFile(file, "one\n");
    await chmod(file, 0o444);
    const result = await edit(s, file, "one", "1");
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^Cannot edit .*readonly\.txt: it is read-only for this server's user \(mode 0444/);
    expect(await readFile(file, "utf8")).toBe("one\n");
    expect((await stat(file)).mode & 0o777).toBe(0o444);
  });

  it.skipIf(!IS_ROOT)("as root, the edited file keeps its owner and group (needs root to chown)", async () => {
    const s = await server();
    const file = path.join(root, "owned.txt");
    await writeFile(file, "one\n");
    await chown(file, 1234, 5678);
    await chmod(file, 0o640);
    expect((await edit(s, file, "one", "1")).isError).toBeFalsy();
    const st = await stat(file);
    expect([st.uid, st.gid, st.mode & 0o777]).toEqual([1234, 5678, 0o640]);
    expect(await readFile(file, "utf8")).toBe("1\n");
  });

  describe.skipIf(NOBODY_UNAVAILABLE !== undefined)(NOBODY_SUITE, () => {
    const shared = serverAsNobody(() => root);

    it("a file of another owner, writable through its group, is refused, not handed to nobody", async () => {
      const file = path.join(shared.dir(), "theirs.txt");
      await writeFile(file, "one\n");
      await chown(file, 1234, NOBODY.gid);
      await chmod(file, 0o664);
      const result = await edit(shared.server(), file, "one", "1");
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/^Cannot replace .*theirs\.txt: it is owned by uid 1234 gid 65534, and this server \(uid 65534\)/);
      const st = await stat(file);
      expect([st.uid, st.gid]).toEqual([1234, NOBODY.gid]);
      expect(await readFile(file, "utf8")).toBe("one\n");
      expect(await leftovers(shared.dir())).toEqual([]);
    });

    it("its own file is edited and keeps owner and mode", async () => {
      const file = path.join(shared.dir(), "mine.txt");
      await writeFile(file, "one\n");
      await chown(file, NOBODY.uid, NOBODY.gid);
      await chmod(file, 0o600);
      expect((await edit(shared.server(), file, "one", "1")).isError).toBeFalsy();
      const st = await stat(file);
      expect([st.uid, st.gid, st.mode & 0o777]).toEqual([NOBODY.uid, NOBODY.gid, 0o600]);
      expect(await readFile(file, "utf8")).toBe("1\n");
    });

    it("its own read-only (0444) file is refused", async () => {
      const file = path.join(shared.dir(), "mine-readonly.txt");
      await writeFile(file, "one\n");
      await chown(file, NOBODY.uid, NOBODY.gid);
      await chmod(file, 0o444);
      const result = await edit(shared.server(), file, "one", "1");
      expect(textOf(result)).toMatch(/^Cannot edit .*mine-readonly\.txt: it is read-only for this server's user/);
      expect(await readFile(file, "utf8")).toBe("one\n");
    });
  });
});
