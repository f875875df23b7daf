/**
 * Owner, group and write permission of a replaced file (SPEC §12): a replace
 * never hands a file to the server's user, and a file whose mode does not let
 * the server's user write it is refused rather than replaced through its
 * (writable) directory.
 */
import type { BigIntStats } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { SafeFsError } from "./errors.js";

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
  throw new SafeFsError(
    `Cannot ${action} ${shown}: it is read-only for this server's user (mode ${octal(st.mode)}, owner uid ${st.uid}, ` +
      `group gid ${st.gid}); refusing to replace it. Change its permissions first if it should be written.`,
    { code: "EACCES" },
  );
}

/**
 * Gives the temp file that will replace `previous` the same owner, group and permission bits.
 * @throws when the owner or group cannot be kept (the server's user may not chown to them)
 */
export async function keepOwnerAndMode(temp: FileHandle, previous: BigIntStats, shown: string): Promise<void> {
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
