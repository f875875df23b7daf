/**
 * Race-safe file operations used by the tool handlers after `validatePathIn`
 * (SPEC §4 "Changes from upstream behaviour", §5 "Races"). Every operation
 * acts inside a parent directory that was opened and verified once (see
 * dir-handle.ts), never re-resolving the validated path.
 */
import type { BigIntStats, Stats } from "node:fs";
import fs, { type FileHandle } from "node:fs/promises";
import nodePath from "node:path";
import { isAllowedDirectory, openDir, openParentOf, SafeFsError, wrapError } from "./dir-handle.js";
import { assertReplaceable, lstatIfExists, openRegularIn, replaceAtomically } from "./safe-file.js";

export { __testHooks } from "./dir-handle.js";
export { editFileSafely } from "./safe-edit.js";
export { makeDirectorySafely, moveNoClobber } from "./safe-move.js";

/** Opens a regular file for reading without following a final symlink and without blocking on FIFOs; verifies the opened object. */
export async function openRegularFile(path: string, allowedDirs: readonly string[]): Promise<FileHandle> {
  const { dir, name } = await openParentOf(path, allowedDirs, path, "open");
  try {
    return (await openRegularIn(dir, name, path, allowedDirs)).handle;
  } finally {
    await dir.close();
  }
}

/** Atomically replaces (or creates) `path` with `content`, keeping an existing file's permission bits. */
export async function writeFileSafely(path: string, content: string, allowedDirs: readonly string[]): Promise<void> {
  const { dir, name } = await openParentOf(path, allowedDirs, path, "write");
  try {
    let existing: BigIntStats | undefined;
    try {
      existing = await lstatIfExists(dir.child(name));
    } catch (err) {
      throw wrapError(err, `Cannot write ${path}`);
    }
    assertReplaceable(existing, path, "write");
    await replaceAtomically(dir, name, content, existing, path);
  } finally {
    await dir.close();
  }
}

/**
 * Stats `target` (a validated real path) without following anything at its end: through its opened,
 * verified parent, or the allowed directory itself, opened. A final component swapped for a symlink
 * after validation is refused, so nothing outside is ever described.
 */
export async function statInside(target: string, allowedDirs: readonly string[]): Promise<Stats> {
  if (isAllowedDirectory(nodePath.resolve(target), allowedDirs)) {
    const dir = await openDir(target, allowedDirs, target);
    try {
      return await fs.stat(dir.child(""));
    } finally {
      await dir.close();
    }
  }
  const { dir, name } = await openParentOf(target, allowedDirs, target, "stat");
  try {
    let st: Stats;
    try {
      st = await fs.lstat(dir.child(name));
    } catch (err) {
      throw wrapError(err, `Cannot stat ${target}`);
    }
    if (st.isSymbolicLink()) {
      // A link that resolved inside would have been replaced by its target during validation:
      // this one dangles, or was swapped in after the check.
      throw new SafeFsError(`Cannot stat ${target}: it is a symbolic link that does not resolve inside the allowed directories`, {
        code: "ELOOP",
      });
    }
    return st;
  } finally {
    await dir.close();
  }
}
