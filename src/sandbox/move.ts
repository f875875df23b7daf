/**
 * move_file without clobbering (SPEC §4 move_file, §5 Races, §13): an entry
 * (a symlink itself, like `mv`) moved between two parents opened and verified
 * once, never replacing anything at the destination, also when it appears
 * during the call.
 */
import { type BigIntStats, linkSync, lstatSync, unlinkSync } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { isPathWithinAllowedDirectories } from "../path-validation.js";
import type { Confinement, Target } from "./confinement.js";
import { errnoCode, notADirectory, refused, SafeFsError, wrapError } from "./errors.js";
import { sameFile } from "./identity.js";
import { leadsOutside } from "./lookup.js";
import { lockPresent, underSwapLock } from "./swap-lock.js";

// link(2) failures meaning "no hard link possible here" rather than "refused".
const LINK_UNSUPPORTED = new Set(["EPERM", "ENOTSUP", "EOPNOTSUPP", "EXDEV", "ENOSYS", "EMLINK"]);

/** `Destination already exists: <path>`: nothing there was replaced. */
export function destinationExists(destination: string, cause?: unknown): SafeFsError {
  return refused({ kind: "exists", path: destination }, cause);
}

/**
 * The refusal of a destination found taken (`there`: its lstat, or "directory" for an allowed directory): a directory's
 * names the destination that puts `source` inside it, both as the call gave them.
 */
export function destinationTaken(shown: string, there: BigIntStats | "directory", given: { source: string; destination: string }): SafeFsError {
  const isDir = there === "directory" || there.isDirectory();
  return refused({ kind: "exists", path: shown, ...(isDir && { into: path.join(given.destination, path.basename(given.source)) }) });
}

/** The two ends of one move, each in its opened parent. */
interface MoveEnds {
  from: Target;
  to: Target;
}

/**
 * Residual window: anything created at the destination between this lstat and
 * rename(2) is replaced. Linux ≥ 3.15 has renameat2(RENAME_NOREPLACE), which
 * would close it, but Node exposes no binding for it; this path is only taken
 * where link(2) is unavailable, for directories on Windows (whose rename never
 * replaces a directory) and for symlinks without /proc/self/fd.
 */
async function renameIfAbsent(from: string, to: Target): Promise<void> {
  if ((await to.lstat()) !== undefined) throw destinationExists(to.shown);
  await fs.rename(from, to.at);
}

/**
 * Non-directories: link(2) fails atomically with EEXIST, so nothing at the destination is ever replaced.
 * The link, the check and the unlink are made synchronously, one right after the other, so a kill can
 * hardly land between them; if one does, both names hold the file, and the next change of the destination
 * finishes the move (its swap lock names the source, swap-lock.ts).
 */
async function moveByLink(m: MoveEnds, before: BigIntStats, context: string): Promise<void> {
  const { from, to } = m;
  try {
    linkSync(from.at, to.at);
  } catch (err) {
    const code = errnoCode(err);
    if (code === "EEXIST") throw destinationExists(to.shown, err);
    if (code !== undefined && LINK_UNSUPPORTED.has(code)) return renameIfAbsent(m.from.at, m.to);
    throw err;
  }
  // If the source name was replaced before the link (or, without /proc/self/fd,
  // swapped for a symlink that link(2) followed), the new name holds the wrong
  // object: drop it. If it was replaced after the link, keep it in place.
  // Residual window: a replacement between this check and the unlink is unlinked.
  const atDst = lstatSync(to.at, { bigint: true, throwIfNoEntry: false });
  const atSrc = lstatSync(from.at, { bigint: true, throwIfNoEntry: false });
  if (!sameFile(atDst, before)) {
    await fs.unlink(to.at).catch(() => undefined);
    throw new SafeFsError(`${context}: the source changed during the move; nothing was moved`);
  }
  if (!sameFile(atSrc, before)) {
    throw new SafeFsError(`${context}: the source was replaced during the move; ${to.shown} holds the original and ${from.shown} the replacement`);
  }
  try {
    unlinkSync(from.at);
  } catch (err) {
    // Undo the new name so the move is all or nothing.
    await fs.unlink(to.at).catch(() => undefined);
    throw err;
  }
}

/**
 * Directories: rename(2) once nothing is at the destination. No directory is made there first, so a kill at
 * any moment leaves the destination absent or the whole tree (SPEC §24). rename(2) of a directory can replace
 * only an empty directory: anything put at the destination meanwhile (a file, a link, a directory with
 * entries) makes it fail instead of being lost (Windows' rename never replaces a directory at all).
 * Residual window: an empty directory made at the destination between the check and the rename is replaced;
 * no content can be lost. (renameat2 RENAME_NOREPLACE would close it; Node has no binding.)
 */
export async function renameDirectoryInto(from: string, to: Target): Promise<void> {
  if ((await to.lstat()) !== undefined) throw destinationExists(to.shown);
  try {
    await fs.rename(from, to.at);
  } catch (err) {
    const code = errnoCode(err);
    if (code === "ENOTEMPTY" || code === "EEXIST" || code === "ENOTDIR" || code === "EISDIR") throw destinationExists(to.shown, err);
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
async function refuseLinkLeavingFrom(c: Confinement, { from, to }: MoveEnds, given: AsGiven): Promise<void> {
  const target = await fs.readlink(from.at);
  if (path.isAbsolute(target)) return;
  if (await leadsOutside(target, to.dir.real, c)) throw c.linkWouldLeave("move", given.source);
}

/**
 * Moves entry `source` to `destination` (paths whose parents were resolved from inside), never replacing
 * anything at the destination; `given` is how move_file named them.
 */
export async function moveEntry(c: Confinement, source: string, destination: string, given: AsGiven, signal?: AbortSignal): Promise<void> {
  if (c.isAllowedDirectory(path.resolve(destination))) throw destinationTaken(destination, "directory", given);
  const holds = c.allowedUnder(path.resolve(source));
  if (holds !== undefined) throw refused({ kind: "holdsAllowed", action: "move", path: given.source, allowed: holds, itself: false });
  const context = `Cannot move ${source} to ${destination}`;
  await c.inParent(source, "move", (from) =>
    c.inParent(destination, "move to", async (to) => {
      const m: MoveEnds = { from, to };
      try {
        // A killed move may have left this source at two names, with its lock beside it: taking that
        // lock settles it (the other name goes, swap-lock.ts), so the source is moved, not refused.
        if (await lockPresent(from)) await underSwapLock(c, from, async () => undefined, { signal });
        // Refusals first, before the lock: a refused call leaves both directories as they were.
        await checkMove(c, m, given, context, true);
        // Held so that no other process of this server writes, copies or moves to the destination meanwhile.
        await underSwapLock(c, to, () => moveHeld(c, m, given, context), { intent: { movedFrom: path.join(from.dir.real, from.name) }, signal });
      } catch (err) {
        throw wrapError(err, context);
      }
    }),
  );
}

/**
 * The refusals of a move: no source, a destination there, a file named as a directory, a link that would
 * lead outside. Before the lock (`early`), a destination with a lock is left to the holder's check: what a
 * killed holder left there (its placeholder) is settled once the lock is taken.
 */
async function checkMove(c: Confinement, m: MoveEnds, given: AsGiven, context: string, early = false): Promise<BigIntStats> {
  const before = await m.from.lstat();
  if (!before) throw new SafeFsError(`${context}: the source does not exist`, { code: "ENOENT" });
  if (!before.isDirectory() && given.sourceIsDir) throw notADirectory(given.source);
  const there = await m.to.lstat();
  if (there !== undefined && !(early && (await lockPresent(m.to)))) throw destinationTaken(m.to.shown, there, given);
  // rename(2) answers ENOTDIR, as if the destination were the one that is not a directory.
  if (!before.isDirectory() && given.destinationIsDir)
    throw refused({ kind: "fileAsDirectory", action: "move", path: given.source, destination: given.destination });
  if (before.isSymbolicLink()) await refuseLinkLeavingFrom(c, m, given);
  if (!before.isDirectory()) return before;
  const moved = path.join(m.from.dir.real, m.from.name);
  // rename(2) refuses a directory into itself with EINVAL, which tells a model nothing it can act on.
  if (isPathWithinAllowedDirectories(m.to.dir.real, [moved])) {
    throw refused({ kind: "intoItself", action: "move", path: given.source, destination: given.destination });
  }
  // Whatever spelling named it (a link in its path, another case): the directory itself is compared.
  const holds = await c.allowedHeldBy(moved, before);
  if (holds !== undefined) throw refused({ kind: "holdsAllowed", action: "move", path: given.source, ...holds });
  return before;
}

/** The move itself, the destination's swap lock held. */
async function moveHeld(c: Confinement, m: MoveEnds, given: AsGiven, context: string): Promise<void> {
  const before = await checkMove(c, m, given, context);
  try {
    // link(2) does not follow a symlink on Linux; elsewhere it may, so symlinks are renamed there.
    if (before.isDirectory()) await renameDirectoryInto(m.from.at, m.to);
    else if (before.isFile() || c.strategy.linksSymlinks) await moveByLink(m, before, context);
    else await renameIfAbsent(m.from.at, m.to);
  } catch (err) {
    // Two allowed directories on two file systems (two drives, a mounted volume): upstream's bare EXDEV says nothing
    // a model can act on. Not done here as copy-then-delete: a source changed meanwhile would be deleted unseen.
    if (errnoCode(err) !== "EXDEV") throw err;
    throw refused({ kind: "crossDevice", path: given.source, destination: given.destination, isDir: before.isDirectory() }, err);
  }
}
