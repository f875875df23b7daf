/**
 * The MCP server in this process, as src/index.ts composes it for stdio (the command line parsed,
 * the directories resolved, buildServer), connected to an SDK client over an in-memory transport
 * pair. The one place the unit tests build a server to talk MCP to: a change of SDK or of the
 * server's composition changes this file, not the tests.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { parseCommand } from "../../src/cli/config.js";
import { resolveStartupDirectories } from "../../src/cli/startup.js";
import type { StrategyName } from "../../src/sandbox/index.js";
import { buildServer } from "../../src/server/index.js";
import { createRuntime, type Runtime } from "../../src/server/runtime.js";

export { call, textOf } from "./client.js";

/** A connected client and the server behind it. */
export interface InProcess {
  client: Client;
  /** Every line the server logged so far (what a spawned server writes to stderr). */
  stderr(): string;
  /** The runtime the server runs on (its strategy, locks, cache, descriptors and scan workers). */
  runtime: Runtime;
  /** Closes the client and the server, and puts back HOME. */
  close(): Promise<void>;
}

/** Options of `inProcess`, beside the command line. */
export interface InProcessOptions {
  /** The environment the command line is read with (BOUNDED_FS_…); HOME, when given, is the server's home for `~`. */
  env?: Record<string, string>;
  /** The platform strategy the server's runtime runs (as BOUNDED_FS_STRATEGY does for a spawned one). @default the platform's */
  strategy?: StrategyName;
  /** The runtime to serve on (shared with another server, as one process's servers share it). @default a new one of `strategy` */
  runtime?: Runtime;
  capabilities?: ConstructorParameters<typeof Client>[1];
  /** Runs before connecting, e.g. to answer roots/list from the first request on. */
  prepare?: (client: Client) => void;
}

/**
 * Builds the server from the command line `args` (directories and flags, as `connect` in spawn.ts takes them)
 * and connects a client to it.
 * @throws when the command line is refused, or asks for something other than serving on stdio
 */
export async function inProcess(args: string[], options: InProcessOptions = {}): Promise<InProcess> {
  const env = options.env ?? {};
  const command = parseCommand(args, env);
  if (command.kind !== "serve" || command.http !== undefined)
    throw new Error(`inProcess serves stdio only; ${args.join(" ")} asks for ${command.kind}`);
  let logged = "";
  const log = (line: string): void => {
    logged += `${line}\n`;
  };
  // A runtime of the strategy asked for, as a process started with BOUNDED_FS_STRATEGY builds it: no global switched.
  const runtime = options.runtime ?? createRuntime(options.strategy);
  const homeBefore = process.env.HOME;
  if (env.HOME !== undefined) process.env.HOME = env.HOME;
  const restore = (): void => {
    process.env.HOME = homeBefore;
  };
  try {
    const directories = await resolveStartupDirectories(command.directories, log);
    const server = buildServer({ limits: command.limits, directories, log, readOnly: command.readOnly, tools: command.tools, runtime });
    const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: "test-client", version: "1.0.0" }, options.capabilities);
    options.prepare?.(client);
    await client.connect(clientSide);
    return {
      client,
      runtime,
      stderr: () => logged,
      close: async () => {
        try {
          await client.close();
          await server.close();
        } finally {
          restore();
        }
      },
    };
  } catch (error) {
    restore();
    throw error;
  }
}
