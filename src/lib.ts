/**
 * Upstream-compatible module API (SPEC §7, with the §9 fixes). Every file
 * access goes through the default export of "fs/promises" so that
 * upstream-style tests can mock it; call patterns and error texts are kept.
 */
import fs from "fs/promises";
import { randomBytes } from "node:crypto";
import type { Stats } from "node:fs";
import path from "node:path";
import { minimatch } from "minimatch";
import { applyEdits, createUnifiedDiff, fenceDiff, normalizeLineEndings } from "./edits.js";
import type { EditOperation } from "./edits.js";
import { expandHome, normalizePath } from "./path-utils.js";
import { isPathWithinAllowedDirectories } from "./path-validation.js";

export { createUnifiedDiff, normalizeLineEndings } from "./edits.js";
export type { EditOperation } from "./edits.js";
export { headFile, tailFile } from "./head-tail.js";

/** What getFileStats reports about a path. */
export interface FileInfo {
  size: number;
  created: Date;
  modified: Date;
  accessed: Date;
  isDirectory: boolean;
  isFile: boolean;
  permissions: string;
}

/** Options of searchFilesWithValidation. */
export interface SearchOptions {
  excludePatterns?: string[];
}

/** One search hit (kept for upstream type compatibility). */
export interface SearchResult {
  path: string;
  isDirectory: boolean;
}

let allowedDirectories: string[] = [];

/** Replaces the module-wide allowed directories used by validatePath (the list is copied). */
export function setAllowedDirectories(directories: readonly string[]): void {
  allowedDirectories = [...directories];
}

/** Returns a copy of the module-wide allowed directories. */
export function getAllowedDirectories(): string[] {
  return [...allowedDirectories];
}

/** Formats a byte count as upstream does: `<n> B` below 1024, else two decimals of KB…TB (negative input yields `NaN`). */
export function formatSize(bytes: number): string {
  const units = ["B", "KB", "MB", "GB", "TB"];
  if (bytes === 0) return "0 B";
  const exponent = Math.floor(Math.log(bytes) / Math.log(1024));
  if (exponent <= 0) return `${bytes} B`;
  // Upstream's arithmetic is kept on purpose: for negative sizes both parts become NaN/undefined.
  const unit = Math.min(exponent, units.length - 1);
  return `${(bytes / Math.pow(1024, unit)).toFixed(2)} ${units[unit]}`;
}

function tempPathFor(filePath: string): string {
  return `${filePath}.${randomBytes(16).toString("hex")}.tmp`;
}

async function exists(p: string): Promise<boolean> {
  try {
    // Any settled result counts, so a mocked fs whose lstat returns undefined still works.
    await fs.lstat(p);
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
async function resolveRelative(relative: string, dirs: readonly string[]): Promise<string> {
  const candidates = dirs.map((dir) => path.resolve(dir, relative));
  const inside = candidates.filter((c) => isPathWithinAllowedDirectories(normalizePath(c), dirs));
  const first = inside[0] ?? candidates[0] ?? path.resolve(relative);
  if (inside.length <= 1) return first;
  for (const candidate of inside) if (await exists(candidate)) return candidate;
  for (const candidate of inside) if (await exists(path.dirname(candidate))) return candidate;
  return first;
}

/**
 * The absolute form of `requestedPath` (`~` expanded, relative paths against `allowedDirs`), checked
 * lexically against `allowedDirs` only: symlinks are not resolved and nothing needs to exist.
 * @throws Error for a NUL byte, or `Access denied - path outside allowed directories: …`
 */
export async function resolveRequestedPath(requestedPath: string, allowedDirs: readonly string[]): Promise<string> {
  const nul = requestedPath.indexOf("\x00");
  if (nul !== -1) {
    throw new Error(`Invalid path: it contains a NUL byte at index ${nul}: ${JSON.stringify(requestedPath)}`);
  }
  const expanded = expandHome(requestedPath);
  const absolute = path.isAbsolute(expanded) ? path.resolve(expanded) : await resolveRelative(expanded, allowedDirs);
  // The string checked is the string returned: normalizePath trims spaces and quotes, so checking its
  // result would pass `<allowed> ` while the caller goes on to use the untrimmed sibling.
  const checked = process.platform === "win32" ? normalizePath(absolute) : absolute;
  if (!isPathWithinAllowedDirectories(checked, allowedDirs)) {
    throw new Error(`Access denied - path outside allowed directories: ${absolute} not in ${allowedDirs.join(", ")}`);
  }
  return absolute;
}

/**
 * Resolves `requestedPath` (`~` expanded, relative paths against `allowedDirs`) and checks it and its symlink target
 * against `allowedDirs`; returns the real path, or the absolute path of a new file whose parent is allowed.
 * @throws Error `Access denied - …`, `Parent directory does not exist: …`, or for a NUL byte in the path.
 */
export async function validatePathIn(requestedPath: string, allowedDirs: readonly string[]): Promise<string> {
  const absolute = await resolveRequestedPath(requestedPath, allowedDirs);
  const dirList = allowedDirs.join(", ");

  try {
    const realPath = await fs.realpath(absolute);
    // The real path is checked as it is: normalizePath trims whitespace and quotes, which would
    // admit a sibling such as `<allowed> ` or `<allowed>"`.
    if (!isPathWithinAllowedDirectories(realPath, allowedDirs)) {
      throw new Error(`Access denied - symlink target outside allowed directories: ${realPath} not in ${dirList}`);
    }
    return realPath;
  } catch (error) {
    if ((error as NodeJS.ErrnoException | undefined)?.code !== "ENOENT") throw error;
  }

  // A file that does not exist yet: its parent must exist and really be inside.
  const parentDir = path.dirname(absolute);
  let realParent: unknown;
  try {
    realParent = await fs.realpath(parentDir);
  } catch (cause) {
    throw new Error(`Parent directory does not exist: ${parentDir}`, { cause });
  }
  if (typeof realParent !== "string") throw new Error(`Parent directory does not exist: ${parentDir}`);
  if (!isPathWithinAllowedDirectories(realParent, allowedDirs)) {
    throw new Error(
      `Access denied - symlink target outside allowed directories: parent of ${absolute} resolves to ${realParent}, not in ${dirList}`,
    );
  }
  return absolute;
}

/** validatePathIn against the module-wide allowed directories (see setAllowedDirectories). */
export async function validatePath(requestedPath: string): Promise<string> {
  return validatePathIn(requestedPath, allowedDirectories);
}

/** Returns size, times, type flags and the last three octal digits of the mode, from fs.stat. */
export async function getFileStats(filePath: string): Promise<FileInfo> {
  return fileInfo(await fs.stat(filePath));
}

/** Upstream's get_file_info fields, in its order, from a stat result. */
export function fileInfo(stats: Stats): FileInfo {
  return {
    size: stats.size,
    created: stats.birthtime,
    modified: stats.mtime,
    accessed: stats.atime,
    isDirectory: stats.isDirectory(),
    isFile: stats.isFile(),
    permissions: stats.mode.toString(8).slice(-3),
  };
}

/** Reads the whole file as text: `fs.readFile(filePath, encoding)`. */
export async function readFileContent(filePath: string, encoding = "utf-8"): Promise<string> {
  return await fs.readFile(filePath, encoding as BufferEncoding);
}

async function replaceViaTemp(filePath: string, content: string): Promise<void> {
  const tempPath = tempPathFor(filePath);
  try {
    await fs.writeFile(tempPath, content, "utf-8");
    // rename(2) swaps the name atomically and never follows a symlink at the destination.
    await fs.rename(tempPath, filePath);
  } catch (error) {
    try {
      await fs.unlink(tempPath);
    } catch {
      // The temp file may never have been created.
    }
    throw error;
  }
}

/** Creates the file exclusively (`wx`), or if it exists replaces it atomically via `<path>.<32 hex>.tmp` + rename. */
export async function writeFileContent(filePath: string, content: string): Promise<void> {
  try {
    // `wx` refuses to follow a symlink planted at the path.
    await fs.writeFile(filePath, content, { encoding: "utf-8", flag: "wx" });
  } catch (error) {
    if ((error as NodeJS.ErrnoException | undefined)?.code !== "EEXIST") throw error;
    await replaceViaTemp(filePath, content);
  }
}

/**
 * Applies `edits` in order to the file and returns the fenced unified diff; writes atomically unless `dryRun`.
 * @throws Error `Could not find exact match for edit:\n<oldText>`, leaving the file untouched.
 */
export async function applyFileEdits(filePath: string, edits: EditOperation[], dryRun = false): Promise<string> {
  const content = normalizeLineEndings(await fs.readFile(filePath, "utf-8"));
  const modified = applyEdits(content, edits);
  const formatted = fenceDiff(createUnifiedDiff(content, modified, filePath));
  if (!dryRun) await replaceViaTemp(filePath, modified);
  return formatted;
}

/**
 * Walks `rootPath` depth-first, returning absolute paths whose root-relative path matches `pattern`
 * (minimatch, dot: true) and no exclude pattern; entries failing validatePath are skipped silently.
 */
export async function searchFilesWithValidation(
  rootPath: string,
  pattern: string,
  allowedDirs: string[],
  options: SearchOptions = {},
): Promise<string[]> {
  // Upstream validates against the module-wide list and ignores `allowedDirs`; kept so
  // existing callers and tests see identical results.
  void allowedDirs;
  const { excludePatterns = [] } = options;
  const results: string[] = [];

  async function walk(currentPath: string): Promise<void> {
    const entries = await fs.readdir(currentPath, { withFileTypes: true });
    for (const entry of entries) {
      const fullPath = path.join(currentPath, entry.name);
      try {
        await validatePath(fullPath);
        const relativePath = path.relative(rootPath, fullPath);
        if (excludePatterns.some((p) => minimatch(relativePath, p, { dot: true }))) continue;
        if (minimatch(relativePath, pattern, { dot: true })) results.push(fullPath);
        if (entry.isDirectory()) await walk(fullPath);
      } catch {
        continue;
      }
    }
  }

  await walk(rootPath);
  return results;
}
