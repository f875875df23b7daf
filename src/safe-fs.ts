/**
 * Race-safe file operations used by the tool handlers after `validatePathIn`
 * (SPEC §4 "Changes from upstream behaviour", §5 "Races"). Every operation
 * acts inside a parent directory that was opened and verified once (see
 * dir-handle.ts), never re-resolving the validated path.
 */
import { randomBytes } from "node:crypto";
import { constants, type BigIntStats } from "node:fs";
import fs, { type FileHandle } from "node:fs/promises";
import { applyEdits, createUnifiedDiff, fenceDiff, normalizeLineEndings, type EditOperation } from "./edits.js";
import {
  __testHooks,
  assertHandleInside,
  errnoCode,
  kindOf,
  O_NOFOLLOW,
  O_NONBLOCK,
  openParentOf,
  SafeFsError,
  wrapError,
  type OpenedDir,
} from "./dir-handle.js";

export { __testHooks } from "./dir-handle.js";
export { makeDirectorySafely, moveNoClobber } from "./safe-move.js";

// O_NONBLOCK keeps a FIFO swapped in after the lstat from blocking the open;
// for regular files it changes nothing.
const READ_FLAGS = constants.O_RDONLY | O_NOFOLLOW | O_NONBLOCK;
const TEMP_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | O_NOFOLLOW;

function notRegular(shown: string, st: BigIntStats): SafeFsError {
  return new SafeFsError(`Not a regular file: ${shown} (${kindOf(st)})`, { code: "EINVAL" });
}

function isSymlinkRefusal(err: unknown): boolean {
  // Linux and macOS report O_NOFOLLOW on a symlink as ELOOP, FreeBSD as EMLINK.
  const code = errnoCode(err);
  return code === "ELOOP" || code === "EMLINK";
}

/** lstat that returns undefined for a missing entry. */
async function lstatIfExists(target: string): Promise<BigIntStats | undefined> {
  try {
    return await fs.lstat(target, { bigint: true });
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return undefined;
    throw err;
  }
}

/** Opens entry `name` of `dir` as a regular file; the caller owns (and closes) the handle. */
async function openRegularIn(
  dir: OpenedDir,
  name: string,
  shown: string,
  allowedDirs: readonly string[],
): Promise<{ handle: FileHandle; stat: BigIntStats }> {
  const child = dir.child(name);
  let pre: BigIntStats | undefined;
  try {
    pre = await lstatIfExists(child);
  } catch (err) {
    throw wrapError(err, `Cannot open ${shown}`);
  }
  if (!pre) throw new SafeFsError(`Cannot open ${shown}: no such file or directory (ENOENT)`, { code: "ENOENT" });
  if (pre.isSymbolicLink()) throw new SafeFsError(`Refusing to open ${shown}: it is a symbolic link`, { code: "ELOOP" });
  // Refused before opening: opening some devices has side effects of its own.
  if (!pre.isFile()) throw notRegular(shown, pre);

  let handle: FileHandle;
  try {
    handle = await fs.open(child, READ_FLAGS);
  } catch (err) {
    if (isSymlinkRefusal(err)) {
      throw new SafeFsError(`Refusing to open ${shown}: it is a symbolic link`, { cause: err, code: "ELOOP" });
    }
    throw wrapError(err, `Cannot open ${shown}`);
  }
  let keep = false;
  try {
    // The object actually opened is what counts; the lstat above was only a first look.
    const stat = await handle.stat({ bigint: true });
    if (!stat.isFile()) throw notRegular(shown, stat);
    await assertHandleInside(handle, child, shown, allowedDirs);
    keep = true;
    return { handle, stat };
  } catch (err) {
    throw wrapError(err, `Cannot open ${shown}`);
  } finally {
    if (!keep) await handle.close();
  }
}

/** Opens a regular file for reading without following a final symlink and without blocking on FIFOs; verifies the opened object. */
export async function openRegularFile(path: string, allowedDirs: readonly string[]): Promise<FileHandle> {
  const { dir, name } = await openParentOf(path, allowedDirs, path, "open");
  try {
    return (await openRegularIn(dir, name, path, allowedDirs)).handle;
  } finally {
    await dir.close();
  }
}

/**
 * Writes `content` to a fresh temp file beside `name`, gives it `mode`, runs
 * `check`, then renames it over `name`. On any failure the temp file is removed
 * and `name` is left as it was.
 */
async function replaceAtomically(
  dir: OpenedDir,
  name: string,
  content: string,
  mode: number | undefined,
  shown: string,
  check?: () => Promise<void>,
): Promise<void> {
  const temp = dir.child(`${name}.${randomBytes(16).toString("hex")}.tmp`);
  let created = false;
  try {
    // The default 0o666 lets the umask decide a new file's mode, as writeFile would.
    const handle = await fs.open(temp, TEMP_FLAGS, 0o666);
    created = true;
    try {
      await handle.writeFile(content, "utf8");
      if (mode !== undefined) await handle.chmod(mode & 0o7777);
    } finally {
      await handle.close();
    }
    await __testHooks.beforeReplace?.(shown);
    await check?.();
    await fs.rename(temp, dir.child(name));
  } catch (err) {
    if (created) await fs.unlink(temp).catch(() => undefined);
    throw wrapError(err, `Cannot write ${shown}`);
  }
}

/** Refuses to replace anything but a regular file (or nothing). */
function assertReplaceable(existing: BigIntStats | undefined, shown: string, action: string): void {
  if (!existing || existing.isFile()) return;
  if (existing.isDirectory()) throw new SafeFsError(`Cannot ${action} ${shown}: it is a directory`, { code: "EISDIR" });
  if (existing.isSymbolicLink()) {
    throw new SafeFsError(`Cannot ${action} ${shown}: it is a symbolic link; refusing to replace it`, { code: "ELOOP" });
  }
  throw notRegular(shown, existing);
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
    await replaceAtomically(dir, name, content, existing && Number(existing.mode), path);
  } finally {
    await dir.close();
  }
}

/** Throws unless `target` is still the same, unmodified object that was read. */
async function assertUnchanged(target: string, before: BigIntStats, shown: string): Promise<void> {
  const now = await lstatIfExists(target);
  const same =
    now !== undefined &&
    now.dev === before.dev &&
    now.ino === before.ino &&
    now.size === before.size &&
    now.mtimeNs === before.mtimeNs;
  if (!same) {
    throw new SafeFsError(`File changed during edit: ${shown}; no changes were written. Read it again and retry.`);
  }
}

/** Applies edits like upstream edit_file and returns the fenced diff; refuses if the file changed during the edit. */
export async function editFileSafely(
  path: string,
  edits: EditOperation[],
  dryRun: boolean,
  allowedDirs: readonly string[],
): Promise<string> {
  const { dir, name } = await openParentOf(path, allowedDirs, path, "edit");
  try {
    const { handle, stat: before } = await openRegularIn(dir, name, path, allowedDirs);
    let text: string;
    try {
      text = await handle.readFile("utf8");
    } catch (err) {
      throw wrapError(err, `Cannot read ${path}`);
    } finally {
      await handle.close();
    }
    const original = normalizeLineEndings(text);
    const modified = applyEdits(original, edits);
    const diff = fenceDiff(createUnifiedDiff(original, modified, path));
    if (!dryRun) {
      // Residual window: a writer that changes the file in place between this
      // re-check and the rename is still replaced; POSIX has no compare-and-swap
      // rename. The window is two syscalls wide instead of the whole edit.
      await replaceAtomically(dir, name, modified, Number(before.mode), path, () =>
        assertUnchanged(dir.child(name), before, path),
      );
    }
    return diff;
  } finally {
    await dir.close();
  }
}
