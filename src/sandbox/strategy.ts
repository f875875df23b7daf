/**
 * What differs between the platforms: how a verified directory is held and its
 * entries reached. platform/ implements it twice, one file each — procfd.ts
 * (Linux) acts through `/proc/self/fd/<fd>/<name>`, portable.ts (macOS, BSD,
 * Windows) uses checked paths — and picks one per runtime; callers never
 * branch on the platform.
 */
import type { BigIntStats, Dirent } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import type { FileObjectId } from "./identity.js";

/** A directory opened once; its entries are reached as `reach + name`. */
export interface OpenedDir {
  /** The directory's real path at the time it was opened. */
  readonly real: string;
  /** Prefix that reaches this very directory's entries: `/proc/self/fd/<fd>/`, or its real path and a separator. */
  readonly reach: string;
  /** `reach + name`: entry `name` of this directory (`""` is the directory itself). */
  child(name: string): string;
  /** Holds entry `name` for a tree operation; refused unless it is a directory (with `expected`, that one). */
  hold(name: string, expected?: DirId): Promise<HeldDir>;
  close(): Promise<void>;
}

/** A directory's identity: device and inode. */
export interface DirId {
  dev: bigint;
  ino: bigint;
}

/**
 * A directory held for a tree operation (delete_file, copy_file): its entries are read and changed
 * through the directory object that was opened and checked, whatever happens to its path meanwhile.
 * Nothing at an entry's end is followed; low-level errors are rethrown for the caller to word.
 */
export interface HeldDir {
  readonly id: DirId;
  /** Its real path when it was opened (for messages and link checks). */
  readonly real: string;
  /** Its entries, in readdir order. */
  entries(): Promise<Dirent[]>;
  /** The entry's lstat, or undefined when there is none. */
  lstat(name: string): Promise<BigIntStats | undefined>;
  /** Opens entry `name` as a directory; a symlink there is refused (ENOTDIR or ELOOP), and so is any other directory than `expected`. */
  openDir(name: string, expected?: DirId): Promise<HeldDir>;
  /** Opens this directory's parent again, refused unless it is the directory `expected` describes. */
  openParent(expected: DirId): Promise<HeldDir>;
  /** open(2) of entry `name` with `flags` (which must hold O_NOFOLLOW); the caller closes the fd. */
  openFile(name: string, flags: number, mode?: number): Promise<number>;
  unlink(name: string): Promise<void>;
  rmdir(name: string): Promise<void>;
  mkdir(name: string, mode: number): Promise<void>;
  symlink(target: string, name: string): Promise<void>;
  readlink(name: string): Promise<string>;
  /** chmod of entry `name`, which must be a directory (a symlink swapped in is refused, never followed). */
  chmodDir(name: string, mode: number): Promise<void>;
  close(): Promise<void>;
}

/** Where a walked directory's entries are reached: a prefix, and the fd it depends on (or -1). */
export interface Reach {
  /** Prefix that reaches this very directory's entries; it reaches nothing once `fd` is released. */
  reach: string;
  /** The fd still to be closed by `release`, or -1 when the reach holds none. */
  fd: number;
  /** The directory read (device and inode), to check that what the reach leads to is still it. */
  id?: FileObjectId;
}

/** A directory read during a walk. */
export interface Listing extends Reach {
  entries: Dirent[];
}

/** A directory read, or why it could not be read. */
export type Read = Listing | { error: unknown };

/** An entry opened by `openEntriesSync`: its fd, or why open(2) refused it. */
export type EntryOpen = { fd: number } | { error: unknown };

/** What differs between the platforms; every method's containment check is done by the caller. */
export interface Strategy {
  readonly name: StrategyName;
  /** link(2) on a symlink links the symlink itself (Linux), rather than what it points to. */
  readonly linksSymlinks: boolean;
  /**
   * Opens directory `target` (following symlinks unless `noFollow`) and reports its real path.
   * Low-level errors (ENOENT, ENOTDIR, ELOOP…) are rethrown unwrapped for the caller to word.
   */
  openDir(target: string, noFollow: boolean): Promise<OpenedDir>;
  /**
   * The real path of the object an opened handle refers to (reached as `childPath`).
   * @throws when the object at `childPath` is no longer the one opened
   */
  realPathOf(handle: FileHandle, childPath: string, shown: string): Promise<string>;
  /**
   * `realPathOf` without a thread-pool round trip, for `fd` opened (final symlink not followed) as entry
   * `name` of a walked directory reached through `reach` (whose identity when the walk read it is
   * `dir`, when known), with `stat` from that fd; undefined when the reach alone proves the object inside
   * (the kernel resolved `name` in a directory held open and verified).
   * @throws when the object at `reach + name` is no longer the one opened, or its directory no longer the one read
   */
  realPathOfFdSync(fd: number, reach: string, name: string, shown: string, stat: FileObjectId, dir?: FileObjectId): string | undefined;
  /** True when `realPathOfFdSync` would be undefined for entry `name` of a walked directory reached through `reach`: the reach alone proves it inside, so no stat is asked for it. */
  provesInside(reach: string, name: string): boolean;
  /**
   * Reads entry `name` of `parent` (shown to the user as `shown`) as a directory; never rejects. `inPool`: the
   * walk reads it ahead of its need and lets it take a thread-pool round trip, overlapping the walk's work
   * (otherwise a small one is read at once, host.ts `readDirEntries`).
   */
  readChild(parent: Reach, name: string, shown: string, inPool?: boolean): Promise<Read>;
  /**
   * Opens again, synchronously, entry `name` of `parent` as the directory `id` read before (its fd was
   * released to bound the descriptors a walk holds).
   * @throws when it is gone, not a directory, or another directory than the one read
   */
  reopenChild(parent: Reach, name: string, shown: string, id: FileObjectId | undefined): Reach;
  /**
   * Opens entries `names` of a walked directory reached through `reach`, each with `flags` (which must hold
   * O_NOFOLLOW), in one synchronous step: the same as opening each `reach + name`, cheaper where the platform
   * allows. The caller checks what each fd holds and closes it.
   */
  openEntriesSync(reach: string, names: readonly string[], flags: number): EntryOpen[];
  /** How many descriptors this process may hold open, or Infinity where walks hold none. */
  descriptorLimit(): number;
  /**
   * Copies the first `length` bytes of the file open as `from` into the empty file open as `to`, by the kernel where it can
   * (a reflink where the file system has them). `cut: false` may leave more (what the file held past `length` when the copy
   * reopened it), for a caller that writes over them and cuts the file at its own end.
   */
  copyContent(from: number, to: number, length: number, cut?: boolean): Promise<void>;
}

/** The two strategies' names. */
export type StrategyName = "procfd" | "portable";
