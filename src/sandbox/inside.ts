/**
 * The Sandbox's path checks (SPEC §13): requested path → path inside, resolved
 * from inside (components.ts). Whatever lies behind a path that leads outside —
 * a file, a directory, nothing, a chain — the refusal is the same one, naming
 * the path as given. (lib.ts keeps upstream's texts through resolve.ts.)
 */
import fs from "node:fs/promises";
import path from "node:path";
import { walkPath, walkTarget, type Walked } from "./components.js";
import { isAllowedDirectory, isInside } from "./containment.js";
import { accessDenied, SafeFsError, wrapError } from "./errors.js";
import { resolveRequestedPathWith, type PathIO } from "./resolve.js";
import type { LinkTarget } from "./strategy.js";

/** Where a symlink met in a walk leads. */
export type LinkVerdict = { kind: "inside"; target: LinkTarget } | { kind: "dangling" } | { kind: "outside" };

/** A requested path made absolute and checked lexically; `wantsDir` when it ends in a separator (`x/`). */
interface Requested {
  allowedDirs: readonly string[];
  absolute: string;
  wantsDir: boolean;
}

const TRAILING_SEPARATOR = process.platform === "win32" ? /[\\/]\.?$/ : /\/\.?$/;

/** `Not a directory: <path as given>`, as the shell says it. */
export function notADirectory(given: string): SafeFsError {
  return new SafeFsError(`Not a directory: ${given}`, { code: "ENOTDIR" });
}

/**
 * The PathIO with which a relative path picks among several allowed directories: a candidate "exists"
 * only when it resolves from inside, so the choice never depends on anything outside.
 */
function lookFromInside(allowedDirs: readonly string[]): PathIO {
  const look = async (p: string): Promise<string> => {
    const result = await walkPath(p, allowedDirs);
    if (result.kind !== "found") throw new SafeFsError(`Not found from inside: ${p}`, { code: "ENOENT" });
    return result.real;
  };
  return { realpath: look, lstat: look };
}

async function request(given: string, allowedDirs: readonly string[]): Promise<Requested> {
  let absolute: string;
  try {
    absolute = await resolveRequestedPathWith(lookFromInside(allowedDirs), given, allowedDirs);
  } catch (error) {
    // resolve.ts names the absolute form (lib.ts's text); here the path is named as given.
    if (error instanceof SafeFsError && error.code === "EACCES") throw accessDenied(given, allowedDirs);
    throw error;
  }
  return { allowedDirs, absolute, wantsDir: TRAILING_SEPARATOR.test(given) };
}

async function walked(target: string, req: Requested): Promise<Walked> {
  try {
    return await walkPath(target, req.allowedDirs);
  } catch (error) {
    throw wrapError(error, `Cannot resolve ${req.absolute}`);
  }
}

/**
 * The real path of `given` (or the would-be path of a new file in a real directory inside).
 * @throws the uniform refusal when it leads outside; `Not a directory`, `No such directory`,
 * `Parent directory does not exist`, or `Too many levels of symbolic links`
 */
export async function validateInside(given: string, allowedDirs: readonly string[]): Promise<string> {
  const req = await request(given, allowedDirs);
  const result = await walked(req.absolute, req);
  switch (result.kind) {
    case "found":
      if (req.wantsDir && !result.stat.isDirectory()) throw notADirectory(given);
      return result.real;
    case "missing":
      // `newfile/` names a directory that does not exist; it is never created as a file.
      if (req.wantsDir) throw new SafeFsError(`No such directory: ${given}`, { code: "ENOENT" });
      return result.path;
    case "noParent":
      throw new SafeFsError(`Parent directory does not exist: ${path.dirname(req.absolute)}`, { code: "ENOENT" });
    case "notDir":
      throw notADirectory(given);
    case "loop":
      throw new SafeFsError(`Too many levels of symbolic links (ELOOP): ${req.absolute}`, { code: "ELOOP" });
    case "outside":
      throw accessDenied(given, allowedDirs);
  }
}

/**
 * The absolute path of a directory to create, refused (uniformly) when it leads outside
 * through a symlink; whatever else is wrong with it is for the mkdir to say.
 */
export async function creatableInside(given: string, allowedDirs: readonly string[]): Promise<string> {
  const req = await request(given, allowedDirs);
  if ((await walked(req.absolute, req)).kind === "outside") throw accessDenied(given, allowedDirs);
  return req.absolute;
}

/** An entry named by a path, its final component not followed (move_file's two ends). */
export interface Entry {
  /** Its path in the real parent directory (or the allowed directory itself, or the lexical path when the parent is missing). */
  path: string;
  /** True for a path ending in a separator: the entry must be a directory. */
  wantsDir: boolean;
}

/**
 * The entry `given` names, its parent resolved from inside and its final component left as it is.
 * @throws the uniform refusal when its parent leads outside; `Not a directory` when the parent is not one
 */
export async function entryInside(given: string, allowedDirs: readonly string[]): Promise<Entry> {
  const req = await request(given, allowedDirs);
  if (isAllowedDirectory(req.absolute, allowedDirs)) return { path: req.absolute, wantsDir: req.wantsDir };
  const parent = await walked(path.dirname(req.absolute), req);
  if (parent.kind === "outside") throw accessDenied(given, allowedDirs);
  if (parent.kind === "notDir" || (parent.kind === "found" && !parent.stat.isDirectory())) throw notADirectory(given);
  // A missing parent or a loop is the move's to report, as it opens the parent.
  const at = parent.kind === "found" ? path.join(parent.real, path.basename(req.absolute)) : req.absolute;
  return { path: at, wantsDir: req.wantsDir };
}

/** Whether a symlink with target `target` placed in directory `dir` (a real path inside) would lead outside. */
export async function leadsOutside(target: string, dir: string, allowedDirs: readonly string[]): Promise<boolean> {
  return (await walkTarget(target, dir, allowedDirs)).kind === "outside";
}

/**
 * Where the symlink at `link` (an entry of a walked directory) leads, resolved from inside: a link
 * leading outside is "outside" whether or not its target exists. Never rejects.
 */
export async function followLinkInside(link: string, withSize: boolean, allowedDirs: readonly string[]): Promise<LinkVerdict> {
  try {
    // On Linux `link` is reached through /proc/self/fd/<fd>/, whose real path is the directory read.
    const dir = await fs.realpath(path.dirname(link));
    if (!isInside(dir, allowedDirs)) return { kind: "outside" };
    const result = await walkTarget(await fs.readlink(link), dir, allowedDirs);
    if (result.kind === "found") return { kind: "inside", target: { real: result.real, size: withSize ? result.stat.size : 0 } };
    if (result.kind === "missing" || result.kind === "noParent") return { kind: "dangling" };
    return { kind: "outside" };
  } catch {
    return { kind: "outside" };
  }
}
