/**
 * Drives the built server exactly as a user's MCP client would: dist/index.js
 * spawned over stdio, the SDK's Client, one fresh process per scenario.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

export const SERVER_JS = fileURLToPath(new URL("../dist/index.js", import.meta.url));

/**
 * Extra node arguments for the server process (space-separated), e.g. to try a
 * V8 flag via `--import` before changing the source; shown in the table header.
 */
export const SERVER_NODE_ARGS = (process.env.BENCH_SERVER_NODE_ARGS ?? "").split(/\s+/).filter(Boolean);

/**
 * Starts a built server (`serverJs`, with SERVER_NODE_ARGS) with `--http 127.0.0.1:0` and `args`: its URL once it listens (rejected,
 * with its stderr, if it exits first), its exit code or signal, and what it wrote to stderr.
 */
export function spawnHttpServer(args, serverJs = SERVER_JS) {
  const child = spawn(process.execPath, [...SERVER_NODE_ARGS, serverJs, "--http", "127.0.0.1:0", ...args], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  const url = new Promise((resolve, reject) => {
    child.stderr.on("data", (chunk) => {
      stderr += chunk.toString("utf8");
      const found = /running on (\S+)/.exec(stderr);
      if (found) resolve(found[1]);
    });
    child.once("exit", (code, signal) => reject(new Error(`server exited (${code ?? signal}) before listening: ${stderr}`)));
  });
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve(code ?? signal)));
  return { child, url, exited, stderr: () => stderr };
}

// A cold pass over a big fixture may take a while; progress keeps the request alive.
const CALL_OPTIONS = { timeout: 600_000, resetTimeoutOnProgress: true };

/** Starts a server allowed to `dir` with extra `flags`; returns a small handle. */
export async function startServer(dir, flags = []) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [...SERVER_NODE_ARGS, SERVER_JS, ...flags, dir],
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk) => {
    stderr += chunk.toString("utf8");
  });
  const client = new Client({ name: "bounded-fs-bench", version: "1.0.0" });
  await client.connect(transport);
  const pid = transport.pid;
  if (pid === null) throw new Error("server process has no pid");
  return {
    pid,
    /** Calls a tool; returns its text, its duration in ms, and throws on a tool error. */
    async call(name, args) {
      const started = performance.now();
      const result = await client.callTool({ name, arguments: args }, undefined, CALL_OPTIONS);
      const ms = performance.now() - started;
      const block = result.content?.[0];
      const text = block?.type === "text" ? block.text : "";
      if (result.isError) throw new Error(`${name} failed: ${text.slice(0, 300)}`);
      return { text, ms };
    },
    /** Peak resident set size of the server process so far, in MiB (VmHWM). */
    peakRssMb() {
      const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
      const kb = /^VmHWM:\s+(\d+)\s+kB/m.exec(status);
      if (!kb) throw new Error(`no VmHWM in /proc/${pid}/status`);
      return Number(kb[1]) / 1024;
    },
    /** A ping's round trip: answered only when the server's event loop gets to it. */
    ping: () => client.ping(),
    stderr: () => stderr,
    close: () => client.close(),
  };
}

/** Runs `fn(server)` on a fresh server and returns its value with the server's peak RSS. */
export async function withServer(dir, flags, fn) {
  const server = await startServer(dir, flags);
  try {
    const value = await fn(server);
    return { value, rssMb: server.peakRssMb() };
  } finally {
    await server.close();
  }
}

/** Wall time of `find dir` with its output sent to /dev/null, in ms. */
export function timeFind(dir) {
  return new Promise((resolve, reject) => {
    const devNull = fs.openSync("/dev/null", "w");
    const started = performance.now();
    const child = spawn("find", [dir], { stdio: ["ignore", devNull, "inherit"] });
    child.on("error", (error) => {
      fs.closeSync(devNull);
      reject(error);
    });
    child.on("close", (code) => {
      const ms = performance.now() - started;
      fs.closeSync(devNull);
      if (code === 0) resolve(ms);
      else reject(new Error(`find ${dir} exited with ${code}`));
    });
  });
}

/** Median of a list of numbers. */
export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Runs `fn` `n` times in sequence and returns every result. */
export async function repeat(n, fn) {
  const out = [];
  for (let i = 0; i < n; i++) out.push(await fn(i));
  return out;
}
