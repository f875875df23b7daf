/**
 * How a server's allowed directories follow the client's MCP roots (SPEC §2
 * Roots, §17, §21). "replace" (stdio): roots replace the directories, asked
 * after initialization and on every list_changed. "narrow" (HTTP): the
 * startup directories are a ceiling the roots only narrow, for this session
 * (2025-11-25) or this request (2026-07-28) alone. "fixed" (stateless 2025
 * HTTP): roots are never asked.
 *
 * In the 2025 era a session's roots are asked on the first call and the
 * first call after a list_changed, on that call's own stream. In the
 * 2026-07-28 era the server cannot send requests: a call that needs the
 * roots answers with an input_required round (`roots/list`), and the
 * client's retry carries them. Over stdio that happens only when the command
 * line named no directory (then they replace, once, and again after a
 * list_changed); over HTTP every call of a client that declares roots is
 * narrowed by the roots its retry carries, so nothing is kept between requests.
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  type ClientCapabilities,
  type InputRequiredResult,
  inputRequired,
  inputResponse,
  PROTOCOL_VERSION_META_KEY,
  type Server,
  type ServerContext,
} from "@modelcontextprotocol/server";
import { formatCount } from "../kernel/bounded.js";
import { isPathWithinAllowedDirectories } from "../path-validation.js";
import { getValidRootDirectories } from "../roots-utils.js";

/** See the module comment. */
export type RootsMode = "replace" | "narrow" | "fixed";

/** The directories one call works in, or the round that asks the client for its roots first. */
type CallDirectories = { readonly ask: InputRequiredResult } | { readonly allowed: () => readonly string[] };

/** The allowed directories of one server, as the roots made them. */
export interface RootsFollower {
  /** The directories for this call, once the roots it needs are applied; never rejects. */
  forCall(ctx: ServerContext): Promise<CallDirectories>;
}

/** How long a call waits for the client's roots, asked and not yet answered, before going on with the directories it has. */
const ROOTS_TIMEOUT_MS = 10_000;

/**
 * Roots a client's list is read to: each is resolved on disk (about 70 µs), and a call may wait for them, so 300,000
 * roots held a call 20 s. A client offers a few; the rest of a longer list are ignored, and the log says so.
 */
const MAX_ROOTS = 1000;

/** The key of the roots request in an input_required round. */
const ROOTS_KEY = "roots";

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

/** What a 2026-07-28 request says about its client: that it is one, and whether it declared roots. */
function modernClient(ctx: ServerContext): { roots: boolean } | undefined {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  if (envelope?.[PROTOCOL_VERSION_META_KEY] === undefined) return undefined;
  const capabilities = envelope[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined;
  return { roots: capabilities?.roots !== undefined };
}

const askForRoots = (): { ask: InputRequiredResult } => ({ ask: inputRequired({ inputRequests: { [ROOTS_KEY]: inputRequired.listRoots() } }) });

/** The roots a retried 2026-07-28 call carries, or undefined when it carries none. */
function answeredRoots(ctx: ServerContext): { uri: string }[] | undefined {
  const view = inputResponse(ctx.mcpReq.inputResponses, ROOTS_KEY);
  return view.kind === "roots" ? view.roots : undefined;
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
  const current = () => allowed;
  /** The directories the roots give, or undefined (logged) when they give none. */
  const resolve = async (given: readonly { uri: string }[], ceiling: readonly string[] | undefined): Promise<string[] | undefined> => {
    const roots = given.slice(0, MAX_ROOTS);
    if (roots.length < given.length) {
      log(`The client gave ${formatCount(given.length)} roots; using the first ${formatCount(MAX_ROOTS)} and ignoring the rest`);
    }
    const next = ceiling === undefined ? await getValidRootDirectories(roots) : await narrowEach(roots, ceiling, log);
    if (next.length === 0) {
      log("No valid root directories provided by client; keeping the current allowed directories");
      return undefined;
    }
    return next;
  };
  const apply = async (roots: readonly { uri: string }[]): Promise<void> => {
    const next = await resolve(roots, mode === "narrow" ? directories : undefined);
    if (next === undefined) return;
    allowed = next;
    log(`Updated allowed directories from MCP roots: ${next.length} valid directories`);
  };
  const failed = (error: unknown) => log(`Failed to request roots from client: ${error instanceof Error ? error.message : String(error)}`);
  const isModern = () => (server.getNegotiatedProtocolVersion() ?? "") >= "2026";

  if (mode === "replace") {
    // One roots/list question at a time: a list_changed while one is asked (its answer may predate the change) asks
    // once more when it is answered. A question per notification let 200,000 of them hold 1.4 GB of requests.
    // A call that arrives while one is asked (a client's first call, sent right after `initialized`, before its
    // answer) waits for it, rather than running with the directories it replaces (none, when the command line named
    // none): ROOTS_TIMEOUT_MS at most, as the question does.
    let asking: Promise<void> | undefined;
    let again = false;
    // 2026-07-28 over stdio: whether the next call must ask (no directory on the command line, roots not yet had).
    let modernStale = directories.length === 0;
    const replace = (): void => {
      if (asking !== undefined) {
        again = true;
        return;
      }
      asking = server
        .listRoots(undefined, { timeout: ROOTS_TIMEOUT_MS })
        .then(({ roots }) => apply(roots))
        .catch(failed)
        .finally(() => {
          asking = undefined;
          if (again) {
            again = false;
            replace();
          }
        });
    };
    server.setNotificationHandler("notifications/roots/list_changed", () => {
      if (!isModern()) replace();
      else if (directories.length === 0) modernStale = true;
    });
    server.oninitialized = () => {
      if (server.getClientCapabilities()?.roots) replace();
      else describeStart(allowed, log);
    };
    let described = false;
    return {
      async forCall(ctx) {
        const client = modernClient(ctx);
        if (client === undefined) {
          await asking;
          return { allowed: current };
        }
        if (!client.roots) {
          if (!described) describeStart(allowed, log);
          described = true;
          return { allowed: current };
        }
        if (!modernStale) return { allowed: current };
        const roots = answeredRoots(ctx);
        if (roots === undefined) return askForRoots();
        modernStale = false;
        await apply(roots);
        return { allowed: current };
      },
    };
  }

  if (mode === "fixed") return { forCall: async () => ({ allowed: current }) };

  // Narrow mode, 2025-11-25: `stale` says the next call must ask; calls arriving meanwhile share one question.
  let stale = false;
  let asking: Promise<void> | undefined;
  let generation = 0;
  server.setNotificationHandler("notifications/roots/list_changed", () => {
    stale = true;
    generation++;
  });
  server.oninitialized = () => {
    if (server.getClientCapabilities()?.roots) stale = true;
    else describeStart(allowed, log);
  };
  const session = (ctx: ServerContext): Promise<void> => {
    if (!stale) return asking ?? Promise.resolve();
    stale = false;
    const asked = generation;
    const question: Promise<void> = ctx.mcpReq
      .send({ method: "roots/list" }, { timeout: ROOTS_TIMEOUT_MS })
      // An answer overtaken by a list_changed is stale: the next call asks again.
      .then((result) => (asked === generation ? apply(result.roots) : undefined), failed)
      .finally(() => {
        if (asking === question) asking = undefined;
      });
    asking = question;
    return question;
  };
  return {
    async forCall(ctx) {
      const client = modernClient(ctx);
      if (client === undefined) {
        await session(ctx);
        return { allowed: current };
      }
      // 2026-07-28 over HTTP: this request alone is narrowed, by the roots its retry carries.
      if (!client.roots) return { allowed: current };
      const roots = answeredRoots(ctx);
      if (roots === undefined) return askForRoots();
      const narrowed = await resolve(roots, directories);
      const these = narrowed ?? directories;
      return { allowed: () => these };
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
