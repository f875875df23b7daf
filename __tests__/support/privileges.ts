/** Runs the built server as another user (root only), for the owner and permission suites. */
import { chmod, mkdir } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll } from "vitest";
import { SERVER_JS, type Connected } from "./spawn.js";

/** True when this process may switch to another user (root on POSIX). */
export const IS_ROOT = process.getuid?.() === 0;

/** uid and gid of `nobody` on Debian-like systems. */
export const NOBODY = { uid: 65534, gid: 65534 };

/**
 * Starts dist/index.js as `uid`/`gid` (no supplementary groups) and connects an SDK client.
 * The privileges are dropped by a tiny node prelude before the server module loads, since the
 * SDK's stdio transport does not pass spawn's uid/gid options through.
 */
export async function connectAs(user: { uid: number; gid: number }, args: string[]): Promise<Connected> {
  const prelude =
    `process.setgroups([]); process.setgid(${user.gid}); process.setuid(${user.uid}); ` +
    `process.argv.splice(1, 0, ${JSON.stringify(SERVER_JS)}); ` +
    `await import(${JSON.stringify(pathToFileURL(SERVER_JS).href)});`;
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ["--input-type=module", "-e", prelude, ...args],
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  const client = new Client({ name: "test-client", version: "1.0.0" });
  await client.connect(transport);
  return { client, transport, stderr: () => stderr, close: () => client.close() };
}

/**
 * Inside a `describe`: before its tests, makes a world-writable `shared-dir` under `root()` and starts
 * the server there as `nobody`; closes it afterwards. The getters are valid inside the tests.
 */
export function serverAsNobody(root: () => string): { dir(): string; server(): Connected } {
  let dir = "";
  let nobody: Connected | undefined;
  beforeAll(async () => {
    dir = path.join(root(), "shared-dir");
    await mkdir(dir);
    await chmod(dir, 0o777);
    await chmod(root(), 0o755);
    nobody = await connectAs(NOBODY, [dir]);
  });
  afterAll(() => nobody?.close());
  return {
    dir: () => dir,
    server: () => {
      if (nobody === undefined) throw new Error("serverAsNobody: used outside its describe's tests");
      return nobody;
    },
  };
}
