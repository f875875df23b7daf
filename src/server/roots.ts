/**
 * How a server's allowed directories follow the client's MCP roots (SPEC §2
 * Roots, §17). "replace" (stdio): roots replace the directories, asked after
 * initialization and on every list_changed. "narrow" (an HTTP session): the
 * startup directories are a ceiling the roots only narrow, for this session
 * alone; they are asked on the session's first call and the first call after
 * a list_changed, on that call's own stream — SDK 1.32.2 drops a request sent
 * on the standalone stream before the client opened it. "fixed" (stateless
 * HTTP): roots are never asked.
 */
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { ListRootsResultSchema, type ListRootsRequest, RootsListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { isPathWithinAllowedDirectories } from "../path-validation.js";
import { getValidRootDirectories } from "../roots-utils.js";

/** See the module comment. */
export type RootsMode = "replace" | "narrow" | "fixed";

/** What a request handler can use to ask the client something on its own stream. */
interface AskClient {
  sendRequest(request: ListRootsRequest, schema: typeof ListRootsResultSchema, options?: { timeout?: number }): Promise<{ roots: { uri: string }[] }>;
}

/** The allowed directories of one server, as the roots made them. */
export interface RootsFollower {
  /** The allowed directories now. */
  current(): readonly string[];
  /** Resolves once the roots asked for (narrow mode) are applied; never rejects. */
  ready(ask: AskClient): Promise<void>;
}

/** How long a session's first call waits for the client's roots before going on with the directories it has. */
const ROOTS_TIMEOUT_MS = 10_000;

/**
 * The roots that lie inside `ceiling`, and for a root that contains ceiling directories, those
 * directories: never more than the ceiling. `ignored` lists the roots that share nothing with it.
 */
export function narrowRoots(roots: readonly string[], ceiling: readonly string[]): { kept: string[]; ignored: string[] } {
  const kept: string[] = [];
  const ignored: string[] = [];
  const keep = (dir: string) => kept.includes(dir) || kept.push(dir);
  for (const root of roots) {
    if (isPathWithinAllowedDirectories(root, ceiling)) keep(root);
    else {
      const inside = ceiling.filter((dir) => isPathWithinAllowedDirectories(dir, [root]));
      if (inside.length === 0) ignored.push(root);
      inside.forEach(keep);
    }
  }
  return { kept, ignored };
}

/**
 * Narrow mode's directories from `roots`: each root judged by its real directory, so that one spelled through
 * a symlink inside the ceiling that leads outside it is ignored (and said so), never kept as a spelling that
 * every call would then be denied. The symlinked spelling is kept beside the real one only when that is inside.
 */
async function narrowEach(roots: readonly { uri: string }[], ceiling: readonly string[], log: (line: string) => void): Promise<string[]> {
  const next: string[] = [];
  for (const root of roots) {
    // The real directory first, then the as-given spelling when it differs (roots-utils.ts).
    const forms = await getValidRootDirectories([root]);
    const real = forms[0];
    if (real === undefined) continue;
    const { kept, ignored } = narrowRoots([real], ceiling);
    if (ignored.length > 0) {
      const given = forms[1];
      log(
        given === undefined
          ? `Ignoring root ${real}: it is outside the directories this server was started with`
          : `Ignoring root ${given}: it is a symbolic link leading outside the directories this server was started with`,
      );
      continue;
    }
    const inside = isPathWithinAllowedDirectories(real, ceiling) ? forms.filter((form) => isPathWithinAllowedDirectories(form, ceiling)) : kept;
    for (const dir of inside) if (!next.includes(dir)) next.push(dir);
  }
  return next;
}

/** Installs the roots handling of `mode` on `server`, starting from `directories`. */
export function followRoots(server: Server, mode: RootsMode, directories: readonly string[], log: (line: string) => void): RootsFollower {
  let allowed: readonly string[] = [...directories];
  const apply = async (roots: readonly { uri: string }[]): Promise<void> => {
    const next = mode === "narrow" ? await narrowEach(roots, directories, log) : await getValidRootDirectories(roots);
    if (next.length === 0) {
      log("No valid root directories provided by client; keeping the current allowed directories");
      return;
    }
    allowed = next;
    log(`Updated allowed directories from MCP roots: ${next.length} valid directories`);
  };
  const failed = (error: unknown) => log(`Failed to request roots from client: ${error instanceof Error ? error.message : String(error)}`);

  if (mode === "replace") {
    // Answers to overlapping roots/list requests can arrive out of order; only the latest request counts.
    let latest = 0;
    const replace = async (): Promise<void> => {
      const request = ++latest;
      try {
        const { roots } = await server.listRoots();
        if (request === latest) await apply(roots);
      } catch (error) {
        failed(error);
      }
    };
    server.setNotificationHandler(RootsListChangedNotificationSchema, replace);
    server.oninitialized = () => {
      if (server.getClientCapabilities()?.roots) void replace();
      else describeStart(allowed, log);
    };
    return { current: () => allowed, ready: async () => undefined };
  }

  // Narrow mode: `stale` says the next call must ask; calls arriving meanwhile share one question.
  let stale = false;
  let asking: Promise<void> | undefined;
  let generation = 0;
  if (mode === "narrow") {
    server.setNotificationHandler(RootsListChangedNotificationSchema, () => {
      stale = true;
      generation++;
    });
    server.oninitialized = () => {
      if (server.getClientCapabilities()?.roots) stale = true;
      else describeStart(allowed, log);
    };
  }
  return {
    current: () => allowed,
    ready(ask) {
      if (!stale) return asking ?? Promise.resolve();
      stale = false;
      const asked = generation;
      const question: Promise<void> = ask
        .sendRequest({ method: "roots/list" }, ListRootsResultSchema, { timeout: ROOTS_TIMEOUT_MS })
        // An answer overtaken by a list_changed is stale: the next call asks again.
        .then((result) => (asked === generation ? apply(result.roots) : undefined), failed)
        .finally(() => {
          if (asking === question) asking = undefined;
        });
      asking = question;
      return question;
    },
  };
}

function describeStart(allowed: readonly string[], log: (line: string) => void): void {
  if (allowed.length > 0) {
    log(`Client does not support MCP Roots, using allowed directories set from server args: ${allowed.join(", ")}`);
  } else {
    log(
      "Server cannot operate: No allowed directories available. Start the server with directory arguments, " +
        "or use a client that supports MCP roots and provides valid root directories.",
    );
  }
}
