/**
 * Directories read for walks and listings (SPEC §3.3, §4, §18): a walk's root,
 * opened and verified once, and every read without the server's own temp and lock files; the fd a walk's read holds, released once; a
 * listing's entries, and their sizes as upstream's stat gives them, a symlink
 * followed only to a target inside.
 */
import { closeSync, type Dirent, lstatSync } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import type { Confinement } from "./confinement.js";
import { directoryError, wrapError } from "./errors.js";
import { followLink } from "./lookup.js";
import { visible } from "./names.js";
import type { Listing, Reach, Read } from "./strategy.js";

/**
 * Opens and reads a walk's root (an already validated path), verified inside; `close` releases it.
 * @throws when `root` cannot be opened or read (naming it), or is outside the allowed directories
 */
export async function openWalkRoot(c: Confinement, root: string): Promise<{ listing: Listing; close: () => Promise<void> }> {
  const opened = await c.openDir(root, root).catch((error: unknown) => {
    throw directoryError(error, root);
  });
  try {
    const entries = await fs.readdir(opened.child(""), { withFileTypes: true }).catch((error: unknown) => {
      throw wrapError(error, `Cannot read directory ${root}`);
    });
    return { listing: { entries: visible(entries), reach: opened.reach, fd: -1 }, close: () => opened.close() };
  } catch (error) {
    await opened.close();
    throw error;
  }
}

/** Closes the fd a walk's read holds, once; nothing to do for a failed read or a listing without one. */
export function release(read: Read | Reach): void {
  if (!("fd" in read) || read.fd < 0) return;
  const fd = read.fd;
  read.fd = -1;
  closeSync(fd);
}

/** The entries of directory `dir` (an opened directory's `child("")`), in readdir order, without the server's own temp and lock files. */
export async function readEntries(dir: string): Promise<Dirent[]> {
  return visible(await fs.readdir(dir, { withFileTypes: true }));
}

/** Entries a listing holds at a time: read from the directory in batches of this many. */
const ENTRY_BATCH = 256;

/**
 * The entries of directory `dir` (an opened directory's `child("")`), in readdir order, without the server's own temp
 * and lock files, in batches of at most ENTRY_BATCH: a directory of any size is read in flat memory.
 */
export async function* entryBatches(dir: string): AsyncGenerator<Dirent[]> {
  const opened = await fs.opendir(dir, { bufferSize: ENTRY_BATCH });
  try {
    for (;;) {
      // A batch is one getdents(2) call's worth, read synchronously: an await per entry cost more than the read.
      const batch: Dirent[] = [];
      for (let entry = opened.readSync(); entry !== null; entry = batch.length < ENTRY_BATCH ? opened.readSync() : null) batch.push(entry);
      if (batch.length === 0) return;
      yield visible(batch);
    }
  } finally {
    await opened.close();
  }
}

/** What a listing shows of one entry: its size (upstream's stat, which follows symlinks) and whether it is a directory. */
export interface EntryFacts {
  readonly size: number;
  readonly isDir: boolean;
}

/**
 * The facts of entry `name` of `dir`, following a symlink only to a target inside: a link to a directory
 * inside is a directory; a link leading outside or dangling is a file of size 0, like an entry that cannot be
 * stat'ed. Never rejects.
 */
export async function entryFacts(c: Confinement, dir: string, name: string, isLink: boolean): Promise<EntryFacts> {
  const entryPath = path.join(dir, name);
  try {
    if (!isLink) {
      // lstat costs what stat does and equals it for anything but a symlink, which is
      // what the entry may have become since the readdir.
      const st = await fs.lstat(entryPath);
      if (!st.isSymbolicLink()) return { size: st.size, isDir: st.isDirectory() };
    }
    const verdict = await followLink(entryPath, true, c);
    return verdict.kind === "inside" ? { size: verdict.target.size, isDir: verdict.target.isDir } : { size: 0, isDir: false };
  } catch {
    // Upstream shows an entry it cannot stat with size 0.
    return { size: 0, isDir: false };
  }
}

/**
 * The size, kind and modification time of an entry a walk has just read, reached through its held directory
 * (`reach`, or the directory's path where there is none), not followed if it is a link; undefined when it is gone.
 */
export function walkedEntryFigures(
  dir: string,
  reach: string | undefined,
  name: string,
): { isDir: boolean; size: number; mtimeMs: number } | undefined {
  try {
    const st = lstatSync(reach === undefined ? path.join(dir, name) : reach + name);
    return { isDir: st.isDirectory(), size: st.size, mtimeMs: st.mtimeMs };
  } catch {
    return undefined;
  }
}
