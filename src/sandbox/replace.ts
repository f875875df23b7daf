/**
 * A file replaced by a new version (SPEC §4, §12, §18), and write_file's whole
 * write through it. The one temp-file replacement: a temp file beside the file
 * (the entry's one temp name, created O_EXCL while its swap lock is held, so a
 * kill at any moment leaves the file wholly old or wholly new and at most a
 * hidden temp file that the next holder removes), given the replaced file's
 * owner, group and mode, filled by the caller, then renamed over the file
 * after the caller's check.
 *
 * rename(2) cannot tell what it replaced, so "the name still holds what was
 * read" is checked just before it; every process of this server holds the
 * entry's swap lock (swap-lock.ts) for the whole change, so another server
 * process's replace can never land in between. A writer that does not take the
 * lock (an editor saving by rename) can still land in that window of a few
 * system calls: the residual window.
 *
 * A replace never hands a file to the server's user, and a file whose mode
 * does not let the server's user write it is refused rather than replaced
 * through its (writable) directory.
 */
import type { BigIntStats } from "node:fs";
import fs, { type FileHandle } from "node:fs/promises";
import { formatCount } from "../kernel/bounded.js";
import { __testHooks, type Confinement } from "./confinement.js";
import { notRegular, refused, SafeFsError, wrapError } from "./errors.js";
import { TEMP_FLAGS } from "./flags.js";
import { type HeldLock, underSwapLock } from "./swap-lock.js";

const octal = (mode: bigint): string => (Number(mode) & 0o7777).toString(8).padStart(4, "0");

/**
 * The write bit that applies to this process for a file with `st`'s owner, group and
 * mode, as access(2) would pick it; root, which access(2) lets write anything, still
 * needs some write bit, so a file made read-only (0444) is left alone.
 */
function mayWrite(st: BigIntStats): boolean {
  const mode = Number(st.mode);
  const uid = process.geteuid?.();
  if (uid === undefined) return (mode & 0o222) !== 0;
  if (uid === 0) return (mode & 0o222) !== 0;
  if (BigInt(uid) === st.uid) return (mode & 0o200) !== 0;
  const groups = new Set([process.getegid?.(), ...(process.getgroups?.() ?? [])]);
  if (groups.has(Number(st.gid))) return (mode & 0o020) !== 0;
  return (mode & 0o002) !== 0;
}

/** Refuses to change `shown` (described by `st`) when its mode gives the server's user no write permission. */
export function assertWritable(st: BigIntStats, shown: string, action: string): void {
  if (mayWrite(st)) return;
  throw refused({ kind: "readOnly", path: shown, action, mode: octal(st.mode), uid: String(st.uid), gid: String(st.gid) });
}

/**
 * Gives the temp file that will replace `previous` the same owner, group and permission bits.
 * @throws when the owner or group cannot be kept (the server's user may not chown to them)
 */
async function keepOwnerAndMode(temp: FileHandle, previous: BigIntStats, shown: string): Promise<void> {
  const now = await temp.stat({ bigint: true });
  if (now.uid !== previous.uid || now.gid !== previous.gid) {
    try {
      await temp.chown(Number(previous.uid), Number(previous.gid));
    } catch (err) {
      throw new SafeFsError(
        `Cannot replace ${shown}: it is owned by uid ${previous.uid} gid ${previous.gid}, and this server (uid ` +
          `${process.geteuid?.() ?? "?"}) cannot give the new version that owner and group; refusing rather than ` +
          "changing them.",
        { cause: err, code: "EPERM" },
      );
    }
  }
  // After chown, which clears set-user/group-ID bits.
  await temp.chmod(Number(previous.mode) & 0o7777);
}

/** What a replacement did: the filler's report, and the stat of the new file as it was renamed in. */
export interface Replaced<T> {
  value: T;
  written: BigIntStats;
  /**
   * The replaced file's other names (hard links), which still hold its previous content: the new file took this
   * name alone, as any atomic replace (upstream's, `sed -i`'s) does. 0 for a new file.
   */
  otherNames: number;
}

/**
 * Replaces the held entry with a new file: creates its temp file (never an existing file, never through a
 * symlink), gives it the owner and mode of `previous` (the file it replaces; a new file's mode is left to
 * the umask), lets `fill` write it, runs `check` (which throws when the entry no longer holds what the
 * caller read) and renames the temp file over the entry. On any failure the temp file is removed and the
 * entry left as it was; errors pass through for the caller to word.
 */
export async function replaceWith<T>(
  held: HeldLock,
  previous: BigIntStats | undefined,
  fill: (temp: FileHandle) => Promise<T>,
  check?: () => Promise<void>,
): Promise<Replaced<T>> {
  const { t, temp } = held;
  let created = false;
  try {
    // 0o666 lets the umask decide a new file's mode, as writeFile would; a replacement stays private
    // until it has its predecessor's mode.
    const handle = await fs.open(temp, TEMP_FLAGS, previous ? 0o600 : 0o666);
    created = true;
    let value: T;
    let written: BigIntStats;
    try {
      // Owner first: a replace that cannot keep it is refused before anything is written.
      if (previous) await keepOwnerAndMode(handle, previous, t.shown);
      value = await fill(handle);
      written = await handle.stat({ bigint: true });
    } finally {
      await handle.close();
    }
    await __testHooks.beforeReplace?.(t.shown);
    await check?.();
    await __testHooks.afterCheck?.(t.shown);
    await fs.rename(temp, t.at);
    created = false;
    return { value, written, otherNames: previous === undefined ? 0 : otherNamesOf(previous) };
  } finally {
    if (created) await fs.unlink(temp).catch(() => undefined);
  }
}

/** Refuses to replace anything but a regular file (or nothing). */
function assertReplaceable(existing: BigIntStats | undefined, shown: string): void {
  if (!existing || existing.isFile()) return;
  if (existing.isDirectory()) throw new SafeFsError(`Cannot write ${shown}: it is a directory`, { code: "EISDIR" });
  if (existing.isSymbolicLink()) {
    throw new SafeFsError(`Cannot write ${shown}: it is a symbolic link; refusing to replace it`, { code: "ELOOP" });
  }
  throw notRegular(shown, existing);
}

/** The names of the file `st` describes besides the one it was reached by (its hard links). */
export function otherNamesOf(st: BigIntStats): number {
  return Math.max(0, Number(st.nlink) - 1);
}

/** What a write_file left behind that its caller should hear of. */
export interface Written {
  /** The replaced file's other names (hard links), which keep its previous content (see Replaced). */
  otherNames: number;
}

/** "1 other name (a hard link) keeps" / "N other names (hard links) keep" (`would keep`): how a result names what an atomic replace leaves. */
export function otherNamesKeep(otherNames: number, would = false): string {
  const verb = would ? "would keep" : otherNames === 1 ? "keeps" : "keep";
  return otherNames === 1 ? `1 other name (a hard link) ${verb}` : `${formatCount(otherNames)} other names (hard links) ${verb}`;
}

/** The note a write or an edit ends with (`would`: a dry run's) when the file it replaces has other names; "" when none. */
export function otherNamesNote(shown: string, otherNames: number, would = false): string {
  if (otherNames === 0) return "";
  const how = would ? "the edit would write a new file under this name only" : "the new text was written as a new file under this name only";
  return `\nNote: ${otherNamesKeep(otherNames, would)} the previous text of ${shown}: ${how}.`;
}

/**
 * write_file: atomically replaces (or creates) `real` (a validated path) with `content`, through its opened,
 * verified parent, keeping an existing file's owner, group and permission bits; refuses a file the server's
 * user may not write.
 */
export function writeWhole(c: Confinement, real: string, content: string, signal?: AbortSignal, shown = real): Promise<Written> {
  return c.inParent(
    real,
    "write",
    async (t) => {
      let existing: BigIntStats | undefined;
      // Refusals first, before the lock: a refused call leaves the directory as it was.
      try {
        existing = await t.lstat();
      } catch (err) {
        throw wrapError(err, `Cannot write ${t.shown}`);
      }
      assertReplaceable(existing, t.shown);
      if (existing) assertWritable(existing, t.shown, "write");
      try {
        return await underSwapLock(
          c,
          t,
          async (held) => {
            existing = await t.lstat();
            assertReplaceable(existing, t.shown);
            if (existing) assertWritable(existing, t.shown, "write");
            const { otherNames } = await replaceWith(held, existing, (temp) => temp.writeFile(content, "utf8"));
            return { otherNames };
          },
          { signal },
        );
      } catch (err) {
        if (err instanceof SafeFsError) throw err;
        const kept = existing ? `${t.shown} keeps its previous content` : "no file was created";
        throw wrapError(err, `Cannot write ${t.shown}`).withNote(`nothing was written: ${kept}`);
      }
    },
    shown,
  );
}
