/**
 * Resolution from inside (SPEC §13): a path is looked up one component at a
 * time, the way the kernel would, but only what lies inside the allowed
 * directories is ever looked at (lstat, readlink). A component outside them is
 * taken lexically and never probed, and a symlink whose target lies outside
 * (lexically) is refused without touching the target, so no outcome depends on
 * what exists outside. Also where a symlink met in a walk leads, the same way.
 */
import { lstatSync, readlinkSync, realpathSync, type Stats } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import type { Confinement } from "./confinement.js";

/** All a resolution asks of the allowed directories: whether a real path lies inside them. */
type Inside = Pick<Confinement, "inside">;
import { errnoCode } from "./errors.js";
import { isServerEntry } from "./names.js";
import { SEPARATORS } from "./platform/index.js";

// Linux's MAXSYMLINKS: symlinks followed in one resolution before it is called a loop.
const MAX_LINKS = 40;

/** How a resolution from inside ended. */
export type Resolved =
  /** Everything exists; `real` is the real path inside and `stat` its lstat (never a symlink). */
  | { kind: "found"; real: string; stat: Stats }
  /** Only the last component is missing; `path` is its would-be path in a real directory inside. */
  | { kind: "missing"; path: string }
  /** A component before the last is missing. */
  | { kind: "noParent" }
  /** A component before the last is not a directory. */
  | { kind: "notDir" }
  /** The path, or a symlink on it, leads outside the allowed directories. */
  | { kind: "outside" }
  /** More than MAX_LINKS symlinks were followed. */
  | { kind: "loop" }
  /** A component inside, as written or reached through a link, is one of this server's own names (names.ts); never looked at. */
  | { kind: "serverName"; name: string };

/**
 * Where a symlink met in a walk leads: inside (its target's real path and size), nowhere, outside, round
 * in a loop (or through more than MAX_LINKS links), or where it cannot be told (`code`: why not).
 */
export type LinkVerdict =
  | { kind: "inside"; target: { real: string; size: number; isDir: boolean; isFile: boolean; mtimeMs: number } }
  | { kind: "dangling" }
  | { kind: "outside" }
  | { kind: "loop" }
  | { kind: "unresolved"; code: string };

/**
 * One look at a path inside that a resolution asks for. A resolution is written once, as steps that yield its
 * looks (`Steps`); a driver answers them synchronously (a walk, where a thread-pool round trip per look made
 * each link it met cost a millisecond) or through the thread pool (a tool's path, the event loop left free).
 */
type Look = { kind: "lstat" | "readlink" | "realpath"; path: string };
type Steps<T> = Generator<Look, T, unknown>;

function* lstat(p: string): Steps<Stats> {
  return (yield { kind: "lstat", path: p }) as Stats;
}

function* readlink(p: string): Steps<string> {
  return (yield { kind: "readlink", path: p }) as string;
}

function* realpath(p: string): Steps<string> {
  return (yield { kind: "realpath", path: p }) as string;
}

/** Runs `steps` to their end, each look answered now; a look's failure is thrown into the steps. */
function runSync<T>(steps: Steps<T>): T {
  let at = steps.next();
  while (!at.done) {
    const look = at.value;
    let answer: Stats | string;
    try {
      answer = look.kind === "lstat" ? lstatSync(look.path) : look.kind === "readlink" ? readlinkSync(look.path) : realpathSync(look.path);
    } catch (error) {
      at = steps.throw(error);
      continue;
    }
    at = steps.next(answer);
  }
  return at.value;
}

/** Runs `steps` to their end, each look answered in the thread pool; a look's failure is thrown into the steps. */
async function runAsync<T>(steps: Steps<T>): Promise<T> {
  let at = steps.next();
  while (!at.done) {
    const look = at.value;
    let answer: Stats | string;
    try {
      answer = await (look.kind === "lstat" ? fs.lstat(look.path) : look.kind === "readlink" ? fs.readlink(look.path) : fs.realpath(look.path));
    } catch (error) {
      at = steps.throw(error);
      continue;
    }
    at = steps.next(answer);
  }
  return at.value;
}

/** The root of absolute path `p` and its components (empty ones dropped). */
function splitPath(p: string): { root: string; parts: string[] } {
  const { root } = path.parse(p);
  return {
    root,
    parts: p
      .slice(root.length)
      .split(SEPARATORS)
      .filter((part) => part !== ""),
  };
}

/** A running resolution: inside what, where it stands, what it stands on, and what is left to look up. */
interface Position {
  readonly c: Inside;
  current: string;
  /** lstat of `current`; undefined where it was reached lexically or by `..` (a directory either way). */
  stat: Stats | undefined;
  /** The components still to look up, the next one last. */
  pending: string[];
  links: number;
}

/**
 * Continues with symlink target `target`, as read from a link in directory `dir` (a real path inside).
 * @returns false when the target lies outside, lexically; nothing outside is touched
 */
function enterLink(at: Position, target: string, dir: string): boolean {
  if (!at.c.inside(path.resolve(dir, target))) return false;
  const { root, parts } = path.isAbsolute(target) ? splitPath(target) : { root: dir, parts: splitPath(`/${target}`).parts };
  at.current = root;
  at.stat = undefined;
  for (let i = parts.length - 1; i >= 0; i--) at.pending.push(parts[i]!);
  return true;
}

/** Looks up `at.pending` from `at.current`; the heart of resolveFromInside and resolveLinkTarget. */
function* lookUp(at: Position): Steps<Resolved> {
  for (;;) {
    const part = at.pending.pop();
    if (part === undefined) break;
    // Anything but a directory (or a place reached lexically) cannot be passed through: ENOTDIR.
    if (at.stat !== undefined && !at.stat.isDirectory()) return { kind: "notDir" };
    if (part === ".") continue;
    if (part === "..") {
      at.current = path.dirname(at.current);
      at.stat = undefined;
      continue;
    }
    const next = path.join(at.current, part);
    if (!at.c.inside(next)) {
      // Outside: taken as written, never probed. Only a later component can come back inside.
      at.current = next;
      at.stat = undefined;
      continue;
    }
    // A link to a lock would otherwise be followed into the lock's text, which names its holder.
    if (isServerEntry(part)) return { kind: "serverName", name: part };
    let st: Stats;
    try {
      st = yield* lstat(next);
    } catch (error) {
      const code = errnoCode(error);
      if (code === "ENOTDIR") return { kind: "notDir" };
      if (code !== "ENOENT") throw error;
      const last = at.pending.every((p) => p === ".");
      return last ? { kind: "missing", path: next } : { kind: "noParent" };
    }
    if (st.isSymbolicLink()) {
      if (++at.links > MAX_LINKS) return { kind: "loop" };
      let target: string | undefined;
      try {
        target = yield* readlink(next);
      } catch (error) {
        // No longer a symlink (EINVAL) or gone (ENOENT) since the lstat: look at the component again.
        const code = errnoCode(error);
        if (code !== "EINVAL" && code !== "ENOENT") throw error;
      }
      if (target === undefined) at.pending.push(part);
      else if (!enterLink(at, target, at.current)) return { kind: "outside" };
      continue;
    }
    at.current = next;
    at.stat = st;
  }
  if (!at.c.inside(at.current)) return { kind: "outside" };
  // Reached by `..` (a real directory's parent) or as an allowed directory taken lexically.
  at.stat ??= yield* lstat(at.current);
  if (at.stat.isSymbolicLink()) return { kind: "outside" };
  return { kind: "found", real: at.current, stat: at.stat };
}

/**
 * Resolves absolute path `absolute` component by component, following symlinks from inside only.
 * @throws the low-level error (EACCES, ENAMETOOLONG…) of a look at a path inside, for the caller to word
 */
export function resolveFromInside(absolute: string, c: Inside): Promise<Resolved> {
  const { root, parts } = splitPath(absolute);
  return runAsync(lookUp({ c, current: root, stat: undefined, pending: parts.reverse(), links: 0 }));
}

/**
 * Resolves symlink target `target` as a link in the directory whose real path is `dir` (inside) would.
 * @throws the low-level error of a look at a path inside, for the caller to word
 */
function* resolveLinkTarget(target: string, dir: string, c: Inside): Steps<Resolved> {
  const at: Position = { c, current: dir, stat: undefined, pending: [], links: 1 };
  if (!enterLink(at, target, dir)) return { kind: "outside" };
  return yield* lookUp(at);
}

/** Whether a symlink with target `target` placed in directory `dir` (a real path inside) would lead outside. */
export async function leadsOutside(target: string, dir: string, c: Inside): Promise<boolean> {
  return (await runAsync(resolveLinkTarget(target, dir, c))).kind === "outside";
}

/** Where the symlink at `link` leads, as `followLink` tells it: the steps, for either driver. */
function* linkSteps(link: string, withSize: boolean, c: Inside): Steps<LinkVerdict> {
  let dir: string;
  try {
    // On Linux `link` is reached through /proc/self/fd/<fd>/, whose real path is the directory read.
    dir = yield* realpath(path.dirname(link));
  } catch (error) {
    return { kind: "unresolved", code: errnoCode(error) ?? "EIO" };
  }
  if (!c.inside(dir)) return { kind: "outside" };
  try {
    const result = yield* resolveLinkTarget(yield* readlink(link), dir, c);
    if (result.kind === "found")
      return {
        kind: "inside",
        target: {
          real: result.real,
          size: withSize ? result.stat.size : 0,
          isDir: result.stat.isDirectory(),
          isFile: result.stat.isFile(),
          mtimeMs: result.stat.mtimeMs,
        },
      };
    // The server's own files are shown by no tool: a link to one leads nowhere.
    if (result.kind === "missing" || result.kind === "noParent" || result.kind === "serverName") return { kind: "dangling" };
    if (result.kind === "loop") return { kind: "loop" };
    // Upstream's realpath fails here with ENOTDIR, which its validation does not take as a new file.
    if (result.kind === "notDir") return { kind: "unresolved", code: "ENOTDIR" };
    return { kind: "outside" };
  } catch (error) {
    // Failures of looks inside only (nothing outside is looked at), so saying why reveals nothing outside.
    return { kind: "unresolved", code: errnoCode(error) ?? "EIO" };
  }
}

/**
 * Where the symlink at `link` (an entry of a listed directory) leads, resolved from inside: a link leading
 * outside is "outside" whether or not its target exists, and so is a loop that passes outside (nothing there
 * is looked at); a loop inside is "loop". Never rejects.
 */
export function followLink(link: string, withSize: boolean, c: Inside): Promise<LinkVerdict> {
  return runAsync(linkSteps(link, withSize, c));
}

/**
 * `followLink` answered now, for a walk (`link` an entry of a walked directory): its few looks, each a
 * lookup in a directory the kernel has cached, cost microseconds, where a thread-pool round trip each made
 * every link a walk met cost about a millisecond (a node_modules/.bin of links held a search's walk still).
 */
export function followLinkSync(link: string, withSize: boolean, c: Inside): LinkVerdict {
  return runSync(linkSteps(link, withSize, c));
}
