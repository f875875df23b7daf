/**
 * How the walkers reach directories and symlinks (SPEC §5, Races). On Linux
 * each directory is opened with O_DIRECTORY|O_NOFOLLOW through its already
 * opened parent (`/proc/self/fd/<fd>/<name>`, which the kernel resolves to that
 * very directory whatever happens to its path) and read through its own fd, so
 * a directory swapped for a symlink after its parent was read is refused
 * (ENOTDIR) instead of followed out of the allowed directories; the root is
 * opened once and its real path verified. Elsewhere directories are read by
 * path, and a directory swapped between its parent's readdir and its own read
 * is the residual window.
 */
import { closeSync, constants, openSync, type Dirent } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { directoryError, fdLink, O_DIRECTORY, O_NOFOLLOW, openDir, usesDirFds, wrapError } from "./dir-handle.js";

const DIR_FLAGS = constants.O_RDONLY | O_DIRECTORY | O_NOFOLLOW;
// Linux's O_PATH (one value on every architecture Node runs on; Node does not export it): the
// open follows a symlink to its target without reading it, blocking on a FIFO or waking a device.
const O_PATH = 0o10000000;


/** A directory read during a walk. */
export interface Listing {
  entries: Dirent[];
  /** Prefix that reaches this very directory's entries: `/proc/self/fd/<fd>/`, or its path and a separator. */
  reach: string;
  /** The fd still to be closed by `release`, or -1. */
  fd: number;
}

/** A directory read, or why it could not be read. */
export type Read = Listing | { error: unknown };

/** Closes the fd a read holds, once; nothing to do for a failed read or a listing without one. */
export function release(read: Read): void {
  if (!("fd" in read) || read.fd < 0) return;
  const fd = read.fd;
  read.fd = -1;
  closeSync(fd);
}

/**
 * Opens and reads the walk's root; `close` releases it. With directory fds the
 * root is opened once and its real path must be inside `allowedDirs`.
 * @throws when `root` cannot be opened or read (naming it), or is outside the allowed directories
 */
export async function openRoot(
  root: string,
  allowedDirs: readonly string[],
  byFd: boolean,
): Promise<{ listing: Listing; close: () => Promise<void> }> {
  if (!byFd) {
    const entries = await fs.readdir(root, { withFileTypes: true }).catch((error: unknown) => {
      throw directoryError(error, root);
    });
    return { listing: { entries, reach: root + path.sep, fd: -1 }, close: async () => {} };
  }
  const opened = await openDir(root, allowedDirs, root).catch((error: unknown) => {
    throw directoryError(error, root);
  });
  try {
    // child("") is `/proc/self/fd/<fd>/`: the opened root itself, with the separator for its entries.
    const reach = opened.child("");
    const entries = await fs.readdir(reach, { withFileTypes: true }).catch((error: unknown) => {
      throw wrapError(error, `Cannot read directory ${root}`);
    });
    return { listing: { entries, reach, fd: -1 }, close: () => opened.close() };
  } catch (error) {
    await opened.close();
    throw error;
  }
}

/** Reads entry `name` of `parent` (shown to the user as `shown`); never rejects. */
export async function readChild(parent: Listing, name: string, shown: string, byFd: boolean): Promise<Read> {
  if (!byFd) {
    return fs.readdir(shown, { withFileTypes: true }).then(
      (entries) => ({ entries, reach: shown + path.sep, fd: -1 }),
      (error: unknown) => ({ error }),
    );
  }
  let fd: number;
  try {
    // Opened synchronously: one lookup in a directory already open, where a thread-pool round
    // trip per directory doubled the walk time over 10,000 small directories (SPEC §6).
    fd = openSync(parent.reach + name, DIR_FLAGS);
  } catch (error) {
    return { error };
  }
  let entries: Dirent[];
  try {
    entries = await fs.readdir(fdLink(fd), { withFileTypes: true });
  } catch (error) {
    closeSync(fd);
    return { error };
  }
  // Only subdirectories, symlinks and a .gitignore are ever reached through a directory, so one
  // without any gives its fd back at once (most directories of a big tree are such leaves).
  if (!entries.some((e) => e.isDirectory() || e.isSymbolicLink() || e.name === ".gitignore")) {
    closeSync(fd);
    return { entries, reach: shown + path.sep, fd: -1 };
  }
  return { entries, reach: `${fdLink(fd)}/`, fd };
}

/** Where a symlink met in a walk leads: its real path and size. */
export interface LinkTarget {
  real: string;
  size: number;
}

/**
 * Follows the symlink at `link` (with directory fds by one O_PATH open, so the
 * real path and the size describe the same object); undefined when its target
 * does not exist. `size` is 0 unless `withSize`.
 * @throws when the link cannot be resolved (a loop, no permission, a file used as a directory…)
 */
export async function followLink(link: string, withSize: boolean): Promise<LinkTarget | undefined> {
  try {
    if (!usesDirFds()) {
      const real = await fs.realpath(link);
      return { real, size: withSize ? (await fs.stat(real)).size : 0 };
    }
    const handle = await fs.open(link, O_PATH);
    try {
      const [real, st] = await Promise.all([fs.readlink(fdLink(handle.fd)), withSize ? handle.stat() : undefined]);
      return { real, size: st?.size ?? 0 };
    } finally {
      await handle.close();
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}
