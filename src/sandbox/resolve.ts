/**
 * Requested path → absolute path inside the allowed directories (SPEC §2, §9):
 * `~` expanded, relative paths resolved against the allowed directories, then
 * checked lexically and by real path. The file system is reached only through
 * the `PathIO` given, so lib.ts can pass its mockable `fs/promises` (SPEC §7).
 */
import path from "node:path";
import { expandHome, normalizePath } from "../path-utils.js";
import { isPathWithinAllowedDirectories } from "../path-validation.js";
import { isInside } from "./containment.js";
import { accessDenied, errnoCode } from "./errors.js";

/** The two file-system calls path resolution needs. */
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

/**
 * The absolute form of `requestedPath` (`~` expanded, relative paths against `allowedDirs`), checked
 * lexically against `allowedDirs` only: symlinks are not resolved and nothing needs to exist.
 * @throws Error for a NUL byte, or `Access denied - path outside allowed directories: …`
 */
export async function resolveRequestedPathWith(io: PathIO, requestedPath: string, allowedDirs: readonly string[]): Promise<string> {
  const nul = requestedPath.indexOf("\x00");
  if (nul !== -1) {
    throw new Error(`Invalid path: it contains a NUL byte at index ${nul}: ${JSON.stringify(requestedPath)}`);
  }
  const expanded = expandHome(requestedPath);
  const absolute = path.isAbsolute(expanded) ? path.resolve(expanded) : await resolveRelative(io, expanded, allowedDirs);
  // The string checked is the string returned: normalizePath trims spaces and quotes, so checking its
  // result would pass `<allowed> ` while the caller goes on to use the untrimmed sibling.
  const checked = process.platform === "win32" ? normalizePath(absolute) : absolute;
  if (!isPathWithinAllowedDirectories(checked, allowedDirs)) throw accessDenied(absolute, allowedDirs);
  return absolute;
}

/**
 * Resolves `requestedPath` and checks it and its symlink target against `allowedDirs`; returns the real
 * path, or the absolute path of a new file whose parent is allowed.
 * @throws Error `Access denied - …`, `Parent directory does not exist: …`, or for a NUL byte in the path.
 */
export async function validatePathWith(io: PathIO, requestedPath: string, allowedDirs: readonly string[]): Promise<string> {
  const absolute = await resolveRequestedPathWith(io, requestedPath, allowedDirs);
  const dirList = allowedDirs.join(", ");
  try {
    const realPath = (await io.realpath(absolute)) as string;
    if (!isInside(realPath, allowedDirs)) {
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
  if (!isInside(realParent, allowedDirs)) {
    throw new Error(
      `Access denied - symlink target outside allowed directories: parent of ${absolute} resolves to ${realParent}, not in ${dirList}`,
    );
  }
  return absolute;
}
