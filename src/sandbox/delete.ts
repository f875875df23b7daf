/**
 * delete_file (SPEC §15): an entry removed through its opened, verified
 * parent — a file, a symlink (the link itself, never its target), an empty
 * directory, or with `recursive` a whole tree, depth-first through directories
 * held one inside the other (tree.ts), so a directory swapped for a symlink
 * to outside while the tree is deleted deletes nothing outside. An allowed
 * directory itself, or one holding an allowed directory, is never deleted.
 */
import type { BigIntStats } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import type { Confinement, Target } from "./confinement.js";
import { errnoCode, notADirectory, refused, SafeFsError, wrapError } from "./errors.js";
import { isServerEntry } from "./names.js";
import { underSwapLock } from "./swap-lock.js";
import { emptyTree, PartlyDeleted } from "./tree.js";

/** How a delete runs. */
export interface DeleteOptions {
  recursive: boolean;
  /** The path ended in a separator (`x/`): the entry must be a directory. */
  wantsDir: boolean;
  signal?: AbortSignal;
  /** Called with the number of entries deleted so far. */
  onProgress?: (deleted: number) => void;
}

/** What a delete removed: the kind of entry, and for a directory how many entries it held. */
export interface Deleted {
  kind: "file" | "link" | "directory" | "other";
  entries: number;
}

const plural = (n: number): string => `${n.toLocaleString("en-US")} ${n === 1 ? "entry" : "entries"}`;

/** rmdir of a directory that should be empty; one holding only this server's own leftovers loses those first. */
async function removeEmptyDirectory(t: Target, shown: string): Promise<void> {
  try {
    await fs.rmdir(t.at);
  } catch (err) {
    if (errnoCode(err) !== "ENOTEMPTY" && errnoCode(err) !== "EEXIST") throw err;
    await refuseNonEmpty(t, shown);
    const dir = await t.dir.hold(t.name);
    try {
      await emptyTree(dir);
    } finally {
      await dir.close();
    }
    await fs.rmdir(t.at);
  }
}

/**
 * Deletes entry `entryPath` (its parent resolved from inside, its final component not followed); `shown` is
 * the path as given. Serialised with other changes of the entry by its swap lock.
 * @throws for an allowed directory or one holding one, a missing entry, a non-empty directory without
 * `recursive`; a recursive delete that fails or is cancelled part way says how many entries it deleted
 */
export async function deleteEntry(c: Confinement, entryPath: string, shown: string, options: DeleteOptions): Promise<Deleted> {
  const abs = path.resolve(entryPath);
  const context = `Cannot delete ${shown}`;
  if (c.isAllowedDirectory(abs)) throw refused({ kind: "holdsAllowed", action: "delete", path: shown, allowed: abs, itself: true });
  const held = c.allowedUnder(abs);
  if (held !== undefined) throw refused({ kind: "holdsAllowed", action: "delete", path: shown, allowed: held, itself: false });
  return c.inParent(abs, "delete", async (t) => {
    // Refusals first, before the lock: a refused call leaves the directory as it was.
    const first = await checkDelete(c, t, shown, options);
    if (first.isDirectory() && !options.recursive) await refuseNonEmpty(t, shown);
    return underSwapLock(
      c,
      t,
      async () => {
        // Taking the lock from a server (of an earlier version) that died mid-copy or mid-move removes the empty
        // placeholder it left at this name: what was asked for is then gone, which is what a delete promises.
        const st = await checkDelete(c, t, shown, options).catch((err: unknown) => {
          if (errnoCode(err) === "ENOENT") return undefined;
          throw err;
        });
        if (st === undefined) return { kind: kindOf(first), entries: 0 };
        if (!st.isDirectory()) {
          await fs.unlink(t.at).catch((err: unknown) => {
            throw wrapError(err, context);
          });
          return { kind: kindOf(st), entries: 0 };
        }
        if (!options.recursive) {
          await removeEmptyDirectory(t, shown).catch((err: unknown) => {
            throw wrapError(err, context);
          });
          return { kind: "directory", entries: 0 };
        }
        let entries = 0;
        try {
          const dir = await t.dir.hold(t.name, { dev: st.dev, ino: st.ino });
          try {
            entries = await emptyTree(dir, { signal: options.signal, onDeleted: options.onProgress });
          } finally {
            await dir.close();
          }
          await fs.rmdir(t.at);
        } catch (err) {
          const done = err instanceof PartlyDeleted ? err.deleted : entries;
          const cause = err instanceof PartlyDeleted ? err.reason : err;
          const badNames = err instanceof PartlyDeleted ? err.badNames : 0;
          const one = badNames === 1;
          const why =
            badNames === 0
              ? ""
              : `; ${plural(badNames)} inside ${one ? "has a name that is" : "have names that are"} not valid UTF-8, which this server ` +
                `cannot remove (rename or delete ${one ? "it" : "them"} in a shell)`;
          const rest = `${plural(done)} inside it ${done === 1 ? "was" : "were"} deleted, the rest is still there${why}`;
          if (errnoCode(cause) === "ECANCELED") {
            throw refused({ kind: "cancelled", action: "delete", path: shown, kept: rest }, cause);
          }
          throw wrapError(cause, context).withNote(rest);
        }
        return { kind: "directory", entries };
      },
      { signal: options.signal },
    );
  });
}

const kindOf = (st: BigIntStats): Deleted["kind"] => (st.isDirectory() ? "directory" : st.isSymbolicLink() ? "link" : st.isFile() ? "file" : "other");

/**
 * The entry to delete: refused when there is none, when the path named a directory and it is not one, or
 * when it is a directory that is or holds an allowed directory, however it was spelled.
 */
async function checkDelete(c: Confinement, t: Target, shown: string, options: DeleteOptions): Promise<BigIntStats> {
  const st = await t.lstat().catch((err: unknown) => {
    throw wrapError(err, `Cannot delete ${shown}`);
  });
  if (st === undefined) throw new SafeFsError(`Cannot delete ${shown}: no such file or directory (ENOENT)`, { code: "ENOENT" });
  if (!st.isDirectory() && options.wantsDir) throw notADirectory(shown);
  const held = st.isDirectory() ? await c.allowedHeldBy(path.join(t.dir.real, t.name), st) : undefined;
  if (held !== undefined) throw refused({ kind: "holdsAllowed", action: "delete", path: shown, ...held });
  return st;
}

/** Refuses a directory with entries a tool can see (the server's own leftovers do not count). */
async function refuseNonEmpty(t: Target, shown: string): Promise<void> {
  const dir = await t.dir.hold(t.name);
  let visible: number;
  try {
    visible = (await dir.entries()).filter((entry) => !isServerEntry(entry.name)).length;
  } finally {
    await dir.close();
  }
  if (visible > 0) {
    throw new SafeFsError(
      `Cannot delete ${shown}: the directory is not empty (${plural(visible)}); pass recursive: true to delete it with everything in it`,
      { code: "ENOTEMPTY" },
    );
  }
}
