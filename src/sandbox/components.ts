/**
 * Path resolution from inside (SPEC §13): a path is followed one component at
 * a time, the way the kernel would, but only what lies inside the allowed
 * directories is ever looked at (lstat, readlink). A component outside them is
 * taken lexically and never probed, and a symlink whose target lies outside
 * (lexically) is refused without touching the target, so no outcome depends on
 * what exists outside.
 */
import type { Stats } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { isInside } from "./containment.js";
import { errnoCode } from "./errors.js";

// Linux's MAXSYMLINKS: symlinks followed in one resolution before it is called a loop.
const MAX_LINKS = 40;

/** How a walk from inside ended. */
export type Walked =
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
  | { kind: "loop" };

/** The root of absolute path `p` and its components (empty ones dropped). */
export function splitPath(p: string): { root: string; parts: string[] } {
  const { root } = path.parse(p);
  const separators = process.platform === "win32" ? /[\\/]+/ : /\/+/;
  return { root, parts: p.slice(root.length).split(separators).filter((part) => part !== "") };
}

/** A running resolution: where it stands, what it stands on, and what is left to walk. */
interface Position {
  current: string;
  /** lstat of `current`; undefined where it was reached lexically or by `..` (a directory either way). */
  stat: Stats | undefined;
  /** The components still to walk, the next one last. */
  pending: string[];
  links: number;
}

/**
 * Continues with symlink target `target`, as read from a link in directory `dir` (a real path inside).
 * @returns false when the target lies outside `allowedDirs`, lexically; nothing outside is touched
 */
function enterLink(at: Position, target: string, dir: string, allowedDirs: readonly string[]): boolean {
  if (!isInside(path.resolve(dir, target), allowedDirs)) return false;
  const { root, parts } = path.isAbsolute(target) ? splitPath(target) : { root: dir, parts: splitPath(`/${target}`).parts };
  at.current = root;
  at.stat = undefined;
  for (let i = parts.length - 1; i >= 0; i--) at.pending.push(parts[i]!);
  return true;
}

/** Walks `at.pending` from `at.current`; the heart of walkPath and walkLink. */
async function walk(at: Position, allowedDirs: readonly string[]): Promise<Walked> {
  for (;;) {
    const part = at.pending.pop();
    if (part === undefined) break;
    // Anything but a directory (or a place reached lexically) cannot be walked through: ENOTDIR.
    if (at.stat !== undefined && !at.stat.isDirectory()) return { kind: "notDir" };
    if (part === ".") continue;
    if (part === "..") {
      at.current = path.dirname(at.current);
      at.stat = undefined;
      continue;
    }
    const next = path.join(at.current, part);
    if (!isInside(next, allowedDirs)) {
      // Outside: taken as written, never probed. Only a later component can come back inside.
      at.current = next;
      at.stat = undefined;
      continue;
    }
    let st: Stats;
    try {
      st = await fs.lstat(next);
    } catch (error) {
      const code = errnoCode(error);
      if (code === "ENOTDIR") return { kind: "notDir" };
      if (code !== "ENOENT") throw error;
      const last = at.pending.every((p) => p === ".");
      return last ? { kind: "missing", path: next } : { kind: "noParent" };
    }
    if (st.isSymbolicLink()) {
      if (++at.links > MAX_LINKS) return { kind: "loop" };
      const target = await fs.readlink(next).catch((error: unknown) => {
        // No longer a symlink (EINVAL) or gone (ENOENT) since the lstat: look at the component again.
        const code = errnoCode(error);
        if (code === "EINVAL" || code === "ENOENT") return undefined;
        throw error;
      });
      if (target === undefined) at.pending.push(part);
      else if (!enterLink(at, target, at.current, allowedDirs)) return { kind: "outside" };
      continue;
    }
    at.current = next;
    at.stat = st;
  }
  if (!isInside(at.current, allowedDirs)) return { kind: "outside" };
  // Reached by `..` (a real directory's parent) or as an allowed directory taken lexically.
  at.stat ??= await fs.lstat(at.current);
  if (at.stat.isSymbolicLink()) return { kind: "outside" };
  return { kind: "found", real: at.current, stat: at.stat };
}

/**
 * Resolves absolute path `absolute` component by component, following symlinks from inside only.
 * @throws the low-level error (EACCES, ENAMETOOLONG…) of a look at a path inside, for the caller to word
 */
export function walkPath(absolute: string, allowedDirs: readonly string[]): Promise<Walked> {
  const { root, parts } = splitPath(absolute);
  return walk({ current: root, stat: undefined, pending: parts.reverse(), links: 0 }, allowedDirs);
}

/**
 * Resolves symlink target `target` as a link in the directory whose real path is `dir` (inside) would.
 * @throws the low-level error of a look at a path inside, for the caller to word
 */
export async function walkTarget(target: string, dir: string, allowedDirs: readonly string[]): Promise<Walked> {
  const at: Position = { current: dir, stat: undefined, pending: [], links: 1 };
  if (!enterLink(at, target, dir, allowedDirs)) return { kind: "outside" };
  return walk(at, allowedDirs);
}
