/**
 * The moment a new version takes a file's name (SPEC §12). rename(2) cannot
 * tell what it replaced, so "the name still holds what was read" is checked
 * just before it, and the check and the rename are made one step for every
 * process of this server by a lock file beside the file (O_EXCL), so another
 * server process's replace can never land between them. A writer that does
 * not take the lock (an editor saving by rename) can still land in that
 * window of a few system calls: the residual window.
 */
import { createHash } from "node:crypto";
import { constants } from "node:fs";
import fs from "node:fs/promises";
import { __testHooks } from "./dirs.js";
import { errnoCode, SafeFsError } from "./errors.js";
import { O_NOFOLLOW } from "./flags.js";
import type { OpenedDir } from "./strategy.js";

const LOCK_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | O_NOFOLLOW;
// A lock is held for a few system calls; one this old was left by a process that died holding it.
const STALE_LOCK_MS = 5_000;
const MAX_WAIT_STEP_MS = 8;

/** `File changed during edit: <path>; no changes were written.` */
export function changedDuringEdit(shown: string): SafeFsError {
  return new SafeFsError(`File changed during edit: ${shown}; no changes were written. Read it again and retry.`);
}

/** The lock file's name for entry `name`: fixed length, so a long name cannot make it too long. */
export function lockNameOf(name: string): string {
  return `.${createHash("sha256").update(name).digest("hex").slice(0, 20)}.swap-lock.tmp`;
}

/** Creates the lock file, waiting while another process holds it and breaking one left stale. */
async function takeLock(dir: OpenedDir, lock: string): Promise<void> {
  for (let step = 1; ; step = Math.min(step * 2, MAX_WAIT_STEP_MS)) {
    try {
      await (await fs.open(dir.child(lock), LOCK_FLAGS, 0o600)).close();
      return;
    } catch (err) {
      if (errnoCode(err) !== "EEXIST") throw err;
    }
    const held = await fs.lstat(dir.child(lock)).catch(() => undefined);
    if (held && Date.now() - held.mtimeMs > STALE_LOCK_MS) {
      await fs.unlink(dir.child(lock)).catch(() => undefined);
      continue;
    }
    await new Promise((resolve) => setTimeout(resolve, step));
  }
}

/**
 * Renames entry `temp` of `dir` over entry `name` after `check` (which throws when `name` no longer
 * holds the version read), both under the lock every process of this server takes for `name`.
 */
export async function swapIn(
  dir: OpenedDir,
  temp: string,
  name: string,
  shown: string,
  check?: () => Promise<void>,
): Promise<void> {
  await __testHooks.beforeReplace?.(shown);
  const lock = lockNameOf(name);
  await takeLock(dir, lock);
  try {
    await check?.();
    await __testHooks.afterCheck?.(shown);
    await fs.rename(dir.child(temp), dir.child(name));
  } finally {
    await fs.unlink(dir.child(lock)).catch(() => undefined);
  }
}
