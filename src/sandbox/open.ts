/**
 * Opening a file to read it (SPEC §5): through its opened, verified parent or
 * a walked directory, never through a final symlink, never blocking on a FIFO,
 * the object actually opened checked by its handle (a regular file, inside).
 * A walked file is opened in one synchronous burst and handed over, and
 * metadata is read without following anything at the end of the path.
 */
import { closeSync, fstatSync, type BigIntStats, type Stats } from "node:fs";
import fs, { type FileHandle } from "node:fs/promises";
import path from "node:path";
import type { Confinement, Target } from "./confinement.js";
import { isSymlinkRefusal, notRegular, SafeFsError, wrapError } from "./errors.js";
import { READ_FLAGS } from "./flags.js";
import { exactIdOf, type FileObjectId } from "./identity.js";

/** A file opened for reading, and the fstat of what was opened. */
export interface Opened {
  handle: FileHandle;
  stat: BigIntStats;
}

/** Verifies that the file opened as `reach` lies inside (by its handle, or by how it was reached). */
type InsideCheck = (handle: FileHandle, stat: BigIntStats) => Promise<void> | void;

/** Opens `reach` (an entry reached through a verified directory) for reading; the opened object must be a regular file inside. */
async function openVerified(c: Confinement, reach: string, shown: string, checkInside?: InsideCheck): Promise<Opened> {
  let handle: FileHandle;
  try {
    handle = await fs.open(reach, READ_FLAGS);
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
    await (checkInside ? checkInside(handle, stat) : c.assertHandleInside(handle, reach, shown));
    return { handle, stat };
  } catch (err) {
    await handle.close();
    throw wrapError(err, `Cannot open ${shown}`);
  }
}

/** Opens the target's entry as a regular file; the caller owns (and closes) the handle. */
export async function openRegularIn(c: Confinement, t: Target): Promise<Opened> {
  let pre: BigIntStats | undefined;
  try {
    pre = await t.lstat();
  } catch (err) {
    throw wrapError(err, `Cannot open ${t.shown}`);
  }
  if (!pre) throw new SafeFsError(`Cannot open ${t.shown}: no such file or directory (ENOENT)`, { code: "ENOENT" });
  if (pre.isSymbolicLink()) throw new SafeFsError(`Refusing to open ${t.shown}: it is a symbolic link`, { code: "ELOOP" });
  // Refused before opening: opening some devices has side effects of its own.
  if (!pre.isFile()) throw notRegular(t.shown, pre);
  return openVerified(c, t.at, t.shown);
}

/** Opens `real` (a validated path) as a regular file through its verified parent; the caller closes the handle. */
export function openRegularFile(c: Confinement, real: string, shown = real): Promise<FileHandle> {
  return c.inParent(real, "open", async (t) => (await openRegularIn(c, t)).handle, shown);
}

/**
 * Opens entry `name` of a walked directory (reached as `reach + name`; `dir` is its identity when the walk read it) as a regular file for reading.
 * @throws naming `shown` when it is not a regular file, cannot be opened, or lies outside
 */
export function openWalkedFile(c: Confinement, reach: string, name: string, shown: string, dir?: FileObjectId): Promise<Opened> {
  // As for a small walked file: where the reach proves the file inside, no real path is asked
  // for, which past PATH_MAX the kernel could not give (readlink fails with ENAMETOOLONG).
  return openVerified(c, reach + name, shown, (handle, stat) => {
    const real = c.strategy.realPathOfFdSync(handle.fd, reach, name, shown, stat, dir);
    if (real !== undefined) c.assertInside(real, shown);
  });
}

/**
 * A walked file handed over open: its descriptor (the caller closes it), its size when opened, its identity and its
 * count of names (hard links); handed over unchecked, size -1 and neither: its reader checks that it is a regular file
 * and takes what it needs from its fstat.
 */
export interface WalkedOpen {
  fd: number;
  size: number;
  stat?: FileObjectId;
  links?: number;
}

/** A walked file opened, or why it was not (a failure worded with its shown path). */
export type WalkedResult = WalkedOpen | { error: unknown };

/**
 * Opens entries `names` of a walked directory (reached through `reach`; `dir` is its identity when the walk
 * read it), each when it is a regular file inside, all synchronously: the opens (in one step, see the
 * strategy's `openEntriesSync`), then each one's fstat and the strategy's containment check. Each step
 * through the thread pool cost a round trip of 20-40 µs, which made a search of 100,000 small files 40x
 * slower than grep -r (SPEC §10); a burst is a few µs a file. The descriptors handed over are the files
 * checked: a search's workers read them and never open anything themselves (SPEC §16). A failure names
 * `shownOf(i)`; the caller closes every fd handed over.
 *
 * With `unchecked`, a file whose reach alone proves it inside (the strategy's `provesInside`) is handed over
 * without its fstat, size -1 and no identity: its reader (a search's scan worker) reads it whole when small, else
 * checks it is a regular file and takes its size from its own fstat, off this thread. Its containment is the
 * open's, as for any other.
 */
export function openWalkedSync(
  c: Confinement,
  reach: string,
  names: readonly string[],
  shownOf: (i: number) => string,
  dir?: FileObjectId,
  unchecked = false,
): WalkedResult[] {
  return c.strategy.openEntriesSync(reach, names, READ_FLAGS).map((o, i) => {
    if ("error" in o) return { error: wrapError(o.error, `Cannot open ${shownOf(i)}`) };
    if (unchecked && c.strategy.provesInside(reach, names[i] as string)) return { fd: o.fd, size: -1 };
    try {
      return checkWalked(c, o.fd, reach, names[i] as string, shownOf(i), dir);
    } catch (error) {
      closeSync(o.fd);
      return { error: wrapError(error, `Cannot open ${shownOf(i)}`) };
    }
  });
}

// A walked file's descriptor checked: a regular file, inside; its size and identity.
function checkWalked(c: Confinement, fd: number, reach: string, name: string, shown: string, dir?: FileObjectId): WalkedOpen {
  const st = fstatSync(fd);
  if (!st.isFile()) throw notRegular(shown, st);
  const stat = exactIdOf(fd, st);
  const real = c.strategy.realPathOfFdSync(fd, reach, name, shown, stat, dir);
  if (real !== undefined) c.assertInside(real, shown);
  return { fd, size: st.size, stat, links: st.nlink };
}

/**
 * Stats `real` (a validated path) without following anything at its end: through its opened, verified
 * parent, or the allowed directory itself, opened. A final component swapped for a symlink after
 * validation is refused, so nothing outside is ever described.
 */
export async function statInside(c: Confinement, real: string, shown = real): Promise<Stats> {
  if (c.isAllowedDirectory(path.resolve(real))) {
    const dir = await c.openDir(real, shown);
    try {
      return await fs.stat(dir.child(""));
    } finally {
      await dir.close();
    }
  }
  return c.inParent(
    real,
    "stat",
    async (t) => {
      let st: Stats;
      try {
        st = await fs.lstat(t.at);
      } catch (err) {
        throw wrapError(err, `Cannot stat ${t.shown}`);
      }
      if (st.isSymbolicLink()) {
        // A link that resolved inside would have been replaced by its target during validation:
        // this one dangles, or was swapped in after the check.
        throw new SafeFsError(`Cannot stat ${t.shown}: it is a symbolic link that does not resolve inside the allowed directories`, {
          code: "ELOOP",
        });
      }
      return st;
    },
    shown,
  );
}
