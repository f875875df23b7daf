/** Spawns the built server as a real MCP client would, and small helpers over it. */
import { spawn } from "node:child_process";
import os from "node:os";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

export { call, textOf } from "./client.js";

export const SERVER_JS = fileURLToPath(new URL("../../dist/index.js", import.meta.url));

export interface Connected {
  client: Client;
  transport: StdioClientTransport;
  /** Everything the server wrote to stderr so far. */
  stderr(): string;
  close(): Promise<void>;
}

/** Starts dist/index.js (or `options.serverJs`) with `args` over stdio and connects an SDK client. */
export async function connect(
  args: string[],
  options: {
    /** Another build of the server to start. @default SERVER_JS */
    serverJs?: string;
    env?: Record<string, string>;
    capabilities?: ConstructorParameters<typeof Client>[1];
    /** Runs before connecting, e.g. to answer roots/list from the first request on. */
    prepare?: (client: Client) => void;
  } = {},
): Promise<Connected> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [options.serverJs ?? SERVER_JS, ...args],
    env: options.env,
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  const client = new Client({ name: "test-client", version: "1.0.0" }, options.capabilities);
  options.prepare?.(client);
  try {
    await client.connect(transport);
  } catch (error) {
    // A server that ended during start-up said why on stderr; the test's failure should carry it.
    await new Promise((resolve) => setTimeout(resolve, 100));
    throw new Error(`the server did not start: ${(error as Error).message}\nits stderr:\n${stderr}`, { cause: error });
  }
  return { client, transport, stderr: () => stderr, close: () => client.close() };
}

/** Runs the server (dist/index.js or `options.serverJs`) to completion, for flags, exit codes and startup messages. */
export function runServer(
  args: string[],
  options: { serverJs?: string; env?: Record<string, string>; stdin?: string; timeoutMs?: number } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [options.serverJs ?? SERVER_JS, ...args], {
      env: { PATH: process.env.PATH ?? "", HOME: os.homedir(), ...options.env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 10_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(options.stdin ?? "");
  });
}
