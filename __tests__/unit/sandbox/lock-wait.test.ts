/**
 * Lock waits end (issue 28 row 2, SPEC §12, §18), in process under both platform strategies: a change
 * waiting for an entry's lock held by a live holder gives up at its deadline with a refusal naming the
 * file and the holder, and ends as soon as its call is cancelled, also while queued behind another call
 * of this server; once it has settled no wait, no timer and no per-file lock of it remains (counted by
 * the sandbox, so nothing here depends on timing). Through the protocol too: a cancelled tool call
 * leaves nothing polling.
 *
 * Regression guard: a call stuck on a lock kept one poller per file alive for ever and was never settled
 * when cancelled.
 */
import { readdir, readFile, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeEach, expect, it, vi } from "vitest";
import { DEFAULTS } from "../../../src/cli/config.js";
import { __testing, isServerEntry, Sandbox } from "../../../src/sandbox/index.js";
import { buildServer } from "../../../src/server/index.js";
import { describeEachStrategy, tempDir, currentRuntime } from "../../support/fixtures.js";

const { swapLockName, lockTextFor } = __testing;
const waitBefore = currentRuntime().lockWaits.waitMs;

let dir: string;
let remove: () => Promise<void>;
const at = (name: string) => path.join(dir, name);

beforeEach(async () => {
  ({ dir, remove } = await tempDir("bfs-lock-wait-"));
  await writeFile(at("f.txt"), "old\n");
  await writeFile(at("src.txt"), "src\n");
  // f.txt's swap lock held by a live, verified holder: this very process.
  await symlink(lockTextFor(process.pid), at(swapLockName("f.txt")));
});

afterEach(async () => {
  currentRuntime().lockWaits.waitMs = waitBefore;
  await remove();
});

/** Nothing of any lock wait is left: no wait, no timer, no per-file lock held or awaited. */
function expectNothingWaiting(): void {
  const { lockWaits, locks } = currentRuntime();
  expect({ waiting: lockWaits.waiting, timers: lockWaits.timers, held: locks.size }).toEqual({ waiting: 0, timers: 0, held: 0 });
}

/** Every change that takes f.txt's lock, by name, given the call's signal. */
const changes: Array<[string, (s: Sandbox, signal: AbortSignal) => Promise<unknown>]> = [
  ["write", (s, signal) => s.writeFile(at("f.txt"), "new\n", signal)],
  ["append", (s, signal) => s.appendFile(at("f.txt"), "more\n", signal)],
  ["edit", (s, signal) => s.rewrite(at("f.txt"), { dryRun: false, signal }, async () => "edited")],
  ["delete", (s, signal) => s.delete(at("f.txt"), { recursive: false, signal })],
  ["move onto", (s, signal) => s.move(at("src.txt"), at("f.txt"), signal)],
  ["copy onto", (s, signal) => s.copy(at("src.txt"), at("f.txt"), { recursive: false, signal })],
];

describeEachStrategy("a change waiting for a held lock", (_, runtime) => {
  it.each(changes)("%s: ends as soon as its call is cancelled, leaving no wait, timer or lock behind", async (_name, change) => {
    const sandbox = new Sandbox(runtime, [dir]);
    const controller = new AbortController();
    const settled = change(sandbox, controller.signal).then(
      () => undefined,
      (error: unknown) => error,
    );
    await vi.waitFor(() => expect(currentRuntime().lockWaits.waiting).toBe(1));
    controller.abort();
    const error = (await settled) as { refusal?: unknown; message?: string };
    expect(error?.refusal).toEqual({ kind: "lockCancelled", path: expect.stringContaining(dir) });
    expectNothingWaiting();
    expect(await readFile(at("f.txt"), "utf8")).toBe("old\n");
    expect(await readFile(at("src.txt"), "utf8")).toBe("src\n");
  });

  it("gives up at its deadline with a refusal naming the file and the holder", async () => {
    currentRuntime().lockWaits.waitMs = 30;
    const error = await new Sandbox(runtime, [dir]).writeFile(at("f.txt"), "new\n").then(
      () => undefined,
      (e: unknown) => e as { refusal?: unknown; message: string },
    );
    expect(error?.refusal).toEqual({
      kind: "lockTimeout",
      path: at("f.txt"),
      holder: { pid: process.pid, thisMachine: true },
      waitedMs: expect.any(Number),
    });
    expect(error?.message).toContain(`Cannot change ${at("f.txt")}: another call of this server (process ${process.pid} on this machine)`);
    expectNothingWaiting();
    expect(await readFile(at("f.txt"), "utf8")).toBe("old\n");
  });

  it("a call queued behind it in this server ends when cancelled too, and the first still settles", async () => {
    const sandbox = new Sandbox(runtime, [dir]);
    const first = new AbortController();
    const second = new AbortController();
    const settle = (p: Promise<unknown>) =>
      p.then(
        () => undefined,
        (e: unknown) => e as { refusal?: { kind: string } },
      );
    const a = settle(sandbox.writeFile(at("f.txt"), "a\n", first.signal));
    await vi.waitFor(() => expect(currentRuntime().lockWaits.waiting).toBe(1));
    const b = settle(sandbox.appendFile(at("f.txt"), "b\n", second.signal));
    second.abort();
    expect((await b)?.refusal?.kind).toBe("lockCancelled");
    expect(currentRuntime().lockWaits.waiting).toBe(1);
    first.abort();
    expect((await a)?.refusal?.kind).toBe("lockCancelled");
    expectNothingWaiting();
    expect(await readFile(at("f.txt"), "utf8")).toBe("old\n");
  });

  it("through the protocol: a cancelled tool call leaves nothing polling", async () => {
    const server = buildServer({ runtime, limits: { ...DEFAULTS, maxResultChars: 100_000 }, directories: [dir], log: () => undefined });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: "lock-wait-test", version: "1.0.0" });
    await client.connect(clientSide);
    try {
      for (const [tool, args] of [
        ["write_file", { path: at("f.txt"), content: "new\n" }],
        ["edit_file", { path: at("f.txt"), edits: [{ oldText: "old", newText: "new" }] }],
        ["move_file", { source: at("src.txt"), destination: at("f.txt") }],
      ] as const) {
        const controller = new AbortController();
        const call = client.callTool({ name: tool, arguments: args }, CallToolResultSchema, { signal: controller.signal }).catch((e: unknown) => e);
        await vi.waitFor(() => expect(currentRuntime().lockWaits.waiting).toBe(1));
        controller.abort(new Error("cancelled by the test"));
        expect(String(await call)).toMatch(/cancelled by the test/);
        // The server's side of the call settles on the cancellation notification.
        await vi.waitFor(expectNothingWaiting);
      }
      expect(await readFile(at("f.txt"), "utf8")).toBe("old\n");
      expect((await readdir(dir)).filter((n) => !isServerEntry(n)).sort()).toEqual(["f.txt", "src.txt"]);
    } finally {
      await client.close();
      await server.close();
    }
  });
});
