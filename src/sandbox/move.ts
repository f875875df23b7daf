/**
 * No-clobber moves and race-safe `mkdir -p` (SPEC §4 move_file, §5 Races),
 * acting through directories opened and verified once (dirs.ts).
 */
import type { BigIntStats } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { isAllowedDirectory, isInside } from "./containment.js";
import { lockKeyOf, withFileLocks } from "./locks.js";
import { openDir, openParentOf } from "./dirs.js";
import { accessDenied, errnoCode, SafeFsError, wrapError } from "./errors.js";
import { lstatIfExists } from "./files.js";
import { sameFile } from "./identity.js";
import { entryInside, leadsOutside, notADirectory } from "./inside.js";
import { strategy } from "./platform.js";
import type { OpenedDir } from "./strategy.js";

// link(2) failures meaning "no hard link possible here" rather than "refused".
const LINK_UNSUPPORTED = new Set(["EPERM", "ENOTSUP", "EOPNOTSUPP", "EXDEV", "ENOSYS", "EMLINK"]);

function destinationExists(destination: string, cause?: unknown): SafeFsError {
  return new SafeFsError(`Destination already exists: ${destination}`, { cause, code: "EEXIST" });
}

interface MoveEnds {
  src: string;
  dst: string;
  source: string;
  destination: string;
  context: string;
}

/**
 * Residual window: anything created at the destination between this lstat and
 * rename(2) is replaced. Linux ≥ 3.15 has renameat2(RENAME_NOREPLACE), which
 * would close it, but Node exposes no binding for it; this path is only taken
 * where link(2) is unavailable, for directories on Windows (whose rename never
 * replaces a directory) and for symlinks without /proc/self/fd.
 */
async function renameIfAbsent(m: MoveEnds): Promise<void> {
  if ((await lstatIfExists(m.dst)) !== undefined) throw destinationExists(m.destination);
  await fs.rename(m.src, m.dst);
}

/** Non-directories: link(2) fails atomically with EEXIST, so nothing at the destination is ever replaced. */
async function moveByLink(m: MoveEnds, before: BigIntStats): Promise<void> {
  try {
    await fs.link(m.src, m.dst);
  } catch (err) {
    const code = errnoCode(err);
    if (code === "EEXIST") throw destinationExists(m.destination, err);
    if (code !== undefined && LINK_UNSUPPORTED.has(code)) return renameIfAbsent(m);
    throw err;
  }
  // If the source name was replaced before the link (or, without /proc/self/fd,
  // swapped for a symlink that link(2) followed), the new name holds the wrong
  // object: drop it. If it was replaced after the link, keep it in place.
  // Residual window: a replacement between this check and the unlink is unlinked.
  const [atDst, atSrc] = await Promise.all([lstatIfExists(m.dst), lstatIfExists(m.src)]);
  if (!sameFile(atDst, before)) {
    await fs.unlink(m.dst).catch(() => undefined);
    throw new SafeFsError(`${m.context}: the source changed during the move; nothing was moved`);
  }
  if (!sameFile(atSrc, before)) {
    throw new SafeFsError(
      `${m.context}: the source was replaced during the move; ${m.destination} holds the original and ${m.source} the replacement`,
    );
  }
  try {
    await fs.unlink(m.src);
  } catch (err) {
    // Undo the new name so the move is all or nothing.
    await fs.unlink(m.dst).catch(() => undefined);
    throw err;
  }
}

/**
 * Directories: mkdir(2) reserves the destination atomically (EEXIST if taken),
 * and rename(2) may then replace only that still-empty placeholder, so
 * anything put there meanwhile makes the rename fail instead of being lost.
 * Residual window: if someone swaps the placeholder for an empty directory of
 * their own, that empty directory is replaced; no content can be lost.
 * (renameat2 RENAME_NOREPLACE would do this directly; Node has no binding.)
 */
async function moveDirectory(m: MoveEnds): Promise<void> {
  if (process.platform === "win32") return renameIfAbsent(m);
  try {
    await fs.mkdir(m.dst, 0o700);
  } catch (err) {
    if (errnoCode(err) === "EEXIST") throw destinationExists(m.destination, err);
    throw err;
  }
  try {
    await fs.rename(m.src, m.dst);
  } catch (err) {
    // rmdir removes the placeholder only while it is still an empty directory.
    await fs.rmdir(m.dst).catch(() => undefined);
    const code = errnoCode(err);
    if (code === "ENOTEMPTY" || code === "EEXIST" || code === "ENOTDIR") throw destinationExists(m.destination, err);
    throw err;
  }
}

/** How move_file named the two ends, for the checks that need it. */
export interface AsGiven {
  source: string;
  destination: string;
  /** The path ended in a separator (`x/`): the entry must be a directory. */
  sourceIsDir: boolean;
  destinationIsDir: boolean;
}

/**
 * A moved symlink is the same text in another directory: a relative one may lead elsewhere from
 * there. One that would lead outside is refused, named as given; where it leads now does not matter.
 */
async function refuseLinkLeavingFrom(src: string, dir: OpenedDir, given: AsGiven, allowedDirs: readonly string[]): Promise<void> {
  const target = await fs.readlink(src);
  if (path.isAbsolute(target)) return;
  if (await leadsOutside(target, dir.real, allowedDirs)) throw accessDenied(given.destination, allowedDirs);
}

/** move_file: moves the entry `source` names (a symlink itself, like `mv`) to `destination`, both as given. */
export async function moveEntry(source: string, destination: string, allowedDirs: readonly string[]): Promise<void> {
  const from = await entryInside(source, allowedDirs);
  const to = await entryInside(destination, allowedDirs);
  const given = { source, destination, sourceIsDir: from.wantsDir, destinationIsDir: to.wantsDir };
  // Both ends locked, so no write, edit or move of either name in this server interleaves.
  await withFileLocks([from.path, await lockKeyOf(to.path)], () => moveNoClobber(from.path, to.path, allowedDirs, given));
}

/** Moves `source` to `destination`, never replacing anything at the destination; `given` adds move_file's checks. */
export async function moveNoClobber(
  source: string,
  destination: string,
  allowedDirs: readonly string[],
  given?: AsGiven,
): Promise<void> {
  if (isAllowedDirectory(path.resolve(destination), allowedDirs)) throw destinationExists(destination);
  const from = await openParentOf(source, allowedDirs, source, "move");
  try {
    const to = await openParentOf(destination, allowedDirs, destination, "move to");
    try {
      const m: MoveEnds = {
        src: from.dir.child(from.name),
        dst: to.dir.child(to.name),
        source,
        destination,
        context: `Cannot move ${source} to ${destination}`,
      };
      try {
        const before = await lstatIfExists(m.src);
        if (!before) throw new SafeFsError(`${m.context}: the source does not exist`, { code: "ENOENT" });
        if (given && !before.isDirectory() && (given.sourceIsDir || given.destinationIsDir)) {
          throw notADirectory(given.sourceIsDir ? given.source : given.destination);
        }
        if (given && before.isSymbolicLink()) await refuseLinkLeavingFrom(m.src, to.dir, given, allowedDirs);
        // link(2) does not follow a symlink on Linux; elsewhere it may, so symlinks are renamed there.
        if (before.isDirectory()) await moveDirectory(m);
        else if (before.isFile() || strategy().linksSymlinks) await moveByLink(m, before);
        else await renameIfAbsent(m);
      } catch (err) {
        throw wrapError(err, m.context);
      }
    } finally {
      await to.dir.close();
    }
  } finally {
    await from.dir.close();
  }
}

/** Opens `dirPath`, or returns undefined when it does not exist. */
async function openIfExists(dirPath: string, allowedDirs: readonly string[], shown: string): Promise<OpenedDir | undefined> {
  try {
    return await openDir(dirPath, allowedDirs, shown);
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return undefined;
    throw wrapError(err, `Cannot create directory ${shown}: cannot open ${dirPath}`);
  }
}

/** mkdir -p that never creates anything outside allowedDirs even if a component is swapped for a symlink meanwhile. */
export async function makeDirectorySafely(target: string, allowedDirs: readonly string[]): Promise<void> {
  const context = `Cannot create directory ${target}`;
  const missing: string[] = [];
  let current = path.resolve(target);
  let dir: OpenedDir | undefined;
  for (;;) {
    if (!isInside(current, allowedDirs)) {
      if (missing.length === 0) throw accessDenied(target, allowedDirs);
      throw new SafeFsError(`${context}: no ancestor inside the allowed directories exists`, { code: "ENOENT" });
    }
    dir = await openIfExists(current, allowedDirs, target);
    if (dir) break;
    missing.unshift(path.basename(current));
    current = path.dirname(current);
  }
  try {
    for (const name of missing) {
      current = path.join(current, name);
      try {
        await fs.mkdir(dir.child(name));
      } catch (err) {
        if (errnoCode(err) !== "EEXIST") throw wrapError(err, `${context}: cannot create ${current}`);
      }
      // O_NOFOLLOW: a component swapped for a symlink since the mkdir is refused, not entered.
      let next: OpenedDir;
      try {
        next = await openDir(dir.child(name), allowedDirs, target, true);
      } catch (err) {
        // Linux reports O_DIRECTORY|O_NOFOLLOW on a symlink as ENOTDIR, so look again to name it.
        const seen = await fs.lstat(dir.child(name)).catch(() => undefined);
        const code = seen?.isSymbolicLink() ? "ELOOP" : errnoCode(err);
        if (code === "ELOOP" || code === "EMLINK") {
          throw new SafeFsError(`${context}: ${current} is a symbolic link; refusing to follow it`, { cause: err });
        }
        if (code === "ENOTDIR") throw new SafeFsError(`${context}: ${current} is not a directory`, { cause: err });
        throw wrapError(err, `${context}: cannot open ${current}`);
      }
      const parent = dir;
      dir = next;
      await parent.close();
    }
  } finally {
    await dir.close();
  }
}
