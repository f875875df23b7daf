/**
 * The cross-process swap lock (SPEC §12, §18): one per entry, taken by every
 * process of this server for the whole of a change to that entry (a write, an
 * edit, an append, a copy or move to it, a delete), so two processes' changes
 * of one entry never interleave and the entry's temp name (names.ts) belongs
 * to the holder alone: anything found there by a new holder was left by a
 * holder that died, and is removed at once.
 *
 * The lock is a symbolic link whose target text names its holder (pid, start
 * time, machine), so it appears with its content in one atomic symlink(2).
 * (Windows, where links need a privilege, uses a file with the same text.) It
 * is honoured only in that exact form: anything else found at a lock name (a
 * plain file, a directory, other text) is not a lock of this server and is
 * cleared at once. A holder refreshes its lock's mtime every HEARTBEAT_MS while
 * it holds it. A waiter breaks a lock at once when its holder is a process of
 * this machine that is gone; a holder that cannot be verified (another machine
 * sharing the file system, or no start time to tell a reused pid) is taken for
 * gone once silent for STALE_LOCK_MS. A wait has a deadline (the runtime's `LockWaits`), ends
 * with the call's cancellation, and leaves no timer behind.
 */
import fs from "node:fs/promises";
import path from "node:path";
import type { Confinement, Target } from "./confinement.js";
import { errnoCode, type LockHolderShown, refused, wrapError } from "./errors.js";
import { LOCK_FLAGS } from "./flags.js";
import { sameFile } from "./identity.js";
import { HERE, type Intent, type LockText, lockIsStale, lockTextOf, parseLock } from "./lock-owner.js";
import type { LockWaits } from "./locks.js";
import { lockNameOf, tempNameOf } from "./names.js";
import { removeEntry } from "./tree.js";

// Every holder refreshes its lock's mtime this often (lock-owner.ts says how long a silent one is honoured).
const HEARTBEAT_MS = 2_000;
const MAX_WAIT_STEP_MS = 25;
// On Windows a lock file exists, empty, for a moment before its text is written.
const BEING_WRITTEN_MS = 1_000;

/**
 * The mode of the empty placeholder directory a holder of an earlier version of this server made at its entry
 * before moving or copying a directory there; this one makes none (SPEC §24), but settles what one left.
 */
const PLACEHOLDER_MODE = 0o700;

/**
 * Removes the empty placeholder directory a dead holder whose lock is `lock` may have left at the
 * target's entry: only one marked so in the lock, still empty, of the placeholder's mode, made by this
 * server's user after the lock was taken.
 */
async function removePlaceholder(t: Target, lock: LockText): Promise<void> {
  if (!lock.placeholder) return;
  const st = await t.lstat().catch(() => undefined);
  if (!st?.isDirectory() || (Number(st.mode) & 0o7777) !== PLACEHOLDER_MODE) return;
  if (process.geteuid !== undefined && st.uid !== BigInt(process.geteuid())) return;
  if (Number(st.birthtimeMs || st.ctimeMs) < lock.at - 1000) return;
  // rmdir(2) removes it only while it is empty.
  await fs.rmdir(t.at).catch(() => undefined);
}

/**
 * Finishes a file move a dead holder whose lock is `lock` left between link(2) and unlink(2): when the
 * entry and the source (inside) are still the same file, the source name goes, as the move meant.
 */
async function finishMove(c: Confinement, t: Target, lock: LockText): Promise<void> {
  const source = lock.movedFrom;
  if (source === undefined) return;
  if (!c.inside(path.dirname(source))) return;
  await c
    .inParent(source, "finish the move of", async (from) => {
      const [there, here] = await Promise.all([from.lstat(), t.lstat()]);
      if (there?.isFile() && here !== undefined && sameFile(there, here) && there.nlink > 1n) await fs.unlink(from.at);
    })
    .catch(() => undefined);
}

/** What is found at a lock name: its text (for a link or a small file), its age, and what kind of entry it is. */
interface Seen {
  text: string;
  ageMs: number;
  kind: "link" | "file" | "other";
}

/** What is at `lock`, or undefined when there is nothing. */
async function readLock(lock: string): Promise<Seen | undefined> {
  try {
    const st = await fs.lstat(lock);
    const kind = st.isSymbolicLink() ? "link" : st.isFile() ? "file" : "other";
    const text = kind === "link" ? await fs.readlink(lock) : kind === "file" && st.size < 512 ? await fs.readFile(lock, "utf8") : "";
    return { text, ageMs: Date.now() - st.mtimeMs, kind };
  } catch (err) {
    const code = errnoCode(err);
    // Gone, or swapped for another kind of entry between the two looks: looked at again by the caller's next step.
    if (code === "ENOENT") return undefined;
    if (code === "EINVAL" || code === "EISDIR") return { text: "", ageMs: 0, kind: "other" };
    throw err;
  }
}

/** The lock `seen` is when it has the exact form this server writes; undefined for anything else. */
function lockOf(seen: Seen): LockText | undefined {
  const form = process.platform === "win32" ? "file" : "link";
  return seen.kind === form ? parseLock(seen.text) : undefined;
}

/** Whether `seen` is to be waited for: a lock of this server whose holder is not known to be gone. */
function honoured(seen: Seen): boolean {
  // A Windows lock file is empty for a moment while its holder writes its text.
  if (process.platform === "win32" && seen.kind === "file" && seen.text === "" && seen.ageMs < BEING_WRITTEN_MS) return true;
  return !lockIsStale(lockOf(seen)?.owner, seen.ageMs);
}

async function createLock(lock: string, text: string): Promise<void> {
  if (process.platform !== "win32") return fs.symlink(text, lock);
  const handle = await fs.open(lock, LOCK_FLAGS, 0o600);
  try {
    await handle.writeFile(text);
  } finally {
    await handle.close();
  }
}

/** Where a stale lock of entry `name` is moved to be looked at before it goes: one name per entry, so a breaker killed there leaves it for the next holder. */
const asideNameOf = (name: string): string => tempNameOf(lockNameOf(name));

/**
 * Removes whatever is at entry `name` of the target's directory, one of this server's own names (a temp, a lock
 * or its aside name), as the server's leftover it is: a directory there goes with all it holds, unless it is or
 * holds an allowed directory, which is refused instead.
 */
async function clearServerName(c: Confinement, t: Target, name: string): Promise<void> {
  refuseAllowedAt(c, t, name);
  await removeEntry(t.dir, name);
}

/** Refuses to touch entry `name` of the target's directory when it is or holds an allowed directory. */
function refuseAllowedAt(c: Confinement, t: Target, name: string): void {
  const real = path.join(t.dir.real, name);
  const allowed = c.isAllowedDirectory(real) ? real : c.allowedUnder(real);
  if (allowed !== undefined) throw refused({ kind: "allowedAtServerName", path: t.shown, allowed });
}

/**
 * Removes the lock at `lock` unless it is honoured; returns what holds it when it is (the caller waits), or
 * undefined when the caller should try to take it again at once. It is moved aside first and looked at
 * there, so a lock another process took in the meantime is put back.
 */
async function breakUnlessHonoured(c: Confinement, t: Target, lock: string): Promise<Seen | undefined> {
  const seen = await readLock(lock);
  if (seen === undefined) return undefined;
  if (honoured(seen)) return seen;
  refuseAllowedAt(c, t, lockNameOf(t.name));
  const asideName = asideNameOf(t.name);
  const aside = t.dir.child(asideName);
  for (let attempt = 1; ; attempt++) {
    try {
      await fs.rename(lock, aside);
      break;
    } catch (err) {
      const code = errnoCode(err);
      if (code === "ENOENT") return undefined;
      // Something else sits at the aside name (a directory, or a file where a directory is moved): cleared once.
      if (attempt > 1 || !(code === "EISDIR" || code === "ENOTDIR" || code === "ENOTEMPTY" || code === "EEXIST" || code === "EPERM")) throw err;
      await clearServerName(c, t, asideName);
    }
  }
  const moved = await readLock(aside);
  if (moved !== undefined && (moved.text !== seen.text || moved.kind !== seen.kind)) {
    // Another process's lock, taken meanwhile, goes back; anything else moved aside goes with the rest.
    if (lockOf(moved) !== undefined) await createLock(lock, moved.text).catch(() => undefined);
  } else {
    const left = lockOf(seen);
    if (left !== undefined) {
      await removePlaceholder(t, left);
      await finishMove(c, t, left);
    }
  }
  await clearServerName(c, t, asideName);
  return undefined;
}

/** How the holder a lock names is shown in a refusal: its pid and whether it is of this machine (never its host id). */
function holderShown(seen: Seen): LockHolderShown {
  const owner = lockOf(seen)?.owner;
  return { pid: owner?.pid ?? 0, thisMachine: owner === undefined || owner.host === HERE.host };
}

/** Resolves after `ms`, or rejects with the cancellation refusal as soon as `signal` aborts; leaves no timer behind. */
function pause(waits: LockWaits, ms: number, signal: AbortSignal | undefined, shown: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const cancelled = (): void => {
      clearTimeout(timer);
      waits.timers--;
      reject(refused({ kind: "lockCancelled", path: shown }));
    };
    const timer = setTimeout(() => {
      waits.timers--;
      signal?.removeEventListener("abort", cancelled);
      resolve();
    }, ms);
    waits.timers++;
    signal?.addEventListener("abort", cancelled, { once: true });
  });
}

/**
 * Takes the lock at `lock`, waiting while a live holder has it, breaking one that is not honoured.
 * @throws the refusal `lockTimeout` past `c.lockWaits.waitMs`, `lockCancelled` when `signal` aborts
 */
async function takeLock(c: Confinement, t: Target, lock: string, text: string, signal: AbortSignal | undefined): Promise<void> {
  const started = Date.now();
  c.lockWaits.waiting++;
  try {
    for (let step = 1; ; step = Math.min(step * 2, MAX_WAIT_STEP_MS)) {
      if (signal?.aborted) throw refused({ kind: "lockCancelled", path: t.shown });
      try {
        return await createLock(lock, text);
      } catch (err) {
        if (errnoCode(err) !== "EEXIST") throw err;
      }
      const held = await breakUnlessHonoured(c, t, lock);
      if (held === undefined) continue;
      const waitedMs = Date.now() - started;
      if (waitedMs >= c.lockWaits.waitMs) throw refused({ kind: "lockTimeout", path: t.shown, holder: holderShown(held), waitedMs });
      await pause(c.lockWaits, step, signal, t.shown);
    }
  } finally {
    c.lockWaits.waiting--;
  }
}

/** Whether the target's entry has a swap lock now: a call that would refuse what it finds may find it settled once it holds it. */
export async function lockPresent(t: Target): Promise<boolean> {
  return (await readLock(t.dir.child(lockNameOf(t.name))).catch(() => undefined)) !== undefined;
}

/** How a swap lock is taken: what the task may leave half done, and the call's cancellation. */
export interface LockOptions {
  intent?: Intent;
  /** Ends the wait for the lock (not the task, which watches it itself). */
  signal?: AbortSignal;
}

/** What the holder of an entry's swap lock may use: the entry and its temp name. */
export interface HeldLock {
  readonly t: Target;
  /** The entry's temp name in its directory, free while the lock is held. */
  readonly tempName: string;
  /** `t.dir.child(tempName)`. */
  readonly temp: string;
}

/**
 * Runs `task` holding the swap lock of the target's entry, waiting while another process holds it and
 * breaking one its holder left; first removes whatever a dead holder left at the entry's temp name.
 * `how.intent` says in the lock what the task may leave half done if it is killed, for the next holder to settle;
 * the wait ends with `how.signal` and past `c.lockWaits.waitMs` (a refusal naming the holder).
 */
export async function underSwapLock<T>(c: Confinement, t: Target, task: (held: HeldLock) => Promise<T>, how: LockOptions = {}): Promise<T> {
  const lock = t.dir.child(lockNameOf(t.name));
  const text = lockTextOf(HERE, how.intent ?? {});
  // The lock's own names never reach a message: failures here are worded with the path as given.
  await takeLock(c, t, lock, text, how.signal).catch((err: unknown) => {
    throw wrapError(err, `Cannot change ${t.shown}: its lock could not be taken`);
  });
  const beat = setInterval(() => {
    const now = new Date();
    void fs.lutimes(lock, now, now).catch(() => undefined);
  }, HEARTBEAT_MS);
  beat.unref();
  try {
    const tempName = tempNameOf(t.name);
    try {
      await clearServerName(c, t, tempName);
      // Residual window: two waiters breaking the same stale lock at once, the second moving aside the lock the
      // first has just taken, while the first removes what is aside; the second then takes the lock too.
      await clearServerName(c, t, asideNameOf(t.name));
    } catch (err) {
      throw wrapError(err, `Cannot change ${t.shown}: what a stopped server left beside it could not be removed`);
    }
    return await task({ t, tempName, temp: t.dir.child(tempName) });
  } finally {
    clearInterval(beat);
    // Only our own lock: one broken as stale meanwhile may have been taken by another process.
    if ((await readLock(lock).catch(() => undefined))?.text === text) await fs.unlink(lock).catch(() => undefined);
  }
}
