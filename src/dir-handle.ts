/**
 * Directory handles for the race-safe file operations (SPEC §5, Races).
 *
 * On Linux a directory is opened once and every child is then reached through
 * `/proc/self/fd/<fd>/<name>`: the kernel resolves that to the directory that
 * was opened and verified, whatever happens to its path afterwards. Elsewhere
 * (no /proc/self/fd) the portable mode checks the realpath and then uses plain
 * paths; a component swapped for a symlink between that check and the use is
 * the residual window there, and the best those platforms allow from Node.
 */
import { constants, existsSync, type BigIntStats, type Stats } from "node:fs";
import fs, { type FileHandle } from "node:fs/promises";
import { constants as osConstants } from "node:os";
import path from "node:path";
import { getSystemErrorMap } from "node:util";
import { isPathWithinAllowedDirectories } from "./path-validation.js";

/** Test-only switches and hooks; not part of the tool API. */
export const __testHooks: {
  /** Use the portable (path-based) mode even where /proc/self/fd exists. */
  forcePortable: boolean;
  /** Runs after a directory has been opened and verified, before it is used. */
  afterOpenDir?: (realPath: string) => void | Promise<void>;
  /** Runs after the temp file is written, just before the identity re-check and rename. */
  beforeReplace?: (path: string) => void | Promise<void>;
  /** Runs after the identity re-check, just before the rename (the window edit_file must survive). */
  afterCheck?: (path: string) => void | Promise<void>;
} = { forcePortable: false };

// The single capability check: Node has no openat/linkat/renameat bindings, so
// /proc/self/fd paths are the only way to act relative to an opened directory.
const PROC_FD_AVAILABLE = process.platform === "linux" && existsSync("/proc/self/fd");

/** True when operations go through directory fds via /proc/self/fd. */
export function usesDirFds(): boolean {
  return PROC_FD_AVAILABLE && !__testHooks.forcePortable;
}

// Absent constants are 0 on platforms that lack them (Windows), which just drops the flag.
/** open(2) flag: fail unless the target is a directory (0 where unsupported). */
export const O_DIRECTORY = constants.O_DIRECTORY ?? 0;
/** open(2) flag: fail if the final component is a symlink (0 where unsupported). */
export const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;
/** open(2) flag: do not block, e.g. on a FIFO without a writer (0 where unsupported). */
export const O_NONBLOCK = constants.O_NONBLOCK ?? 0;

/** An error raised by the safe-fs layer; `code` mirrors the underlying errno code when there is one. */
export class SafeFsError extends Error {
  readonly code: string | undefined;
  constructor(message: string, options?: { cause?: unknown; code?: string }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "SafeFsError";
    this.code = options?.code ?? errnoCode(options?.cause);
  }
}

/** Rewords a failure to open `shown` as a directory when it is missing or not one; other errors pass through. */
export function directoryError(err: unknown, shown: string): unknown {
  const code = errnoCode(err);
  if (code === "ENOTDIR") return new SafeFsError(`Not a directory: ${shown}`, { cause: err });
  if (code === "ENOENT") return new SafeFsError(`No such directory: ${shown}`, { cause: err });
  return err;
}

/** The errno code (`ENOENT`, …) of a Node system error, if it is one. */
export function errnoCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

/** `no such file or directory (ENOENT)` for a system error; the message otherwise. */
export function reason(err: unknown): string {
  const errno = (err as { errno?: unknown } | null)?.errno;
  const entry = typeof errno === "number" ? getSystemErrorMap().get(errno) : undefined;
  if (entry && entry[0] === errnoCode(err)) return `${entry[1]} (${entry[0]})`;
  return err instanceof Error ? err.message : String(err);
}

/** Passes SafeFsErrors through; wraps anything else as `<context>: <reason>` with `{ cause }`. */
export function wrapError(err: unknown, context: string): SafeFsError {
  if (err instanceof SafeFsError) return err;
  // The context quotes the path; when the path itself is the problem it can be longer than the
  // result cap, so the reason goes first where the cut cannot hide it.
  if (errnoCode(err) === "ENAMETOOLONG") return new SafeFsError(`Path too long (ENAMETOOLONG): ${context}`, { cause: err });
  return new SafeFsError(`${context}: ${reason(err)}`, { cause: err });
}

/** Human name of what a stat describes ("directory", "FIFO", …). */
export function kindOf(st: Stats | BigIntStats): string {
  if (st.isFile()) return "regular file";
  if (st.isDirectory()) return "directory";
  if (st.isSymbolicLink()) return "symbolic link";
  if (st.isFIFO()) return "FIFO";
  if (st.isSocket()) return "socket";
  if (st.isCharacterDevice()) return "character device";
  if (st.isBlockDevice()) return "block device";
  return "special file";
}

/** Throws `Access denied - path outside allowed directories` unless `real` is inside `allowedDirs`. */
export function assertInside(real: string, shown: string, allowedDirs: readonly string[]): void {
  if (isPathWithinAllowedDirectories(real, allowedDirs)) return;
  const resolved = real === shown ? "" : ` (resolves to ${real})`;
  throw new SafeFsError(
    `Access denied - path outside allowed directories: ${shown}${resolved} not in ${allowedDirs.join(", ")}`,
    { code: "EACCES" },
  );
}

/** A directory opened and verified once; children are reached through `child(name)`. */
export interface OpenedDir {
  /** The directory's real path at the time it was verified. */
  readonly real: string;
  /** Path of entry `name` inside this very directory object (Linux) or its verified path (portable). */
  child(name: string): string;
  close(): Promise<void>;
}

/** The /proc path that reaches the object behind `fd` whatever happens to its name. */
export function fdLink(fd: number): string {
  return `/proc/self/fd/${fd}`;
}

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
  let opened: OpenedDir;
  if (usesDirFds()) {
    const handle = await fs.open(target, constants.O_RDONLY | O_DIRECTORY | (noFollow ? O_NOFOLLOW : 0));
    try {
      const real = await fs.readlink(fdLink(handle.fd));
      assertInside(real, shown, allowedDirs);
      const base = fdLink(handle.fd);
      opened = { real, child: (name) => `${base}/${name}`, close: () => handle.close() };
    } catch (err) {
      await handle.close();
      throw err;
    }
  } else {
    // Portable mode: the checks below and the later use are separate path lookups.
    if (noFollow && (await fs.lstat(target)).isSymbolicLink()) throw errnoError("ELOOP", target);
    const real = await fs.realpath(target);
    if (!(await fs.stat(real)).isDirectory()) throw errnoError("ENOTDIR", target);
    assertInside(real, shown, allowedDirs);
    opened = { real, child: (name) => path.join(real, name), close: async () => {} };
  }
  if (__testHooks.afterOpenDir) {
    try {
      await __testHooks.afterOpenDir(opened.real);
    } catch (err) {
      await opened.close();
      throw err;
    }
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

/** True when `abs` is one of `allowedDirs` itself (not merely inside one). */
export function isAllowedDirectory(abs: string, allowedDirs: readonly string[]): boolean {
  return allowedDirs.some((dir) => path.resolve(dir) === abs);
}

/** Verifies that an opened file handle refers to an object inside `allowedDirs`. */
export async function assertHandleInside(
  handle: FileHandle,
  childPath: string,
  shown: string,
  allowedDirs: readonly string[],
): Promise<void> {
  if (usesDirFds()) {
    assertInside(await fs.readlink(fdLink(handle.fd)), shown, allowedDirs);
    return;
  }
  const [real, byHandle] = await Promise.all([fs.realpath(childPath), handle.stat()]);
  assertInside(real, shown, allowedDirs);
  const byPath = await fs.stat(real);
  if (byPath.ino !== byHandle.ino || byPath.dev !== byHandle.dev) {
    throw new SafeFsError(`File changed while opening it: ${shown}`, { code: "EAGAIN" });
  }
}

/** A Node-style system error for a condition detected without a syscall. */
function errnoError(code: "ELOOP" | "ENOTDIR", target: string): NodeJS.ErrnoException {
  const text = code === "ELOOP" ? "is a symbolic link" : "not a directory";
  const err: NodeJS.ErrnoException = new Error(`${code}: ${text}, '${target}'`);
  err.code = code;
  err.errno = -osConstants.errno[code];
  return err;
}
