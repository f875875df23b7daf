/**
 * The HTTP mode as clients meet it: the server started in this process on
 * 127.0.0.1 (settings parsed from real flags) or spawned from dist/, the
 * SDK's Streamable HTTP client connected to it, and raw requests for what
 * the SDK client would never send.
 */
import { spawn, type ChildProcess } from "node:child_process";
import os from "node:os";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { parseCommand } from "../../src/cli/config.js";
import { createRuntime, type Runtime } from "../../src/server/runtime.js";
import { startHttpServer, type HttpServer } from "../../src/transports/http/index.js";
import type { MemoryBounds } from "../../src/transports/http/memory.js";
import { SERVER_JS } from "./spawn.js";

/** A server running in this test process. */
export interface Running {
  readonly server: HttpServer;
  readonly url: string;
  /** Every diagnostic line so far. */
  readonly lines: string[];
  stop(): Promise<void>;
}

/** Starts the HTTP server in process with `flags` (before the directories) on 127.0.0.1 and a free port, on `runtime`, within `memory`'s bounds. */
export async function startHttp(
  dirs: readonly string[],
  flags: readonly string[] = [],
  env: Record<string, string> = {},
  runtime: Runtime = createRuntime(),
  memory?: MemoryBounds,
): Promise<Running> {
  const command = parseCommand(["--http", "127.0.0.1:0", ...flags, ...dirs], env);
  if (command.kind !== "serve" || !command.http) throw new Error("expected an HTTP command");
  const lines: string[] = [];
  const server = await startHttpServer({
    settings: command.http,
    limits: command.limits,
    directories: dirs,
    readOnly: command.readOnly,
    tools: command.tools,
    log: (line) => lines.push(line),
    runtime,
    ...(memory !== undefined && { memory }),
  });
  return { server, url: server.url, lines, stop: () => server.shutdown(0) };
}

/** An SDK client over Streamable HTTP. */
export async function connectHttp(
  url: string,
  options: { headers?: Record<string, string>; capabilities?: ConstructorParameters<typeof Client>[1]; prepare?: (client: Client) => void } = {},
): Promise<{ client: Client; transport: StreamableHTTPClientTransport; close: () => Promise<void> }> {
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: options.headers ?? {} } });
  const client = new Client({ name: "http-test-client", version: "1.0.0" }, options.capabilities);
  options.prepare?.(client);
  await client.connect(transport);
  return {
    client,
    transport,
    close: async () => {
      await transport.terminateSession().catch(() => undefined);
      await client.close();
    },
  };
}

/** The headers of an MCP POST, with an optional session and token. */
export function mcpHeaders(extra: Record<string, string> = {}): Record<string, string> {
  return { "Content-Type": "application/json", Accept: "application/json, text/event-stream", ...extra };
}

/**
 * Opens a raw session at `url` (initialize, then the initialized notification) as a client of `protocolVersion`;
 * resolves with the headers its requests carry (the session id and the version).
 */
export async function rawSessionHeaders(url: string, protocolVersion = "2025-11-25"): Promise<Record<string, string>> {
  const init = await fetch(url, {
    method: "POST",
    headers: mcpHeaders(),
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion, capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    }),
  });
  await init.text();
  const id = init.headers.get("mcp-session-id");
  if (id === null) throw new Error(`no session: HTTP ${init.status}`);
  const headers = mcpHeaders({ "mcp-session-id": id, "mcp-protocol-version": protocolVersion });
  await (await fetch(url, { method: "POST", headers, body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) })).text();
  return headers;
}

/** An initialize request body. */
export const INITIALIZE = JSON.stringify({
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw-http", version: "1" } },
});

/** A spawned dist/index.js in HTTP mode. */
export interface Spawned {
  readonly child: ChildProcess;
  /** Resolves with the URL from the startup line (rejects if the process ends first). */
  readonly url: Promise<string>;
  stderr(): string;
  /** The exit code (or signal name). */
  readonly exited: Promise<number | string>;
}

/** Spawns the built server with `args`; add `--http 127.0.0.1:0` yourself. */
export function spawnHttp(args: readonly string[], env: Record<string, string> = {}): Spawned {
  const child = spawn(process.execPath, [SERVER_JS, ...args], {
    env: { PATH: process.env.PATH ?? "", HOME: os.homedir(), ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  const exited = new Promise<number | string>((resolve) => child.on("exit", (code, signal) => resolve(code ?? signal ?? "unknown")));
  const url = new Promise<string>((resolve, reject) => {
    child.stderr!.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
      const found = /running on (\S+)/.exec(stderr);
      if (found) resolve(found[1] as string);
    });
    void exited.then((code) => reject(new Error(`server exited (${code}) before listening:\n${stderr}`)));
  });
  url.catch(() => undefined);
  return { child, url, stderr: () => stderr, exited };
}
