/**
 * Depth-first work over a directory tree (delete_file, copy_file, a dead
 * holder's temp tree): each directory held (strategy.ts `HeldDir`) and entered
 * through the one above it, never through a symlink, in bounded memory and with
 * a bounded number of open directories at any depth. Past MAX_OPEN, the
 * shallowest held directories are let go and opened again through `..` of the
 * child on the way back up, checked to be the same directory.
 */
import type { Dirent } from "node:fs";
import fs from "node:fs/promises";
import { errnoCode, SafeFsError } from "./errors.js";
import { isServerEntry, undecodable } from "./names.js";
import type { DirId, HeldDir, OpenedDir } from "./strategy.js";

const MAX_OPEN = 32;
// Entries handled between two turns of the event loop: the calls on a held directory are synchronous.
const BATCH = 128;

/** Lets the event loop run every BATCH calls, so a long tree operation never holds up the server's other calls. */
export class Pacer {
  private count = 0;

  async step(): Promise<void> {
    if (++this.count % BATCH === 0) await new Promise((resolve) => setImmediate(resolve));
  }
}

/** A path of held directories from a root (pinned, never let go) down to the one being worked in. */
export class DirStack {
  private readonly frames: Array<{ held: HeldDir | null; id: DirId; name: string }>;
  /** Frames below this index, except the root, have been let go. */
  private lowestOpen = 1;

  constructor(root: HeldDir) {
    this.frames = [{ held: root, id: root.id, name: "" }];
  }

  /** How many directories are above the root. */
  get depth(): number {
    return this.frames.length - 1;
  }

  /** The directory being worked in. */
  top(): HeldDir {
    return this.frames.at(-1)!.held!;
  }

  /** Enters `child` (entry `name` of the top directory). */
  async push(child: HeldDir, name: string): Promise<void> {
    this.frames.push({ held: child, id: child.id, name });
    if (this.frames.length - this.lowestOpen > MAX_OPEN) {
      const oldest = this.frames[this.lowestOpen++]!;
      await oldest.held!.close();
      oldest.held = null;
    }
  }

  /** Leaves the top directory; returns its name and the directory it is an entry of (held again if it had been let go). */
  async pop(): Promise<{ name: string; parent: HeldDir }> {
    const top = this.frames.pop()!;
    const parent = this.frames.at(-1)!;
    try {
      if (parent.held === null) {
        parent.held = await top.held!.openParent(parent.id);
        this.lowestOpen = this.frames.length - 1;
      }
    } finally {
      await top.held!.close();
    }
    return { name: top.name, parent: parent.held };
  }

  /** Lets go of every held directory but the root (after a failure). */
  async release(): Promise<void> {
    while (this.frames.length > 1) {
      const frame = this.frames.pop()!;
      await frame.held?.close().catch(() => undefined);
    }
  }
}

/** Entry type from readdir, asking lstat when the file system does not say (DT_UNKNOWN). */
async function isDirectoryEntry(dir: HeldDir, entry: Dirent): Promise<boolean> {
  if (entry.isDirectory()) return true;
  if (entry.isFile() || entry.isSymbolicLink() || entry.isFIFO() || entry.isSocket()) return false;
  return (await dir.lstat(entry.name))?.isDirectory() ?? false;
}

/** How emptying a tree runs: cancellation, and a report of each entry deleted. */
export interface EmptyOptions {
  signal?: AbortSignal;
  /** Called with the number of entries deleted so far, after each one. */
  onDeleted?: (count: number) => void;
}

/** A deletion stopped part way: how many entries had been deleted. */
export class PartlyDeleted extends Error {
  constructor(
    readonly deleted: number,
    readonly reason: unknown,
    /** Entries met whose names are not valid UTF-8 (see `undecodable`), which could not be removed. */
    readonly badNames = 0,
  ) {
    super("partly deleted", { cause: reason });
  }
}

/**
 * Deletes everything inside the held directory `root` (not `root` itself), depth-first; returns how many
 * entries were deleted (the server's own temp and lock files not counted). A directory swapped for a
 * symlink meanwhile is unlinked as the link it now is; nothing it points to is touched.
 * @throws PartlyDeleted (with the count) when it fails or is cancelled part way
 */
export async function emptyTree(root: HeldDir, options: EmptyOptions = {}): Promise<number> {
  const stack = new DirStack(root);
  const pending: Array<{ entries: Dirent[]; next: number }> = [{ entries: await root.entries(), next: 0 }];
  const pacer = new Pacer();
  let deleted = 0;
  let badNames = 0;
  const counted = (name: string): void => {
    if (isServerEntry(name)) return;
    deleted++;
    options.onDeleted?.(deleted);
  };
  try {
    for (;;) {
      await pacer.step();
      if (options.signal?.aborted) throw new SafeFsError("cancelled", { code: "ECANCELED" });
      const level = pending.at(-1)!;
      const dir = stack.top();
      const entry = level.entries[level.next++];
      if (entry === undefined) {
        if (stack.depth === 0) return deleted;
        pending.pop();
        const { name, parent } = await stack.pop();
        await parent.rmdir(name);
        counted(name);
        continue;
      }
      const child = await removeOrOpen(dir, entry.name, await isDirectoryEntry(dir, entry));
      if (child === undefined) {
        counted(entry.name);
        continue;
      }
      if (child === null) {
        // Gone since the directory was read, or never reachable by this name (its directory is then not empty).
        if (undecodable(entry.name)) badNames++;
        continue;
      }
      await stack.push(child, entry.name);
      pending.push({ entries: await child.entries(), next: 0 });
    }
  } catch (err) {
    await stack.release();
    throw new PartlyDeleted(deleted, err, badNames);
  }
}

// An entry swapped between a directory and something else while it is being looked at is looked at again, this often.
const TRIES = 4;

/**
 * Unlinks entry `name` of `dir` when it is not a directory (undefined), or opens it when it is; null when it
 * is gone. An entry that turns out to be the other kind (a directory swapped for a link, or back) is tried
 * again as what it now is; a link is unlinked, never followed.
 */
async function removeOrOpen(dir: HeldDir, name: string, isDir: boolean): Promise<HeldDir | undefined | null> {
  for (let attempt = 1; ; attempt++, isDir = !isDir) {
    try {
      if (isDir) return await dir.openDir(name);
      await dir.unlink(name);
      return undefined;
    } catch (err) {
      const code = errnoCode(err);
      if (code === "ENOENT") return null;
      const otherKind = isDir ? code === "ENOTDIR" || code === "ELOOP" : code === "EISDIR" || code === "EPERM";
      if (!otherKind || attempt === TRIES) throw err;
    }
  }
}

/** Removes entry `name` of the opened directory `dir`, whatever it is (a directory with all it holds); nothing there is fine. */
export async function removeEntry(dir: OpenedDir, name: string): Promise<void> {
  // Another process may remove the same leftover at any step (two servers settling one stale lock): gone is done.
  const unlessGone = (err: unknown): undefined => {
    if (errnoCode(err) === "ENOENT") return undefined;
    throw err;
  };
  const st = await fs.lstat(dir.child(name)).catch(unlessGone);
  if (st === undefined) return;
  if (!st.isDirectory()) return fs.unlink(dir.child(name)).catch(unlessGone);
  const held = await dir.hold(name).catch(unlessGone);
  if (held === undefined) return;
  try {
    await emptyTree(held).catch((err: unknown) => {
      throw err instanceof PartlyDeleted ? err.reason : err;
    });
  } finally {
    await held.close();
  }
  await fs.rmdir(dir.child(name)).catch(unlessGone);
}
