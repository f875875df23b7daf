/**
 * Who holds a swap lock (swap-lock.ts), written once: the lock's text names
 * its holder (pid, the process's start time, the machine) and what it may
 * leave half done; a lock's holder is gone when its process of this machine
 * is gone, or, when it cannot be verified (another machine sharing the file
 * system, or no start time to tell a reused pid), once its heartbeat has been
 * silent for STALE_LOCK_MS. Text in any other form is not a lock of this server.
 */
import { createHash, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import os from "node:os";
import { errnoCode } from "./errors.js";

// Holders refresh their lock every 2 s (swap-lock.ts); one that cannot be verified and is silent this long has gone.
const STALE_LOCK_MS = 10_000;

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

/** This machine: its host name and boot id, hashed (never shown in a message). */
function machineId(): string {
  let boot = "";
  try {
    boot = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
  } catch {
    // No boot id here: the host name alone tells machines apart.
  }
  return createHash("sha256").update(`${os.hostname()}\0${boot}`).digest("hex").slice(0, 16);
}

/** This process as a lock names it. */
export const HERE: LockOwner = { pid: process.pid, start: startTimeOf(process.pid), host: machineId() };

/** What a holder may leave half done if it is killed, for the next holder to finish or undo. */
export interface Intent {
  /** It may make an empty placeholder directory at the entry (written only by earlier versions; tests play them). */
  placeholder?: boolean;
  /** It links the file at this real path (inside) to the entry and then unlinks it there (a file moved). */
  movedFrom?: string;
}

/** The text of a lock held by `o`, which may leave `intent` half done. */
export const lockTextOf = (o: LockOwner, intent: Intent): string =>
  `bfs-lock pid=${o.pid} start=${o.start} host=${o.host} at=${Date.now()} nonce=${randomBytes(8).toString("hex")}` +
  `${intent.placeholder ? " placeholder" : ""}${intent.movedFrom === undefined ? "" : ` from=${Buffer.from(intent.movedFrom).toString("base64url")}`}`;

/** The text of a lock held by process `pid` of this machine (tests play other holders with it). */
export function lockTextFor(pid: number, intent: Intent = {}): string {
  return lockTextOf({ pid, start: startTimeOf(pid), host: HERE.host }, intent);
}

const OWNER_TEXT = /^bfs-lock pid=([1-9]\d{0,9}) start=(\d*) host=([0-9a-f]{16}) at=(\d+) nonce=[0-9a-f]+( placeholder)?(?: from=([\w-]+))?$/;

/** A lock's text read: its holder, when it was taken, and what the holder may have left half done. */
export interface LockText {
  owner: LockOwner;
  /** When it was taken (ms since the epoch). */
  at: number;
  placeholder: boolean;
  movedFrom?: string;
}

/** The lock a text describes, or undefined for any text but the exact form this server writes. */
export function parseLock(text: string): LockText | undefined {
  const m = OWNER_TEXT.exec(text);
  if (!m) return undefined;
  const lock: LockText = { owner: { pid: Number(m[1]), start: m[2]!, host: m[3]! }, at: Number(m[4]), placeholder: m[5] !== undefined };
  if (m[6] !== undefined) lock.movedFrom = Buffer.from(m[6], "base64url").toString();
  return lock;
}

/** Whether a process named by a lock of this machine still runs (a pid reused by a later process does not count, where it can be told). */
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
 * Whether a lock whose text names `owner` (undefined: not a lock of this server) and whose mtime is `ageMs`
 * old (negative: dated ahead) was left by a holder that is gone. Not ours: at once. A holder of this machine:
 * when its process is gone, or, when only its pid can be checked (no start time), once silent too long.
 * A holder elsewhere: once silent too long.
 */
export function lockIsStale(owner: LockOwner | undefined, ageMs: number, runs: (o: LockOwner) => boolean = stillRuns): boolean {
  if (owner === undefined) return true;
  const silent = Math.abs(ageMs) > STALE_LOCK_MS;
  if (owner.host !== HERE.host) return silent;
  if (!runs(owner)) return true;
  return owner.start === "" && silent;
}
