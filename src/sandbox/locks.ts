/**
 * Per-file serialisation inside one server (SPEC §12): write_file, edit_file
 * and move_file on the same file take its lock, so two calls never interleave
 * their read, check and replace. Keys are real paths (validate() resolves
 * symlinks), so two spellings of one file share a lock.
 */
import fs from "node:fs/promises";
import path from "node:path";

// The promise each key's next taker waits for; absent when nobody holds or waits for the key.
const tails = new Map<string, Promise<void>>();

/** Waits until `key` is free, takes it, and returns the function that frees it. */
async function acquire(key: string): Promise<() => void> {
  const previous = tails.get(key) ?? Promise.resolve();
  let free!: () => void;
  const mine = new Promise<void>((resolve) => (free = resolve));
  const tail = previous.then(() => mine);
  tails.set(key, tail);
  await previous;
  return () => {
    free();
    if (tails.get(key) === tail) tails.delete(key);
  };
}

/**
 * Runs `task` while holding the locks of every path in `keys`, taken in sorted
 * order so that two calls naming the same files (a move and its reverse) cannot
 * deadlock; releases them however `task` ends.
 */
export async function withFileLocks<T>(keys: readonly string[], task: () => Promise<T>): Promise<T> {
  const ordered = [...new Set(keys)].sort();
  const releases: Array<() => void> = [];
  try {
    for (const key of ordered) releases.push(await acquire(key));
    return await task();
  } finally {
    for (const release of releases.reverse()) release();
  }
}

/**
 * The lock key of a path that need not exist (a move's destination): its parent's
 * real path and its name, or the path itself when the parent cannot be resolved.
 */
export async function lockKeyOf(target: string): Promise<string> {
  const abs = path.resolve(target);
  try {
    return path.join(await fs.realpath(path.dirname(abs)), path.basename(abs));
  } catch {
    return abs;
  }
}

/** How many keys are held or awaited (tests check that every lock is released). */
export function heldLockCount(): number {
  return tails.size;
}
