#!/usr/bin/env node
/**
 * Composition root: parse the command line → resolve directories → build the
 * server → serve on stdio, or over Streamable HTTP with --http. Exit codes:
 * 0 help/version (and after the SIGTERM drain), 1 no usable directory or an
 * issuer that cannot be read, 2 bad command line, environment or token file.
 */
// First: what a dependency rejects while loading must not end the process (cli/guards.ts).
import "./cli/guards.js";
import { type Command, parseCommand, USAGE, UsageError, VERSION } from "./cli/config.js";
// The HTTP stack is loaded only with --http (serveHttp): loading it made a stdio start 150-200 ms slower and 13 MB
// larger, and it loads Node's fetch, whose WebAssembly parser an address-space limit refuses (cli/guards.ts).
import type { HttpServer, HttpServerOptions } from "./transports/http/index.js";
import { buildServer } from "./server/index.js";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { createRuntime } from "./server/runtime.js";
import { resolveStartupDirectories } from "./cli/startup.js";
import { BoundedStdioTransport } from "./transports/stdio/transport.js";

const NO_DIRECTORIES_NOTE = `${USAGE}
No directories were given: the server will use the MCP roots the client provides.
At least one directory must come from the arguments or from the client's roots.`;

async function main(): Promise<number | undefined> {
  let command: Command;
  try {
    command = parseCommand(process.argv.slice(2), process.env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    console.error(error.message);
    return 2;
  }
  if (command.kind === "help") {
    process.stdout.write(USAGE);
    return 0;
  }
  if (command.kind === "version") {
    process.stdout.write(`${VERSION}\n`);
    return 0;
  }
  const log = (line: string) => console.error(line);
  const directories = await resolveStartupDirectories(command.directories, log);
  if (command.directories.length > 0 && directories.length === 0) {
    log("Error: None of the specified directories are accessible");
    return 1;
  }
  if (command.directories.length === 0) log(NO_DIRECTORIES_NOTE);
  if (command.note !== undefined) log(command.note);
  const { limits, readOnly, tools } = command;
  // The process resources, made once: the platform strategy, the locks, the caches, the descriptor budget.
  const runtime = createRuntime();
  if (command.http) return serveHttp({ settings: command.http, limits, directories, readOnly, tools, log, runtime });

  // A client that goes away closes our stdout; that ends the session, not in a crash.
  process.stdout.on("error", () => process.exit(0));

  // The SDK's stdio entry answers both eras (2025-11-25 initialize, 2026-07-28 server/discover) on our bounded transport.
  // Every server it builds shares the process's runtime.
  const served = serveStdio(() => buildServer({ limits, directories, log, readOnly, tools, runtime }), {
    transport: new BoundedStdioTransport(process.stdin, process.stdout, { log }),
  });
  // Closing aborts calls in flight, so a client that hangs up does not leave a long walk running.
  process.stdin.on("end", () => void served.close());
  log("Secure MCP Filesystem Server running on stdio");
  return undefined;
}

/** Serves over HTTP until SIGTERM or SIGINT, which drain the calls in flight and exit 0. */
async function serveHttp(options: HttpServerOptions): Promise<number | undefined> {
  const { DRAIN_MS, startHttpServer } = await import("./transports/http/index.js");
  const { log } = options;
  let server: HttpServer;
  try {
    server = await startHttpServer(options);
  } catch (error) {
    log(error instanceof UsageError ? error.message : `Error: ${error instanceof Error ? error.message : String(error)}`);
    return error instanceof UsageError ? 2 : 1;
  }
  const shown = server.publicUrl === server.url ? "" : ` (public URL ${server.publicUrl})`;
  log(`Secure MCP Filesystem Server running on ${server.url}${shown}`);
  const stop = (signal: string) => {
    log(`${signal}: shutting down; calls in flight have up to ${DRAIN_MS / 1000} s to finish`);
    void server.shutdown().then(() => {
      log("Shut down");
      process.exit(0);
    });
  };
  process.once("SIGTERM", () => stop("SIGTERM"));
  process.once("SIGINT", () => stop("SIGINT"));
  return undefined;
}

main().then(
  (code) => {
    if (code !== undefined) process.exitCode = code;
  },
  (error: unknown) => {
    console.error("Fatal error running server:", error);
    process.exit(1);
  },
);
