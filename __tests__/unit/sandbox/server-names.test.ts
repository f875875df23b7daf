/**
 * The server's own names (SPEC §18, issue 28 rows 1 and 14), through the tools in process (support/in-process.ts
 * inProcess), under both platform strategies: its temp, lock and aside names are refused as operands
 * of every tool, as source and as destination; a lock is honoured only in the form the server writes, an
 * unverifiable holder only while it beats; whatever squats a lock, temp or aside name is cleared, never
 * fatal; and no error shows an internal name (`/proc/self/fd/N/…`, `.bfs-…`) or a lock's text.
 *
 * Regression guards: a live lock copied onto another file's lock name froze that file's changes for ever;
 * a plain-file lock naming pid 1 with no start time hung every fresh server; a directory at the aside name
 * made every change fail with a raw `EISDIR … /proc/self/fd/17/.bfs-….tmp`.
 */
import { spawnSync } from "node:child_process";
import fsp, { lstat, lutimes, mkdir, readdir, readFile, readlink, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { type CallToolResult, CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeEach, expect, it, vi } from "vitest";
import { __testing, isServerEntry } from "../../../src/sandbox/index.js";
import { inProcess } from "../../support/in-process.js";
import { describeEachStrategy, tempDir, currentRuntime } from "../../support/fixtures.js";

const { swapLockName, tempName, lockTextFor } = __testing;
/** Where a stale lock of `name` is moved to be looked at before it goes. */
const asideName = (name: string): string => tempName(swapLockName(name));
const textOf = (r: CallToolResult): string => (r.content[0]?.type === "text" ? r.content[0].text : "");
/** What no error may show: a reach through a descriptor, a server name, a lock's text. */
const INTERNAL = /\/proc\/self\/fd|\.bfs-[0-9a-f]{32}|bfs-lock|host=/;

let dir: string;
let remove: () => Promise<void>;
let client: Client;
let closeAll: () => Promise<void>;
const at = (name: string) => path.join(dir, name);
const call = async (name: string, args: Record<string, unknown>): Promise<CallToolResult> =>
  (await client.callTool({ name, arguments: args }, CallToolResultSchema)) as CallToolResult;
const waitBefore = currentRuntime().lockWaits.waitMs;

beforeEach(async () => {
  ({ dir, remove } = await tempDir("bfs-server-names-"));
  ({ client, close: closeAll } = await inProcess([dir, "--max-result-chars", "100000"], { runtime: currentRuntime() }));
});

afterEach(async () => {
  vi.restoreAllMocks();
  currentRuntime().lockWaits.waitMs = waitBefore;
  await closeAll();
  await remove();
});

/** A call's result as the refusal of a server name: an error naming the path as given. */
async function expectRefusedName(result: Promise<CallToolResult>, given: string): Promise<void> {
  const r = await result;
  expect(r.isError, textOf(r)).toBe(true);
  expect(textOf(r)).toContain(`Refused ${given}:`);
  expect(textOf(r)).toContain("keeps for its own temp and lock files");
}

/** A pid that no process has any more. */
function deadPid(): number {
  return Number(spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" }).stdout);
}

/** A lock of this machine's process 1 without a start time: who holds it cannot be verified. */
const unverifiable = (): string => lockTextFor(1).replace(/ start=\d*/, " start=");

describeEachStrategy("the server's own names", () => {
  it("are refused as operands of every tool, as source and as destination, in every spelling", async () => {
    await writeFile(at("f.txt"), "f\n");
    // A live lock of f.txt (held by this process), and a temp tree someone might write into.
    const live = lockTextFor(process.pid);
    await symlink(live, at(swapLockName("f.txt")));
    await mkdir(at(tempName("tree")));
    await writeFile(at(`${tempName("tree")}/inner.txt`), "inner\n");
    const lock = at(swapLockName("f.txt"));
    const other = at(swapLockName("g.txt"));
    const temp = at(tempName("f.txt"));
    const inner = at(`${tempName("tree")}/inner.txt`);
    for (const p of [lock, temp, inner, `${lock}/`, path.join(dir, ".", swapLockName("f.txt")), path.relative(dir, lock)]) {
      for (const [tool, args] of [
        ["read_text_file", { path: p }],
        ["read_media_file", { path: p }],
        ["read_multiple_files", { paths: [p] }],
        ["get_file_info", { path: p }],
        ["list_directory", { path: p }],
        ["directory_tree", { path: p }],
        ["search_files", { path: p, pattern: "*" }],
        ["search_file_contents", { path: p, query: "x" }],
        ["write_file", { path: p, content: "x" }],
        ["append_file", { path: p, content: "x" }],
        ["edit_file", { path: p, edits: [{ oldText: "inner", newText: "x" }] }],
        ["create_directory", { path: p }],
        ["delete_file", { path: p, recursive: true }],
        ["move_file", { source: p, destination: at("moved") }],
        ["move_file", { source: at("f.txt"), destination: p }],
        ["copy_file", { source: p, destination: at("copied"), recursive: true }],
        ["copy_file", { source: at("f.txt"), destination: p }],
      ] as const) {
        const r = await call(tool, args);
        // read_multiple_files reports each file's failure in its answer.
        if (tool !== "read_multiple_files") expect(r.isError, `${tool} ${JSON.stringify(args)}: ${textOf(r)}`).toBe(true);
        expect(textOf(r), `${tool} ${JSON.stringify(args)}`).toContain("keeps for its own temp and lock files");
        expect(textOf(r)).toContain(`Refused ${p}`);
      }
    }
    // The red team's freeze: the live lock copied or moved onto another file's lock name.
    await expectRefusedName(call("copy_file", { source: lock, destination: other }), lock);
    await expectRefusedName(call("move_file", { source: lock, destination: other }), lock);
    // Reached through a symlink whose own name is innocent.
    await symlink(tempName("tree"), at("innocent"));
    await expectRefusedName(call("read_text_file", { path: at("innocent/inner.txt") }), at("innocent/inner.txt"));
    await expectRefusedName(call("write_file", { path: at("innocent/new.txt"), content: "x" }), at("innocent/new.txt"));
    // Nothing was changed, and the lock is still the one it was.
    expect(await readlink(lock)).toBe(live);
    expect((await readdir(dir)).filter((n) => !isServerEntry(n)).sort()).toEqual(["f.txt", "innocent"]);
    expect(await readFile(inner, "utf8")).toBe("inner\n");
  });

  it("a lock is honoured only in the form the server writes: a plain file naming pid 1 does not hold a change", async () => {
    await writeFile(at("f.txt"), "old\n");
    await writeFile(at(swapLockName("f.txt")), unverifiable());
    const r = await call("write_file", { path: at("f.txt"), content: "new\n" });
    expect(r.isError ?? false, textOf(r)).toBe(false);
    expect(await readFile(at("f.txt"), "utf8")).toBe("new\n");
    expect((await readdir(dir)).filter(isServerEntry)).toEqual([]);
  });

  it("an unverifiable holder (pid 1, no start time) is waited for while it beats, and taken for gone once silent", async () => {
    await writeFile(at("f.txt"), "old\n");
    const lock = at(swapLockName("f.txt"));
    await symlink(unverifiable(), lock);
    // Beating (its mtime is now): waited for, up to the deadline, then refused naming the file and the holder.
    currentRuntime().lockWaits.waitMs = 200;
    const held = await call("write_file", { path: at("f.txt"), content: "new\n" });
    expect(held.isError, textOf(held)).toBe(true);
    expect(textOf(held)).toMatch(
      new RegExp(`^Cannot change ${at("f.txt").replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: another call of this server \\(process 1 on this machine\\)`),
    );
    expect(textOf(held)).not.toMatch(INTERNAL);
    expect(await readFile(at("f.txt"), "utf8")).toBe("old\n");
    // Silent for a minute: gone.
    const past = new Date(Date.now() - 60_000);
    await lutimes(lock, past, past);
    const r = await call("write_file", { path: at("f.txt"), content: "new\n" });
    expect(r.isError ?? false, textOf(r)).toBe(false);
    expect(await readFile(at("f.txt"), "utf8")).toBe("new\n");
    expect((await readdir(dir)).filter(isServerEntry)).toEqual([]);
  });

  it("a directory squatting the lock, temp or aside name is cleared, never fatal, and the change is made", async () => {
    for (const [i, squat] of [swapLockName, tempName, asideName].entries()) {
      const name = `f${i}.txt`;
      await writeFile(at(name), "old\n");
      await mkdir(at(`${squat(name)}/sub`), { recursive: true });
      await writeFile(at(`${squat(name)}/sub/file`), "squatter\n");
      // A dead holder's lock makes a breaker move it aside, onto the squatted aside name.
      if (squat === asideName) await symlink(lockTextFor(deadPid()), at(swapLockName(name)));
      for (const [tool, args] of [
        ["write_file", { path: at(name), content: "new\n" }],
        ["append_file", { path: at(name), content: "more\n" }],
        ["edit_file", { path: at(name), edits: [{ oldText: "more", newText: "edited" }] }],
      ] as const) {
        const r = await call(tool, args);
        expect(r.isError ?? false, `${tool} with ${squat.name} squatted: ${textOf(r)}`).toBe(false);
      }
      expect(await readFile(at(name), "utf8")).toBe("new\nedited\n");
      expect((await readdir(dir)).filter(isServerEntry)).toEqual([]);
    }
    // The same for the file operations.
    await mkdir(at(`${swapLockName("moved.txt")}/sub`), { recursive: true });
    await mkdir(at(`${asideName("copied.txt")}/sub`), { recursive: true });
    await mkdir(at(`${tempName("f0.txt")}/sub`), { recursive: true });
    for (const [tool, args] of [
      ["move_file", { source: at("f1.txt"), destination: at("moved.txt") }],
      ["copy_file", { source: at("f2.txt"), destination: at("copied.txt") }],
      ["delete_file", { path: at("f0.txt") }],
    ] as const) {
      const r = await call(tool, args);
      expect(r.isError ?? false, `${tool}: ${textOf(r)}`).toBe(false);
    }
    expect((await readdir(dir)).sort()).toEqual(["copied.txt", "f2.txt", "moved.txt"]);
  });

  it("a link to a lock is not followed into the lock's text: refused naming the link as given, nothing made", async () => {
    await writeFile(at("f.txt"), "f\n");
    await symlink(lockTextFor(process.pid), at(swapLockName("f.txt")));
    await symlink(swapLockName("f.txt"), at("x"));
    for (const [tool, args] of [
      ["read_text_file", { path: at("x") }],
      ["get_file_info", { path: at("x") }],
      ["write_file", { path: at("x"), content: "y" }],
      ["append_file", { path: at("x"), content: "y" }],
      ["edit_file", { path: at("x"), edits: [{ oldText: "f", newText: "g" }] }],
      ["create_directory", { path: at("x/sub") }],
      ["copy_file", { source: at("f.txt"), destination: at("x/sub") }],
    ] as const) {
      const r = await call(tool, args);
      expect(r.isError, `${tool}: ${textOf(r)}`).toBe(true);
      expect(textOf(r), tool).toContain(`Refused ${tool === "create_directory" || tool === "copy_file" ? at("x/sub") : at("x")}:`);
      expect(textOf(r), tool).not.toMatch(/bfs-lock|host=|pid=/);
    }
    // A listing shows the link as one that leads nowhere, and nothing was made beside it.
    expect(textOf(await call("list_directory", { path: dir }))).not.toMatch(/bfs-lock|host=/);
    expect((await readdir(dir)).filter((n) => !isServerEntry(n)).sort()).toEqual(["f.txt", "x"]);
  });

  it("an error about a path that leads through an inside link names the link as given, not where it leads", async () => {
    await mkdir(at("where-the-link-leads"));
    await symlink("where-the-link-leads", at("alias"));
    for (const [tool, args] of [
      ["read_text_file", { path: at("alias") }],
      ["write_file", { path: at("alias"), content: "x" }],
      ["append_file", { path: at("alias"), content: "x" }],
      ["edit_file", { path: at("alias"), edits: [{ oldText: "a", newText: "b" }] }],
    ] as const) {
      const r = await call(tool, args);
      expect(r.isError, `${tool}: ${textOf(r)}`).toBe(true);
      expect(textOf(r), tool).toContain(at("alias"));
      expect(textOf(r), tool).not.toContain("where-the-link-leads");
    }
  });

  it("no error shows an internal name or a lock's text: a lock that cannot be made is named by the path as given", async () => {
    await writeFile(at("f.txt"), "f\n");
    await mkdir(at("d"));
    // Making the lock fails as a system error does, quoting its target text and the path it was given.
    const original = fsp.symlink.bind(fsp);
    vi.spyOn(fsp, "symlink").mockImplementation((target, p) => original(target, path.join(String(p), "missing", "x")));
    for (const [tool, args, given] of [
      ["delete_file", { path: at("f.txt") }, at("f.txt")],
      ["delete_file", { path: at("d"), recursive: true }, at("d")],
      ["write_file", { path: at("f.txt"), content: "x" }, at("f.txt")],
      ["append_file", { path: at("f.txt"), content: "x" }, at("f.txt")],
      ["edit_file", { path: at("f.txt"), edits: [{ oldText: "f", newText: "g" }] }, at("f.txt")],
      ["move_file", { source: at("f.txt"), destination: at("g.txt") }, at("g.txt")],
      ["copy_file", { source: at("f.txt"), destination: at("h.txt") }, at("h.txt")],
    ] as const) {
      const r = await call(tool, args);
      expect(r.isError, `${tool}: ${textOf(r)}`).toBe(true);
      expect(textOf(r), tool).toContain(given);
      expect(textOf(r), tool).not.toMatch(INTERNAL);
    }
    vi.restoreAllMocks();
    expect(await readFile(at("f.txt"), "utf8")).toBe("f\n");
    expect((await lstat(at("d"))).isDirectory()).toBe(true);
  });
});
