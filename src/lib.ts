/**
 * Upstream-compatible module API (SPEC §7, with the §9 fixes): a shim over the
 * core, whose shared pieces (the edit algorithm, diffs, file info, the size
 * format, path resolution) it re-exports or calls; nothing in src/ imports it.
 * Every file access goes through the default export of "fs/promises" so that
 * upstream-style tests can mock it; call patterns and error texts are kept.
 */
import fs from "fs/promises";
import { randomBytes } from "node:crypto";
import path from "node:path";
import { minimatch } from "minimatch";
import { applyEdits, createUnifiedDiff, fenceDiff, normalizeLineEndings, type EditOperation } from "./editing/index.js";
import { fileInfo, type FileInfo } from "./reading/index.js";
import { resolveRequestedPathWith, validatePathWith } from "./sandbox/index.js";

export { createUnifiedDiff, normalizeLineEndings } from "./editing/index.js";
export type { EditOperation } from "./editing/index.js";
export type { FileInfo } from "./reading/index.js";
export { formatSize } from "./walking/index.js";

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

function tempPathFor(filePath: string): string {
  return `${filePath}.${randomBytes(16).toString("hex")}.tmp`;
}

/**
 * Resolves `requestedPath` (`~` expanded, relative paths against `allowedDirs`) and checks it and its symlink target
 * against `allowedDirs`; returns the real path, or the absolute path of a new file whose parent is allowed.
 * @throws Error `Access denied - …`, `Parent directory does not exist: …`, or for a NUL byte in the path.
 */
export async function validatePathIn(requestedPath: string, allowedDirs: readonly string[]): Promise<string> {
  return validatePathWith(fs, requestedPath, allowedDirs);
}

/**
 * The absolute form of `requestedPath`, checked lexically against `allowedDirs` only (nothing needs to exist).
 * @throws Error for a NUL byte, or `Access denied - path outside allowed directories: …`
 */
export async function resolveRequestedPath(requestedPath: string, allowedDirs: readonly string[]): Promise<string> {
  return resolveRequestedPathWith(fs, requestedPath, allowedDirs);
}

/** validatePathIn against the module-wide allowed directories (see setAllowedDirectories). */
export async function validatePath(requestedPath: string): Promise<string> {
  return validatePathIn(requestedPath, allowedDirectories);
}

/** Returns size, times, type flags and the last three octal digits of the mode, from fs.stat. */
export async function getFileStats(filePath: string): Promise<FileInfo> {
  return fileInfo(await fs.stat(filePath));
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
      } catch {}
    }
  }

  await walk(rootPath);
  return results;
}

// headFile/tailFile keep upstream's call pattern (fs.open, FileHandle.read in 1 KiB chunks, close),
// but multi-byte characters split across chunks still decode correctly.
const CHUNK_SIZE = 1024;
const LF = 0x0a;

/** The first `numLines` lines of the file (split on "\n"), joined with "\n". */
export async function headFile(filePath: string, numLines: number): Promise<string> {
  const handle = await fs.open(filePath, "r");
  try {
    const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
    const chunk = Buffer.alloc(CHUNK_SIZE);
    const lines: string[] = [];
    let pending = "";
    let position = 0;
    while (lines.length < numLines) {
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, position);
      if (bytesRead === 0) break;
      position += bytesRead;
      pending += decoder.decode(chunk.subarray(0, bytesRead), { stream: true });
      const cut = pending.lastIndexOf("\n");
      if (cut === -1) continue;
      for (const line of pending.slice(0, cut).split("\n")) {
        lines.push(line);
        if (lines.length >= numLines) break;
      }
      pending = pending.slice(cut + 1);
    }
    // At end of file a truncated sequence still becomes U+FFFD, as in readFile.
    if (lines.length < numLines) pending += decoder.decode();
    if (pending.length > 0 && lines.length < numLines) lines.push(pending);
    return lines.join("\n");
  } finally {
    await handle.close();
  }
}

/** The last `numLines` lines of the file with CRLF normalized, joined with "\n"; '' for an empty file. */
export async function tailFile(filePath: string, numLines: number): Promise<string> {
  const stats = await fs.stat(filePath);
  if (stats.size === 0) return "";
  const handle = await fs.open(filePath, "r");
  try {
    const chunk = Buffer.alloc(CHUNK_SIZE);
    const parts: Buffer[] = [];
    let position = stats.size;
    let newlines = 0;
    // Bytes are collected and decoded once at the end, so a character split
    // across two chunks is not turned into replacement characters.
    while (position > 0 && newlines < numLines) {
      const size = Math.min(CHUNK_SIZE, position);
      position -= size;
      const { bytesRead } = await handle.read(chunk, 0, size, position);
      if (!bytesRead) break;
      const piece = Buffer.from(chunk.subarray(0, bytesRead));
      let start = 0;
      for (let i = piece.length - 1; i >= 0; i--) {
        if (piece[i] === LF && ++newlines === numLines) {
          start = i + 1;
          break;
        }
      }
      parts.unshift(piece.subarray(start));
    }
    const text = new TextDecoder("utf-8", { ignoreBOM: true }).decode(Buffer.concat(parts));
    return text.replace(/\r\n/g, "\n");
  } finally {
    await handle.close();
  }
}
