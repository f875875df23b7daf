/**
 * Directories opened and verified once, through the platform strategy
 * (strategy.ts): every file operation acts inside a parent opened here, and
 * walks start from a root opened here.
 */
import { closeSync } from "node:fs";
import fs, { type FileHandle } from "node:fs/promises";
import path from "node:path";
import { assertInside, isAllowedDirectory } from "./containment.js";
import { directoryError, errnoCode, SafeFsError, wrapError } from "./errors.js";
import { strategy } from "./platform.js";
import type { Listing, OpenedDir, Read } from "./strategy.js";

/** Test-only hooks into the race windows; not part of the tool API. */
export const __testHooks: {
  /** Runs after a directory has been opened and verified, before it is used. */
  afterOpenDir?: (realPath: string) => void | Promise<void>;
  /** Runs after the temp file is written, just before the identity re-check and rename. */
  beforeReplace?: (path: string) => void | Promise<void>;
  /** Runs after the identity re-check, just before the rename (the window edit_file must survive). */
  afterCheck?: (path: string) => void | Promise<void>;
} = {};

/**
 * Opens directory `target` (following symlinks unless `noFollow`), verifies its
 * real path is inside `allowedDirs`, and returns a handle to act within it.
 * Low-level errors (ENOENT, ENOTDIR, ELOOP…) are rethrown unwrapped for the caller to word.
 */
export async function openDir(
  target: string,
  allowedDirs: readonly string[],
  shown: string,
  noFollow = false,
): Promise<OpenedDir> {
  const opened = await strategy().openDir(target, noFollow);
  try {
    assertInside(opened.real, shown, allowedDirs);
    await __testHooks.afterOpenDir?.(opened.real);
  } catch (err) {
    await opened.close();
    throw err;
  }
  return opened;
}

/** Opens the directory that holds `target` and returns it with the final component's name. */
export async function openParentOf(
  target: string,
  allowedDirs: readonly string[],
  shown: string,
  action: string,
): Promise<{ dir: OpenedDir; name: string }> {
  const abs = path.resolve(target);
  const name = path.basename(abs);
  if (name === "") throw new SafeFsError(`Cannot ${action} ${shown}: it is the root directory`, { code: "EISDIR" });
  // Its parent is outside by definition, so the parent check below would call it "outside".
  if (isAllowedDirectory(abs, allowedDirs)) {
    throw new SafeFsError(`Cannot ${action} ${shown}: it is one of the allowed directories, not a file inside one`, {
      code: "EISDIR",
    });
  }
  try {
    return { dir: await openDir(path.dirname(abs), allowedDirs, shown), name };
  } catch (err) {
    if (errnoCode(err) === "ENOENT") {
      throw new SafeFsError(`Cannot ${action} ${shown}: parent directory does not exist`, { cause: err });
    }
    throw wrapError(err, `Cannot ${action} ${shown}: cannot open its parent directory`);
  }
}

/** Verifies that an opened file handle (reached as `childPath`) refers to an object inside `allowedDirs`. */
export async function assertHandleInside(
  handle: FileHandle,
  childPath: string,
  shown: string,
  allowedDirs: readonly string[],
): Promise<void> {
  assertInside(await strategy().realPathOf(handle, childPath, shown), shown, allowedDirs);
}

/**
 * Opens and reads a walk's root, verified inside `allowedDirs`; `close` releases it.
 * @throws when `root` cannot be opened or read (naming it), or is outside the allowed directories
 */
export async function openWalkRoot(
  root: string,
  allowedDirs: readonly string[],
): Promise<{ listing: Listing; close: () => Promise<void> }> {
  const opened = await openDir(root, allowedDirs, root).catch((error: unknown) => {
    throw directoryError(error, root);
  });
  try {
    const entries = await fs.readdir(opened.child(""), { withFileTypes: true }).catch((error: unknown) => {
      throw wrapError(error, `Cannot read directory ${root}`);
    });
    return { listing: { entries, reach: opened.reach, fd: -1 }, close: () => opened.close() };
  } catch (error) {
    await opened.close();
    throw error;
  }
}

/** Closes the fd a walk's read holds, once; nothing to do for a failed read or a listing without one. */
export function release(read: Read): void {
  if (!("fd" in read) || read.fd < 0) return;
  const fd = read.fd;
  read.fd = -1;
  closeSync(fd);
}
