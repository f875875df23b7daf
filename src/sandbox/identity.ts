/**
 * File identity, written once: whether two stats describe the same file
 * object, and the same version of its content.
 */
import { fstatSync } from "node:fs";

/** The stat fields that identify a file object and a version of its content. */
export interface FileVersion {
  dev: bigint;
  ino: bigint;
  size: bigint;
  mtimeNs: bigint;
  /** Changes on every write, even one that restores size and mtime afterwards (SPEC §13). */
  ctimeNs: bigint;
}

/** What tells one file object from another: numbers when exact, bigints otherwise (one form per object). */
export interface FileObjectId {
  dev: number | bigint;
  ino: number | bigint;
}

/**
 * The identity of the object `fd` holds, given `st`, its fstat as numbers: `st` itself when exact, else asked again
 * as bigints. Numbers are cheaper (no bigint stats per file) but lose precision past 2^53, where inode numbers of
 * some file systems lie; the same object always gets the same form.
 */
export function exactIdOf(fd: number, st: FileObjectId & { dev: number; ino: number }): FileObjectId {
  return st.ino <= Number.MAX_SAFE_INTEGER && st.dev <= Number.MAX_SAFE_INTEGER ? st : fstatSync(fd, { bigint: true });
}

/** True when both stats describe the same file object (device and inode). */
export function sameFile(a: Pick<FileVersion, "dev" | "ino"> | undefined, b: Pick<FileVersion, "dev" | "ino">): boolean {
  return a !== undefined && a.dev === b.dev && a.ino === b.ino;
}

/** True when both stats describe the same file object with unchanged content (size, mtime and ctime). */
export function sameVersion(a: FileVersion | undefined, b: FileVersion): boolean {
  return sameFile(a, b) && a!.size === b.size && a!.mtimeNs === b.mtimeNs && a!.ctimeNs === b.ctimeNs;
}

/** The identifying fields of a bigint stat, detached from it. */
export function versionOf(st: FileVersion): FileVersion {
  return { dev: st.dev, ino: st.ino, size: st.size, mtimeNs: st.mtimeNs, ctimeNs: st.ctimeNs };
}
