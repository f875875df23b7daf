/**
 * A requested path → the path inside that it names (SPEC §2, §9, §13). First
 * lexically: a `file://` URL read as its path, `~` expanded, a relative path resolved against the allowed
 * directories, a NUL byte refused, the result checked against them; the file
 * system is reached only through the `PathIO` given, so lib.ts passes its
 * mockable `fs/promises` (SPEC §7) and keeps upstream's texts there. Then, for
 * the tools, resolved from inside (lookup.ts), each outcome worded once:
 * whatever lies behind a path that leads outside — a file, a directory,
 * nothing, a chain — the refusal is the same one, naming the path as given.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { expandHome, normalizePath } from "../path-utils.js";
import { isPathWithinAllowedDirectories } from "../path-validation.js";
import type { Confinement } from "./confinement.js";
import { accessDenied, errnoCode, notADirectory, refused, SafeFsError, wrapError } from "./errors.js";
import { resolveFromInside, type Resolved } from "./lookup.js";
import { serverNameIn } from "./names.js";
import { TRAILING_SEPARATOR, WINDOWS } from "./platform/index.js";

/** The two file-system calls lexical resolution needs. */
export interface PathIO {
  realpath(p: string): Promise<unknown>;
  lstat(p: string): Promise<unknown>;
}

async function exists(io: PathIO, p: string): Promise<boolean> {
  try {
    // Any settled result counts, so a mocked fs whose lstat returns undefined still works.
    await io.lstat(p);
    return true;
  } catch {
    return false;
  }
}

/**
 * Upstream resolved relative paths against process.cwd(), which is arbitrary for a server.
 * Each allowed directory is tried in order; a candidate that already exists wins (reading an
 * existing file is the common intent), then one whose parent exists (creating a file there),
 * else the first candidate. Only candidates inside the allowed directories are probed, so the
 * choice never reveals anything about paths outside them; with one candidate nothing is probed.
 */
async function resolveRelative(io: PathIO, relative: string, dirs: readonly string[]): Promise<string> {
  const candidates = dirs.map((dir) => path.resolve(dir, relative));
  const inside = candidates.filter((c) => isPathWithinAllowedDirectories(normalizePath(c), dirs));
  const first = inside[0] ?? candidates[0] ?? path.resolve(relative);
  if (inside.length <= 1) return first;
  for (const candidate of inside) if (await exists(io, candidate)) return candidate;
  for (const candidate of inside) if (await exists(io, path.dirname(candidate))) return candidate;
  return first;
}

function refuseNul(p: string, given: string): void {
  const nul = p.indexOf("\x00");
  if (nul !== -1) throw new Error(`Invalid path: it contains a NUL byte at index ${nul}: ${JSON.stringify(given)}`);
}

/**
 * A `file://` URL (or `file:/…`), as MCP roots and resource links (read_media_file's) name files, as the path it names (its
 * escapes decoded); any other string as given. The path is then checked as any other, so `%2e%2e` gains nothing.
 * @throws Error for a file URL no path of this platform matches (a host, an encoded separator)
 */
function fromFileUrl(requested: string): string {
  // `file:///p` and `file:/p` (RFC 8089's form without an authority); `file:p` stays a name.
  if (!/^file:\//i.test(requested)) return requested;
  try {
    return fileURLToPath(requested);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new Error(`Invalid path: ${JSON.stringify(requested)} is a file URL that names no path on this machine (${why})`);
  }
}

/**
 * The absolute form of `requestedPath` (a `file://` URL as its path, `~` expanded, relative paths against `allowedDirs`), checked
 * lexically against `allowedDirs` only: symlinks are not resolved and nothing needs to exist.
 * @throws Error for a NUL byte or a file URL naming no path, or `Access denied - path outside allowed directories: …`
 */
export async function resolveRequestedPathWith(io: PathIO, requestedPath: string, allowedDirs: readonly string[]): Promise<string> {
  // A NUL written as is or as a URL's %00: either way in the path the URL names.
  const named = fromFileUrl(requestedPath);
  refuseNul(named, requestedPath);
  const expanded = expandHome(named);
  const absolute = path.isAbsolute(expanded) ? path.resolve(expanded) : await resolveRelative(io, expanded, allowedDirs);
  // The string checked is the string returned: normalizePath trims spaces and quotes, so checking its
  // result would pass `<allowed> ` while the caller goes on to use the untrimmed sibling.
  const checked = WINDOWS ? normalizePath(absolute) : absolute;
  if (!isPathWithinAllowedDirectories(checked, allowedDirs)) throw accessDenied(absolute, allowedDirs);
  return absolute;
}

/**
 * lib.ts's upstream check: resolves `requestedPath` and checks it and its symlink target against `allowedDirs`;
 * returns the real path, or the absolute path of a new file whose parent is allowed.
 * @throws Error `Access denied - …`, `Parent directory does not exist: …`, or for a NUL byte in the path.
 */
export async function validatePathWith(io: PathIO, requestedPath: string, allowedDirs: readonly string[]): Promise<string> {
  const absolute = await resolveRequestedPathWith(io, requestedPath, allowedDirs);
  const dirList = allowedDirs.join(", ");
  try {
    const realPath = (await io.realpath(absolute)) as string;
    if (!isPathWithinAllowedDirectories(realPath, allowedDirs)) {
      throw new Error(`Access denied - symlink target outside allowed directories: ${realPath} not in ${dirList}`);
    }
    return realPath;
  } catch (error) {
    if (errnoCode(error) !== "ENOENT") throw error;
  }
  // A file that does not exist yet: its parent must exist and really be inside.
  const parentDir = path.dirname(absolute);
  let realParent: unknown;
  try {
    realParent = await io.realpath(parentDir);
  } catch (cause) {
    throw new Error(`Parent directory does not exist: ${parentDir}`, { cause });
  }
  if (typeof realParent !== "string") throw new Error(`Parent directory does not exist: ${parentDir}`);
  if (!isPathWithinAllowedDirectories(realParent, allowedDirs)) {
    throw new Error(`Access denied - symlink target outside allowed directories: parent of ${absolute} resolves to ${realParent}, not in ${dirList}`);
  }
  return absolute;
}

/** A requested path made absolute and checked lexically; `wantsDir` when it ends in a separator (`x/`). */
interface Requested {
  c: Confinement;
  absolute: string;
  wantsDir: boolean;
}

/**
 * The PathIO with which a relative path picks among several allowed directories: a candidate "exists"
 * only when it resolves from inside, so the choice never depends on anything outside.
 */
function lookFromInside(c: Confinement): PathIO {
  const look = async (p: string): Promise<string> => {
    const result = await resolveFromInside(p, c);
    if (result.kind !== "found") throw new SafeFsError(`Not found from inside: ${p}`, { code: "ENOENT" });
    return result.real;
  };
  return { realpath: look, lstat: look };
}

/**
 * Refuses `p` (a path inside) when a component below its allowed directory is one of this server's own temp
 * or lock names (SPEC §18): no tool may read, write, move, copy or delete them, whatever the spelling.
 */
function refuseServerNames(given: string, p: string, c: Confinement): void {
  const base = c.dirs
    .map((dir) => path.resolve(dir))
    .filter((dir) => isPathWithinAllowedDirectories(p, [dir]))
    .reduce<string | undefined>((deepest, dir) => (deepest === undefined || dir.length > deepest.length ? dir : deepest), undefined);
  const name = serverNameIn(base === undefined ? p : path.relative(base, p));
  if (name !== undefined) throw refused({ kind: "reservedName", path: given, name });
}

async function request(given: string, c: Confinement): Promise<Requested> {
  let absolute: string;
  try {
    absolute = await resolveRequestedPathWith(lookFromInside(c), given, c.dirs);
  } catch (error) {
    // The lexical check names the absolute form (lib.ts's text); here the path is named as given.
    if (error instanceof SafeFsError && error.code === "EACCES") throw c.denied(given);
    throw error;
  }
  refuseServerNames(given, absolute, c);
  return { c, absolute, wantsDir: TRAILING_SEPARATOR.test(given) };
}

async function resolved(target: string, req: Requested): Promise<Resolved> {
  try {
    return await resolveFromInside(target, req.c);
  } catch (error) {
    throw wrapError(error, `Cannot resolve ${req.absolute}`);
  }
}

/**
 * The real path of `given` (or the would-be path of a new file in a real directory inside).
 * @throws the uniform refusal when it leads outside; `Not a directory`, `No such directory`,
 * `Parent directory does not exist`, or `Too many levels of symbolic links`
 */
export async function validateInside(given: string, c: Confinement): Promise<string> {
  return (await locateInside(given, c)).real;
}

/** Where a path leads, and how messages name it. */
export interface Located {
  /** The real path (or the would-be path of a new file in a real directory inside). */
  real: string;
  /** The absolute path as given, or the path exactly as given when it leads through a link: never where a link leads. */
  shown: string;
}

/** validateInside, with the name messages use for the path (`Located.shown`). */
export async function locateInside(given: string, c: Confinement): Promise<Located> {
  const req = await request(given, c);
  const real = await realOf(given, req);
  return { real, shown: real === req.absolute ? real : given };
}

async function realOf(given: string, req: Requested): Promise<string> {
  const c = req.c;
  const result = await resolved(req.absolute, req);
  switch (result.kind) {
    case "found":
      // Through a symlink, a path may still lead to one of the server's own names.
      refuseServerNames(given, result.real, c);
      if (req.wantsDir && !result.stat.isDirectory()) throw notADirectory(given);
      return result.real;
    case "missing":
      refuseServerNames(given, result.path, c);
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
      throw c.denied(given);
    case "serverName":
      throw refused({ kind: "reservedName", path: given, name: result.name });
  }
}

/**
 * The absolute path of a directory to create, refused (uniformly) when it leads outside
 * through a symlink; whatever else is wrong with it is for the mkdir to say.
 */
export async function creatableInside(given: string, c: Confinement): Promise<string> {
  const req = await request(given, c);
  const result = await resolved(req.absolute, req);
  if (result.kind === "outside") throw c.denied(given);
  if (result.kind === "serverName") throw refused({ kind: "reservedName", path: given, name: result.name });
  if (result.kind === "found") refuseServerNames(given, result.real, c);
  if (result.kind === "missing") refuseServerNames(given, result.path, c);
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
export async function entryInside(given: string, c: Confinement): Promise<Entry> {
  const req = await request(given, c);
  if (c.isAllowedDirectory(req.absolute)) return { path: req.absolute, wantsDir: req.wantsDir };
  const parent = await resolved(path.dirname(req.absolute), req);
  if (parent.kind === "outside") throw c.denied(given);
  if (parent.kind === "serverName") throw refused({ kind: "reservedName", path: given, name: parent.name });
  if (parent.kind === "notDir" || (parent.kind === "found" && !parent.stat.isDirectory())) throw notADirectory(given);
  // A missing parent or a loop is the move's to report, as it opens the parent.
  const at = parent.kind === "found" ? path.join(parent.real, path.basename(req.absolute)) : req.absolute;
  refuseServerNames(given, at, c);
  return { path: at, wantsDir: req.wantsDir };
}
