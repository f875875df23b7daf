/**
 * Helpers for the hostile-input suites: file-system snapshots that notice any
 * change (names, types, modes, sizes, mtimes, contents, link targets, also for
 * non-UTF-8 names), background "attacker" processes, and result checks.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { expect } from "vitest";
import { isServerEntry } from "../../src/sandbox/index.js";
import { SERVER_JS, textOf, type Connected } from "./spawn.js";
import { tempDir } from "./fixtures.js";

/** One entry of a snapshot, keyed by its path relative to the snapshot root (hex of the raw bytes). */
export interface EntryState {
  type: "file" | "dir" | "symlink" | "other";
  mode: number;
  size: bigint;
  mtimeNs: bigint;
  /** sha256 of a file's bytes, or a symlink's target bytes in hex. */
  content?: string;
}

/** Every entry under `root` (root included), with raw byte names so non-UTF-8 names are covered. */
export async function snapshot(root: string, skip: readonly string[] = []): Promise<Map<string, EntryState>> {
  const states = new Map<string, EntryState>();
  const skipped = new Set(skip.map((s) => path.resolve(s)));
  const visit = async (abs: Buffer, rel: string): Promise<void> => {
    if (skipped.has(abs.toString())) return;
    const st = await fs.lstat(abs, { bigint: true });
    const base = { mode: Number(st.mode), size: st.size, mtimeNs: st.mtimeNs };
    if (st.isSymbolicLink()) {
      states.set(rel, { type: "symlink", ...base, content: (await fs.readlink(abs, { encoding: "buffer" })).toString("hex") });
    } else if (st.isFile()) {
      states.set(rel, {
        type: "file",
        ...base,
        content: createHash("sha256")
          .update(await fs.readFile(abs))
          .digest("hex"),
      });
    } else if (st.isDirectory()) {
      states.set(rel, { type: "dir", ...base });
      for (const name of await fs.readdir(abs, { encoding: "buffer" })) {
        await visit(Buffer.concat([abs, Buffer.from("/"), name]), `${rel}/${name.toString("hex")}`);
      }
    } else {
      states.set(rel, { type: "other", ...base });
    }
  };
  await visit(Buffer.from(path.resolve(root)), ".");
  return states;
}

/** Fails with a readable list of what differs between two snapshots. */
export function expectSameSnapshot(before: Map<string, EntryState>, after: Map<string, EntryState>): void {
  const changes: string[] = [];
  const show = (key: string): string =>
    key
      .split("/")
      .map((part) => (part === "." ? part : Buffer.from(part, "hex").toString("utf8")))
      .join("/");
  for (const [key, was] of before) {
    const now = after.get(key);
    if (!now) changes.push(`removed ${show(key)}`);
    else if (JSON.stringify(was, bigintJson) !== JSON.stringify(now, bigintJson)) changes.push(`changed ${show(key)}`);
  }
  for (const key of after.keys()) if (!before.has(key)) changes.push(`added ${show(key)}`);
  expect(changes).toEqual([]);
}

function bigintJson(_key: string, value: unknown): unknown {
  return typeof value === "bigint" ? value.toString() : value;
}

/** Asserts a refusal: an isError result whose text matches `reason` and names `named` (a path or part of one). */
export function expectRefused(result: CallToolResult, reason: RegExp, named?: string): string {
  const text = textOf(result);
  expect(result.isError, text).toBe(true);
  expect(text).toMatch(reason);
  if (named !== undefined) expect(text).toContain(named);
  return text;
}

/** Asserts a well-formed success and returns its text. */
export function expectOk(result: CallToolResult): string {
  const text = textOf(result);
  expect(result.isError ?? false, text).toBe(false);
  return text;
}

/** A background process running a loop written in JavaScript; stop() ends it and returns what it printed. */
export interface Attacker {
  readonly child: ChildProcess;
  /** Resolves once the loop has started (it printed its first line). */
  started: Promise<void>;
  /** Closes its stdin, which ends the loop, and returns its final JSON summary. */
  stop(): Promise<unknown>;
}

/**
 * Starts `node -e` with a loop body. The body runs as `step(i)` in batches,
 * yielding between batches so that stdin's end (from stop()) is seen; it may
 * record into the `summary` object, which is printed on exit. A hard deadline
 * (`maxMs`) ends the loop even if the test never calls stop().
 */
export function startAttacker(setup: string, step: string, args: readonly string[], maxMs = 20_000): Attacker {
  const script = `
    const fs = require("node:fs");
    const path = require("node:path");
    const args = process.argv.slice(1);
    const summary = { iterations: 0 };
    ${setup}
    const deadline = Date.now() + ${maxMs};
    let stopping = false;
    process.stdin.on("end", () => { stopping = true; });
    process.stdin.resume();
    const finish = () => { process.stdout.write(JSON.stringify(summary) + "\\n"); process.exit(0); };
    process.stdout.write("started\\n");
    const batch = () => {
      for (let n = 0; n < 50; n++) {
        if (stopping || Date.now() > deadline) return finish();
        step(summary.iterations++);
      }
      setImmediate(batch);
    };
    function step(i) { ${step} }
    batch();
  `;
  const child = spawn(process.execPath, ["-e", script, ...args], { stdio: ["pipe", "pipe", "pipe"] });
  let out = "";
  let err = "";
  let markStarted: () => void = () => undefined;
  const started = new Promise<void>((resolve) => (markStarted = resolve));
  child.stdout!.on("data", (chunk: Buffer) => {
    out += chunk.toString();
    if (out.includes("started\n")) markStarted();
  });
  child.stderr!.on("data", (chunk: Buffer) => (err += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  return {
    child,
    started,
    async stop() {
      child.stdin!.end();
      const code = await exited;
      if (code !== 0) throw new Error(`attacker exited with ${String(code)}: ${err}`);
      const last = out.trim().split("\n").pop() ?? "{}";
      return JSON.parse(last) as unknown;
    },
  };
}

/** Names of leftover temp and lock files (`*.tmp`, and the server's own) directly in `dir`. */
export async function tempFilesIn(dir: string): Promise<string[]> {
  return (await fs.readdir(dir)).filter((name) => name.endsWith(".tmp") || isServerEntry(name));
}

/** Calls a tool, failing (instead of hanging the suite) if no answer comes within `ms`. */
export async function callWithin(client: Client, name: string, args: Record<string, unknown>, ms = 10_000): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args }, undefined, { timeout: ms })) as CallToolResult;
}

/** Connects an SDK client to dist/index.js started through `sh -c <prefix>; exec node dist/index.js <args>`. */
export async function connectThroughShell(shellPrefix: string, args: readonly string[]): Promise<Connected> {
  const transport = new StdioClientTransport({
    command: "sh",
    args: ["-c", `${shellPrefix}; exec "$0" "$@"`, process.execPath, SERVER_JS, ...args],
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  const client = new Client({ name: "hostile-test", version: "1.0.0" });
  await client.connect(transport);
  return { client, transport, stderr: () => stderr, close: () => client.close() };
}

/** A server spoken to in raw JSON-RPC lines, for inputs an SDK client would never send. */
export interface RawServer {
  readonly child: ChildProcess;
  /** Writes raw bytes (one or more lines) to the server's stdin. */
  write(data: string | Buffer): void;
  /** Resolves with the first notification of `method` the server sends from now on (rejects after `ms`). */
  notification(method: string, ms?: number): Promise<Record<string, unknown>>;
  /** Resolves with the first `count` messages of id `id` (a string: ids `request` does not use) from now on (rejects after `ms`). */
  answers(id: string, count: number, ms?: number): Promise<Record<string, unknown>[]>;
  /** Sends a request and resolves with the response carrying its id (rejects after `ms`). */
  request(method: string, params: unknown, ms?: number): Promise<{ result?: unknown; error?: { code: number; message: string } }>;
  /** Resolves with the exit code (or signal name) once the process has exited, or "timeout" after `ms`. */
  exited(ms: number): Promise<number | string>;
  stderr(): string;
}

/** Starts dist/index.js with `args` and completes the MCP handshake over raw stdio. */
export async function startRaw(args: readonly string[]): Promise<RawServer> {
  const child = spawn(process.execPath, [SERVER_JS, ...args], { stdio: ["pipe", "pipe", "pipe"] });
  let nextId = 1;
  let buffered = "";
  let stderr = "";
  const waiting = new Map<number, (message: Record<string, unknown>) => void>();
  const watchers = new Set<(message: Record<string, unknown>) => void>();
  child.stdout!.on("data", (chunk: Buffer) => {
    buffered += chunk.toString("utf8");
    let nl: number;
    while ((nl = buffered.indexOf("\n")) !== -1) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      const message = JSON.parse(line) as Record<string, unknown>;
      if (typeof message.id === "number") waiting.get(message.id)?.(message);
      else for (const watch of [...watchers]) watch(message);
    }
  });
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  // Writes after the server went away must not crash the test process.
  child.stdin!.on("error", () => undefined);
  const exit = new Promise<number | string>((resolve) => child.on("exit", (code, signal) => resolve(code ?? signal ?? "unknown")));
  const raw: RawServer = {
    child,
    write: (data) => void child.stdin!.write(data),
    notification(method, ms = 10_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no ${method} notification within ${ms} ms`)), ms);
        const watch = (message: Record<string, unknown>): void => {
          if (message.method !== method) return;
          clearTimeout(timer);
          watchers.delete(watch);
          resolve(message);
        };
        watchers.add(watch);
      });
    },
    answers(id, count, ms = 10_000) {
      return new Promise((resolve, reject) => {
        const got: Record<string, unknown>[] = [];
        const timer = setTimeout(() => reject(new Error(`${got.length} of ${count} answers of id ${id} within ${ms} ms`)), ms);
        const watch = (message: Record<string, unknown>): void => {
          if (message.id !== id || got.push(message) < count) return;
          clearTimeout(timer);
          watchers.delete(watch);
          resolve(got);
        };
        watchers.add(watch);
      });
    },
    request(method, params, ms = 10_000) {
      const id = nextId++;
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no answer to ${method} #${id} within ${ms} ms`)), ms);
        waiting.set(id, (message) => {
          clearTimeout(timer);
          waiting.delete(id);
          resolve(message as { result?: unknown; error?: { code: number; message: string } });
        });
        child.stdin!.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
      });
    },
    exited: (ms) => Promise.race([exit, new Promise<string>((resolve) => setTimeout(() => resolve("timeout"), ms).unref())]),
    stderr: () => stderr,
  };
  await raw.request("initialize", {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "raw-hostile", version: "1.0.0" },
  });
  raw.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
  return raw;
}

/** A fresh temp base with an allowed directory and an `outside` sibling (both empty), and its remover. */
export async function sandbox(
  prefix: string,
  rootName = "root",
): Promise<{ base: string; root: string; outside: string; remove: () => Promise<void> }> {
  const t = await tempDir(prefix);
  const root = path.join(t.dir, rootName);
  const outside = path.join(t.dir, "outside");
  await fs.mkdir(root);
  await fs.mkdir(outside);
  return { base: t.dir, root, outside, remove: t.remove };
}
