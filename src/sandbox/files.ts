/**
 * The primitives behind the race-safe file operations (index.ts, edit.ts):
 * opening a regular file inside an opened directory without following a final
 * symlink or blocking on a FIFO, and replacing a file atomically via a temp file.
 */
import { randomBytes } from "node:crypto";
import { constants, type BigIntStats, type Stats } from "node:fs";
import fs, { type FileHandle } from "node:fs/promises";
import nodePath from "node:path";
import { isAllowedDirectory } from "./containment.js";
import { assertHandleInside, openDir, openParentOf } from "./dirs.js";
import { errnoCode, notRegular, SafeFsError, wrapError } from "./errors.js";
import { O_NOFOLLOW, READ_FLAGS } from "./flags.js";
import { withFileLocks } from "./locks.js";
import { assertWritable, keepOwnerAndMode } from "./ownership.js";
import type { OpenedDir } from "./strategy.js";
import { swapIn } from "./swap.js";

/** Flags of a temp file that is to replace another: always a new file, never through a symlink. */
export const TEMP_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | O_NOFOLLOW;

/** A fresh, unguessable name beside `name` for its replacement's temp file. */
export function tempNameFor(name: string): string {
  return `${name}.${randomBytes(16).toString("hex")}.tmp`;
}

function isSymlinkRefusal(err: unknown): boolean {
  // Linux and macOS report O_NOFOLLOW on a symlink as ELOOP, FreeBSD as EMLINK.
  const code = errnoCode(err);
  return code === "ELOOP" || code === "EMLINK";
}

/** lstat that returns undefined for a missing entry. */
export async function lstatIfExists(target: string): Promise<BigIntStats | undefined> {
  try {
    return await fs.lstat(target, { bigint: true });
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return undefined;
    throw err;
  }
}

/** Opens entry `name` of `dir` as a regular file; the caller owns (and closes) the handle. */
export async function openRegularIn(
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

  return openVerified(child, shown, allowedDirs);
}

/** Opens `child` (an entry reached through a verified directory) for reading; the opened object must be a regular file inside. */
async function openVerified(
  child: string,
  shown: string,
  allowedDirs: readonly string[],
): Promise<{ handle: FileHandle; stat: BigIntStats }> {
  let handle: FileHandle;
  try {
    handle = await fs.open(child, READ_FLAGS);
  } catch (err) {
    if (isSymlinkRefusal(err)) {
      throw new SafeFsError(`Refusing to open ${shown}: it is a symbolic link`, { cause: err, code: "ELOOP" });
    }
    throw wrapError(err, `Cannot open ${shown}`);
  }
  try {
    // The object actually opened is what counts; any look before the open was only a first look.
    const stat = await handle.stat({ bigint: true });
    if (!stat.isFile()) throw notRegular(shown, stat);
    await assertHandleInside(handle, child, shown, allowedDirs);
    return { handle, stat };
  } catch (err) {
    await handle.close();
    throw wrapError(err, `Cannot open ${shown}`);
  }
}

/**
 * Writes `content` to a fresh temp file beside `name`, gives it the owner and mode of
 * `previous`, runs `check`, then renames it over `name` (swap.ts) and returns the new file's stat. On any
 * failure the temp file is removed and `name` is left as it was.
 */
export async function replaceAtomically(
  dir: OpenedDir,
  name: string,
  content: string | Buffer,
  previous: BigIntStats | undefined,
  shown: string,
  check?: () => Promise<void>,
): Promise<BigIntStats> {
  const tempName = tempNameFor(name);
  const temp = dir.child(tempName);
  let created = false;
  try {
    // The default 0o666 lets the umask decide a new file's mode, as writeFile would.
    const handle = await fs.open(temp, TEMP_FLAGS, 0o666);
    created = true;
    let written: BigIntStats;
    try {
      // Owner first: a replace that cannot keep it is refused before anything is written.
      if (previous !== undefined) await keepOwnerAndMode(handle, previous, shown);
      await handle.writeFile(content, "utf8");
      written = await handle.stat({ bigint: true });
    } finally {
      await handle.close();
    }
    await swapIn(dir, tempName, name, shown, check);
    return written;
  } catch (err) {
    if (created) await fs.unlink(temp).catch(() => undefined);
    throw wrapError(err, `Cannot write ${shown}`);
  }
}

/** Refuses to replace anything but a regular file (or nothing). */
export function assertReplaceable(existing: BigIntStats | undefined, shown: string, action: string): void {
  if (!existing || existing.isFile()) return;
  if (existing.isDirectory()) throw new SafeFsError(`Cannot ${action} ${shown}: it is a directory`, { code: "EISDIR" });
  if (existing.isSymbolicLink()) {
    throw new SafeFsError(`Cannot ${action} ${shown}: it is a symbolic link; refusing to replace it`, { code: "ELOOP" });
  }
  throw notRegular(shown, existing);
}

/**
 * Opens entry `name` of a walked directory (reached as `reach + name`) as a regular file for reading:
 * never through a final symlink, never blocking on a FIFO, and verified inside by the opened handle.
 * @throws naming `shown` when it is not a regular file, cannot be opened, or lies outside
 */
export async function openWalkedFile(
  reach: string,
  name: string,
  shown: string,
  allowedDirs: readonly string[],
): Promise<{ handle: FileHandle; stat: BigIntStats }> {
  return openVerified(reach + name, shown, allowedDirs);
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
 * Atomically replaces (or creates) `path` with `content`, keeping an existing file's owner, group and
 * permission bits; refuses a file the server's user may not write. Serialised with other changes to `path`.
 */
export async function writeFileSafely(path: string, content: string, allowedDirs: readonly string[]): Promise<void> {
  await withFileLocks([path], async () => {
    const { dir, name } = await openParentOf(path, allowedDirs, path, "write");
    try {
      let existing: BigIntStats | undefined;
      try {
        existing = await lstatIfExists(dir.child(name));
      } catch (err) {
        throw wrapError(err, `Cannot write ${path}`);
      }
      assertReplaceable(existing, path, "write");
      if (existing) assertWritable(existing, path, "write");
      await replaceAtomically(dir, name, content, existing, path);
    } finally {
      await dir.close();
    }
  });
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
