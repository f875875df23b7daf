/**
 * buildServer(): the MCP server with its tools, kept apart from transport
 * wiring. Every tool result — handler output, thrown error or rejected
 * arguments — leaves through the bounding layer here, in one place.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  RootsListChangedNotificationSchema,
  type CallToolResult,
} from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { boundError, runBounded, type Limits } from "../bounded.js";
import { CheckpointCache } from "../reading/index.js";
import { getValidRootDirectories } from "../roots-utils.js";
import { Sandbox } from "../sandbox/index.js";
import { instructions, listedTool, toolsFor } from "../tools/index.js";
import { VERSION } from "./config.js";

/** serverInfo.name reported at initialize (SPEC §2). */
const SERVER_NAME = "bounded-filesystem";

/** What buildServer needs: the limits, the startup directories and where diagnostics go. */
export interface ServerOptions {
  readonly limits: Limits;
  readonly directories: readonly string[];
  /** Diagnostic sink; stdout belongs to the protocol. @default console.error */
  readonly log?: (line: string) => void;
  /** Leave out the tools that change files (SPEC §14). @default false */
  readonly readOnly?: boolean;
}

const PROGRESS_INTERVAL_MS = 50;

function describeIssues(tool: string, error: z.ZodError, args: unknown): string {
  const parts = error.issues.map((issue) => {
    const where = issue.path.length > 0 ? issue.path.join(".") : "arguments";
    let seen: unknown = args;
    for (const key of issue.path) seen = seen && typeof seen === "object" ? (seen as Record<PropertyKey, unknown>)[key] : undefined;
    const shown = seen === undefined ? "" : ` (got ${JSON.stringify(seen)?.slice(0, 80) ?? String(seen)})`;
    return `${where}: ${issue.message}${shown}`;
  });
  return `Invalid arguments for ${tool}: ${parts.join("; ")}`;
}

/** Creates the server; connect it to a transport to serve. */
export function buildServer(options: ServerOptions): Server {
  const { limits } = options;
  const log = options.log ?? ((line: string) => console.error(line));
  const max = limits.maxResultChars;
  let allowedDirs: readonly string[] = [...options.directories];
  const cache = new CheckpointCache();
  const active = toolsFor(options.readOnly ?? false);
  const tools = new Map(active.map((tool) => [tool.name, { tool, schema: z.object(tool.input) }]));
  const listed = active.map((tool) => listedTool(tool, limits));

  const server = new Server({ name: SERVER_NAME, version: VERSION }, { capabilities: { tools: {} }, instructions: instructions(limits) });

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listed }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const { name, arguments: args = {} } = request.params;
    const entry = tools.get(name);
    if (!entry) return boundError(`Unknown tool: ${name}. Call tools/list for the available tools.`, max);
    const parsed = entry.schema.safeParse(args);
    if (!parsed.success) return boundError(describeIssues(name, parsed.error, args), max);

    const token = request.params._meta?.progressToken;
    let lastProgress = -1;
    let lastSent = 0;
    // One frozen snapshot per call; walks also ask for the directories now, to stop inside one no longer allowed.
    const sandbox = new Sandbox(allowedDirs, () => allowedDirs);
    return runBounded(max, entry.tool.advice, (bounds) =>
      entry.tool.handler(parsed.data, {
        limits,
        sandbox,
        bounds,
        cache,
        signal: extra.signal,
        progress(done, total) {
          const now = Date.now();
          if (token === undefined || done <= lastProgress || now - lastSent < PROGRESS_INTERVAL_MS) return;
          lastProgress = done;
          lastSent = now;
          const params = total === undefined ? { progressToken: token, progress: done } : { progressToken: token, progress: done, total };
          extra.sendNotification({ method: "notifications/progress", params }).catch(() => undefined);
        },
      }),
    );
  });

  // Answers to overlapping roots/list requests can arrive out of order; only the latest request counts.
  let rootsRequest = 0;
  const replaceFromRoots = async (): Promise<void> => {
    const request = ++rootsRequest;
    try {
      const { roots } = await server.listRoots();
      const valid = await getValidRootDirectories(roots);
      if (request !== rootsRequest) return;
      if (valid.length === 0) {
        log("No valid root directories provided by client; keeping the current allowed directories");
        return;
      }
      allowedDirs = valid;
      log(`Updated allowed directories from MCP roots: ${valid.length} valid directories`);
    } catch (error) {
      log(`Failed to request roots from client: ${error instanceof Error ? error.message : String(error)}`);
    }
  };

  server.setNotificationHandler(RootsListChangedNotificationSchema, replaceFromRoots);
  server.oninitialized = () => {
    if (server.getClientCapabilities()?.roots) void replaceFromRoots();
    else if (allowedDirs.length > 0) {
      log(`Client does not support MCP Roots, using allowed directories set from server args: ${allowedDirs.join(", ")}`);
    } else {
      log(
        "Server cannot operate: No allowed directories available. Start the server with directory arguments, " +
          "or use a client that supports MCP roots and provides valid root directories.",
      );
    }
  };
  return server;
}
