/**
 * buildServer(): the MCP server with its tools, kept apart from transport
 * wiring. Every tool result — handler output, thrown error or rejected
 * arguments — leaves through the bounding layer here, in one place.
 */
import { type AuthInfo, type CacheHint, type CallToolResult, type InputRequiredResult, Server } from "@modelcontextprotocol/server";
import { z } from "zod";
import { boundError, runBounded, type Limits } from "../kernel/bounded.js";
import { errnoCode, Sandbox } from "../sandbox/index.js";
import { nearNameNote } from "../tools/near-name.js";
import { PATH_PARAMETERS, pathParameterNote } from "../tools/shared.js";
import { describeIssues, misnamedParameter, textTaken, tooManyItems, unpairedSurrogate } from "./arguments.js";
import { type Catalog, type Catalogs, instructions, listedTool, toolsFor } from "./catalog.js";
import { SERVER_NAME, VERSION } from "./identity.js";
import { followRoots, type RootsMode } from "./roots.js";
import type { Runtime } from "./runtime.js";

/**
 * The cache hint of the 2026-07-28 list results (SPEC §21): the tool list and the discover result
 * change only with the command line, but tools/list varies with the caller's token, so it is private.
 */
const CACHE_HINT: CacheHint = { ttlMs: 300_000, cacheScope: "private" };

/** What buildServer needs: the limits, the startup directories, the runtime and where diagnostics go. */
export interface ServerOptions {
  readonly limits: Limits;
  readonly directories: readonly string[];
  /** Diagnostic sink; stdout belongs to the protocol. @default console.error */
  readonly log?: (line: string) => void;
  /** Leave out the tools that change files (SPEC §14), also when `tools` names them. @default false */
  readonly readOnly?: boolean;
  /** The names of the tools to offer (SPEC §19). @default every tool */
  readonly tools?: readonly string[];
  /** How the client's roots change the directories (see roots.ts). @default "replace" */
  readonly roots?: RootsMode;
  /**
   * Whether a request's credentials allow the tools that change files; without it they do. Those tools
   * are then left out of that request's tools/list and refused by tools/call.
   */
  readonly mayWrite?: (auth: AuthInfo | undefined) => boolean;
  /**
   * The credentials the session was opened with (HTTP), which every later request of it must carry too:
   * when they allow reading only, the instructions leave out what concerns the tools that change files.
   */
  readonly openedWith?: AuthInfo;
  /** The process resources (runtime.ts); the servers of one process share one. */
  readonly runtime: Runtime;
}

const PROGRESS_INTERVAL_MS = 50;

function catalogFor(catalogs: Catalogs, limits: Limits, readOnly: boolean, chosen: readonly string[] | undefined): Catalog {
  const byMode = catalogs.get(limits) ?? catalogs.set(limits, new Map()).get(limits)!;
  const key = `${readOnly}:${chosen?.join(",") ?? "*"}`;
  const known = byMode.get(key);
  if (known) return known;
  const active = toolsFor(readOnly, chosen);
  const listed = active.map((tool) => listedTool(tool, limits));
  const catalog: Catalog = {
    tools: new Map(active.map((tool) => [tool.name, { tool, schema: z.object(tool.input) }])),
    listed,
    listedReading: listed.filter((_, i) => active[i]?.annotations.readOnlyHint === true),
    instructions: instructions(limits, active),
    readingInstructions: instructions(
      limits,
      active.filter((tool) => tool.annotations.readOnlyHint === true),
    ),
  };
  byMode.set(key, catalog);
  return catalog;
}

/** Creates the server; connect it to a transport to serve. */
export function buildServer(options: ServerOptions): Server {
  const { limits } = options;
  const log = options.log ?? ((line: string) => console.error(line));
  const max = limits.maxResultChars;
  const { runtime } = options;
  const mayWrite = options.mayWrite ?? (() => true);
  const catalog = catalogFor(runtime.catalogs, limits, options.readOnly ?? false, options.tools);
  const { tools, listed, listedReading } = catalog;
  const shared = options.openedWith === undefined || mayWrite(options.openedWith) ? catalog.instructions : catalog.readingInstructions;

  const server = new Server(
    { name: SERVER_NAME, version: VERSION },
    {
      capabilities: { tools: {} },
      instructions: shared,
      cacheHints: { "tools/list": CACHE_HINT, "server/discover": CACHE_HINT },
    },
  );
  const roots = followRoots(server, options.roots ?? "replace", options.directories, log);

  server.setRequestHandler("tools/list", (_request, ctx) => ({
    tools: [...(mayWrite(ctx.http?.authInfo) ? listed : listedReading)],
  }));

  server.setRequestHandler("tools/call", async (request, ctx): Promise<CallToolResult | InputRequiredResult> => {
    const { name, arguments: given = {} } = request.params;
    const entry = tools.get(name);
    if (!entry) return boundError(`Unknown tool: ${name}. Call tools/list for the available tools.`, max);
    const args = textTaken(entry.tool.input, given);
    if (entry.tool.annotations.readOnlyHint !== true && !mayWrite(ctx.http?.authInfo)) {
      return boundError(
        `${name} changes files, which needs write access (OAuth scope fs:write, or a token not marked read-only); ` +
          "this request's credentials allow reading only. Call tools/list for the tools available.",
        max,
      );
    }
    const retired = Object.entries(entry.tool.retired ?? {}).find(([key]) => args[key] !== undefined && args[key] !== false);
    if (retired) return boundError(`Invalid arguments for ${name}: ${retired[0]}: ${retired[1]}. Nothing was written.`, max);
    const refusal =
      tooManyItems(name, entry.tool.input, args) ??
      misnamedParameter(name, entry.tool.input, args) ??
      unpairedSurrogate(name, entry.tool.input, args);
    if (refusal !== undefined) return boundError(refusal, max);
    const parsed = entry.schema.safeParse(args);
    if (!parsed.success) return boundError(describeIssues(name, parsed.error, args), max);
    // In the 2026-07-28 era the roots are asked through an input_required round, answered by the client's retry.
    const directories = await roots.forCall(ctx);
    if ("ask" in directories) return directories.ask;

    const token = ctx.mcpReq._meta?.progressToken ?? request.params._meta?.progressToken;
    let lastProgress = -1;
    let lastSent = 0;
    // The last progress notification handed to the SDK: the result waits for it, so no progress reaches
    // the client after the response (the SDK sends a notification a few microtasks after it is asked to).
    let progressSent: Promise<void> = Promise.resolve();
    // One frozen snapshot per call; walks also ask for the directories now, to stop inside one no longer allowed.
    const sandbox = new Sandbox(runtime, directories.allowed(), directories.allowed);
    const result = await runBounded(max, entry.tool.advice, (bounds) =>
      pathNoted(
        args,
        sandbox,
        entry.tool.handler(parsed.data, {
          limits,
          sandbox,
          walks: sandbox,
          bounds,
          runtime,
          signal: ctx.mcpReq.signal,
          progress(done, total) {
            const now = Date.now();
            if (token === undefined || done <= lastProgress || now - lastSent < PROGRESS_INTERVAL_MS) return;
            lastProgress = done;
            lastSent = now;
            const params = total === undefined ? { progressToken: token, progress: done } : { progressToken: token, progress: done, total };
            progressSent = ctx.mcpReq.notify({ method: "notifications/progress", params }).catch(() => undefined);
          },
        }),
      ),
    );
    await progressSent;
    // The collection, when due, runs in a task of its own, after this result is on its way.
    runtime.heap.settle();
    return result;
  });

  return server;
}

/**
 * A handler's failure, with a note on a path parameter that explains it: pathParameterNote's, or for a path that
 * named nothing, nearNameNote's on the first path parameter one of whose names differs from an entry's only in
 * letter case or Unicode form.
 */
async function pathNoted<T>(args: Readonly<Record<string, unknown>>, sandbox: Sandbox, running: Promise<T>): Promise<T> {
  try {
    return await running;
  } catch (error) {
    const missing = errnoCode(error) === "ENOENT";
    let note = pathParameterNote(args, missing);
    for (const key of missing && note === "" ? PATH_PARAMETERS : []) {
      const value = args[key];
      if (typeof value === "string") note = await nearNameNote(sandbox, sandbox, key, value);
      if (note !== "") break;
    }
    if (note === "") throw error;
    throw new Error(`${error instanceof Error ? error.message : String(error)}${note}`, { cause: error });
  }
}
