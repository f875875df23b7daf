/**
 * The cross-process swap lock (SPEC §12, §18): one per entry, taken by every
 * process of this server for the whole of a change to that entry (a write, an
 * edit, an append, a copy or move to it, a delete), so two processes' changes
 * of one entry never interleave and the entry's temp name (names.ts) belongs
 * to the holder alone: anything found there by a new holder was left by a
 * holder that died, and is removed at once.
 *
 * The lock is a symbolic link whose target text names its holder (pid, start
 * time, machine), so it appears with its content in one atomic symlink(2). A
 * waiter breaks it at once when that holder is a process of this machine that
 * is gone; a holder on another machine sharing the file system refreshes the
 * link's mtime while it holds it, and one silent for STALE_LOCK_MS is taken
 * for gone. (Windows, where links need a privilege, uses a file with the same text.)
 */
import { createHash, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { Confinement, Target } from "./confinement.js";
import { errnoCode } from "./errors.js";
import { LOCK_FLAGS } from "./flags.js";
import { sameFile } from "./identity.js";
import { lockNameOf, tempNameOf } from "./names.js";
import { removeEntry } from "./tree.js";

// A holder elsewhere refreshes its lock every HEARTBEAT_MS; one silent this long has gone.
const STALE_LOCK_MS = 10_000;
const HEARTBEAT_MS = 2_000;
const MAX_WAIT_STEP_MS = 8;

/** Who holds a lock: a process (pid and start time) on a machine. */
export interface LockOwner {
  pid: number;
  /** The process's start time as the kernel counts it, or "" where it cannot be read. */
  start: string;
  host: string;
}

/** A process's start time (clock ticks since boot, /proc/<pid>/stat field 22), or "" where there is no /proc. */
function startTimeOf(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces and parentheses: count from its closing one.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? "";
  } catch {
    return "";
  }
}

function machineId(): string {
  let boot = "";
  try {
    boot = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
  } catch {
    // No boot id here: the host name alone tells machines apart.
  }
  return createHash("sha256").update(`${os.hostname()}\0${boot}`).digest("hex").slice(0, 16);
}

const HERE: LockOwner = { pid: process.pid, start: startTimeOf(process.pid), host: machineId() };

/** The mode of an empty placeholder directory a holder may make at its entry (a directory moved or copied there). */
export const PLACEHOLDER_MODE = 0o700;

/** What a holder may leave half done if it is killed, for the next holder to finish or undo. */
export interface Intent {
  /** It may make an empty placeholder directory at the entry (a directory moved or copied there). */
  placeholder?: boolean;
  /** It links the file at this real path (inside) to the entry and then unlinks it there (a file moved). */
  movedFrom?: string;
}

const ownerText = (o: LockOwner, intent: Intent): string =>
  `bfs-lock pid=${o.pid} start=${o.start} host=${o.host} at=${Date.now()} nonce=${randomBytes(8).toString("hex")}` +
  `${intent.placeholder ? " placeholder" : ""}${intent.movedFrom === undefined ? "" : ` from=${Buffer.from(intent.movedFrom).toString("base64url")}`}`;

/** The text of a lock held by process `pid` of this machine (tests play other holders with it). */
export function lockTextFor(pid: number, intent: Intent = {}): string {
  return ownerText({ pid, start: startTimeOf(pid), host: HERE.host }, intent);
}

const OWNER_TEXT = /^bfs-lock pid=([1-9]\d{0,9}) start=(\d*) host=([0-9a-f]{16}) at=(\d+) nonce=[0-9a-f]+( placeholder)?(?: from=([\w-]+))?$/;

/** The holder a lock's text names, or undefined for any other text. */
export function parseOwner(text: string): LockOwner | undefined {
  const m = OWNER_TEXT.exec(text);
  return m ? { pid: Number(m[1]), start: m[2]!, host: m[3]! } : undefined;
}

/**
 * Removes the empty placeholder directory a dead holder whose lock read `text` may have left at the
 * target's entry: only one marked so in the lock, still empty, of the placeholder's mode, made by this
 * server's user after the lock was taken.
 */
async function removePlaceholder(t: Target, m: RegExpExecArray): Promise<void> {
  if (!m[5]) return;
  const st = await t.lstat().catch(() => undefined);
  if (!st?.isDirectory() || (Number(st.mode) & 0o7777) !== PLACEHOLDER_MODE) return;
  if (process.geteuid !== undefined && st.uid !== BigInt(process.geteuid())) return;
  if (Number(st.birthtimeMs || st.ctimeMs) < Number(m[4]) - 1000) return;
  // rmdir(2) removes it only while it is empty.
  await fs.rmdir(t.at).catch(() => undefined);
}

/**
 * Finishes a file move a dead holder whose lock read `m` left between link(2) and unlink(2): when the
 * entry and the source (inside) are still the same file, the source name goes, as the move meant.
 */
async function finishMove(c: Confinement, t: Target, m: RegExpExecArray): Promise<void> {
  if (!m[6]) return;
  const source = Buffer.from(m[6], "base64url").toString();
  if (!c.inside(path.dirname(source))) return;
  await c
    .inParent(source, "finish the move of", async (from) => {
      const [there, here] = await Promise.all([from.lstat(), t.lstat()]);
      if (there?.isFile() && here !== undefined && sameFile(there, here) && there.nlink > 1n) await fs.unlink(from.at);
    })
    .catch(() => undefined);
}

/** Whether a process named by a lock of this machine still runs (a pid reused by a later process does not count). */
function stillRuns(o: LockOwner): boolean {
  try {
    process.kill(o.pid, 0);
  } catch (err) {
    // EPERM: it exists, as another user's process.
    if (errnoCode(err) === "ESRCH") return false;
  }
  const now = o.start === "" ? "" : startTimeOf(o.pid);
  return now === "" || now === o.start;
}

/**
 * Whether a lock whose text names `owner` (undefined: unreadable) and whose mtime is `ageMs` old was
 * left by a holder that is gone: one of this machine whose process is gone; elsewhere, one silent too long.
 */
export function lockIsStale(owner: LockOwner | undefined, ageMs: number, runs: (o: LockOwner) => boolean = stillRuns): boolean {
  if (owner !== undefined && owner.host === HERE.host) return !runs(owner);
  return ageMs > STALE_LOCK_MS;
}

/** The text of the lock at `lock` and its age, or undefined when there is none. */
async function readLock(lock: string): Promise<{ text: string; ageMs: number; link: boolean } | undefined> {
  try {
    const st = await fs.lstat(lock);
    const link = st.isSymbolicLink();
    const text = link ? await fs.readlink(lock) : st.isFile() && st.size < 512 ? await fs.readFile(lock, "utf8") : "";
    return { text, ageMs: Date.now() - st.mtimeMs, link };
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return undefined;
    throw err;
  }
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
 * Removes the lock at `lock` if it is stale; true when the caller should try to take it again at once.
 * It is moved aside first and looked at there, so a lock another process took in the meantime is put back.
 */
async function breakIfStale(c: Confinement, t: Target, lock: string): Promise<boolean> {
  const seen = await readLock(lock);
  if (seen === undefined) return true;
  if (!lockIsStale(parseOwner(seen.text), seen.ageMs)) return false;
  const aside = t.dir.child(asideNameOf(t.name));
  try {
    await fs.rename(lock, aside);
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return true;
    throw err;
  }
  const moved = await readLock(aside);
  if (moved !== undefined && moved.text !== seen.text) await createLock(lock, moved.text).catch(() => undefined);
  else {
    const intent = OWNER_TEXT.exec(seen.text);
    if (intent !== null) {
      await removePlaceholder(t, intent);
      await finishMove(c, t, intent);
    }
  }
  await fs.rm(aside, { force: true });
  return true;
}

async function takeLock(c: Confinement, t: Target, lock: string, text: string): Promise<void> {
  for (let step = 1; ; step = Math.min(step * 2, MAX_WAIT_STEP_MS)) {
    try {
      return await createLock(lock, text);
    } catch (err) {
      if (errnoCode(err) !== "EEXIST") throw err;
    }
    if (await breakIfStale(c, t, lock)) continue;
    await new Promise((resolve) => setTimeout(resolve, step));
  }
}

/** Whether the target's entry has a swap lock now: a call that would refuse what it finds may find it settled once it holds it. */
export async function lockPresent(t: Target): Promise<boolean> {
  return (await readLock(t.dir.child(lockNameOf(t.name))).catch(() => undefined)) !== undefined;
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
 * `intent` says in the lock what the task may leave half done if it is killed, for the next holder to settle.
 */
export async function underSwapLock<T>(c: Confinement, t: Target, task: (held: HeldLock) => Promise<T>, intent: Intent = {}): Promise<T> {
  const lock = t.dir.child(lockNameOf(t.name));
  const text = ownerText(HERE, intent);
  await takeLock(c, t, lock, text);
  const beat = setInterval(() => {
    const now = new Date();
    void fs.lutimes(lock, now, now).catch(() => undefined);
  }, HEARTBEAT_MS);
  beat.unref();
  try {
    const tempName = tempNameOf(t.name);
    await removeEntry(t.dir, tempName);
    // Residual window: two waiters breaking the same stale lock at once, the second moving aside the lock the
    // first has just taken, while the first removes what is aside; the second then takes the lock too.
    await fs.rm(t.dir.child(asideNameOf(t.name)), { force: true });
    return await task({ t, tempName, temp: t.dir.child(tempName) });
  } finally {
    clearInterval(beat);
    // Only our own lock: one broken as stale meanwhile may have been taken by another process.
    if ((await readLock(lock).catch(() => undefined))?.text === text) await fs.unlink(lock).catch(() => undefined);
  }
}
