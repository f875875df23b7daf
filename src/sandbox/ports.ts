/**
 * The sandbox's two faces, one per client (STYLE 26): the tools reach files by
 * requested path through a `FilePort`, the walkers reach the entries of the
 * directories they hold through a `WalkPort`. `Sandbox` implements both; each
 * caller depends only on the one it uses.
 */
import type { Dirent, Stats } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import type { Ending } from "./append.js";
import type { Copied } from "./copy.js";
import type { Deleted } from "./delete.js";
import type { EntryFacts } from "./directories.js";
import type { FileObjectId } from "./identity.js";
import type { LinkVerdict } from "./lookup.js";
import type { Opened, WalkedResult } from "./open.js";
import type { RewriteEngine, RewriteOptions, Rewritten } from "./rewrite.js";
import type { Written } from "./replace.js";
import type { Listing, OpenedDir, Reach, Read } from "./strategy.js";

/** Whether a tree operation goes into a directory, how it is cancelled, and the entries done so far. */
export interface TreeOptions {
  recursive: boolean;
  signal?: AbortSignal;
  onProgress?: (done: number) => void;
}

/** What a path names that is read whole or walked: a regular file opened, or a directory (its real path). */
export type FileOrDirectory = { kind: "file"; handle: FileHandle; path: string } | { kind: "directory"; path: string };

/** What get_file_info describes: the entry's metadata, and the file open when it is a regular file the server may read. */
export interface Inspected {
  stats: Stats;
  handle?: FileHandle;
}

/** The tools' face: every operation takes a path as the client requested it and resolves it from inside. */
export interface FilePort {
  /** The allowed directories of the call, fixed when it started. */
  readonly allowedDirs: readonly string[];
  /** The real path of `requested` (or the path of a new file in a real parent inside). */
  validate(requested: string): Promise<string>;
  /** `requested` opened as a regular file for reading, and its real path; the caller closes the handle. */
  openFile(requested: string): Promise<{ handle: FileHandle; path: string }>;
  /** `requested` opened as a regular file (the caller closes it), or the real path of the directory it is; one resolution. */
  openFileOrDirectory(requested: string): Promise<FileOrDirectory>;
  /** `requested` opened as a directory, verified inside; the caller closes it. */
  openDirectory(requested: string): Promise<OpenedDir>;
  /** Metadata of `requested`, and the file opened when it is a regular file this server may read; one resolution. */
  inspect(requested: string): Promise<Inspected>;
  /** Creates or atomically replaces the file `requested` with `content`. */
  writeFile(requested: string, content: string, signal?: AbortSignal): Promise<Written>;
  /** Adds `content` at the end of the file `requested` as one change; how it ended before. */
  appendFile(requested: string, content: string, signal?: AbortSignal): Promise<Ending>;
  /** Deletes the entry `requested` (a directory only when empty, or with `recursive`). */
  delete(requested: string, options: TreeOptions): Promise<Deleted>;
  /** Copies the entry `source` to `destination`, never replacing anything there. */
  copy(source: string, destination: string, options: TreeOptions): Promise<Copied>;
  /** Runs `engine` over the file `requested` and, unless a dry run, puts what it wrote in its place. */
  rewrite<T>(requested: string, options: RewriteOptions, engine: RewriteEngine<T>): Promise<Rewritten<T>>;
  /** mkdir -p of `requested`. */
  createDirectory(requested: string): Promise<void>;
  /** Moves the entry `source` to `destination`, never replacing anything there. */
  move(source: string, destination: string, signal?: AbortSignal): Promise<void>;
}

/** The walkers' face: a walk's root, the directories it holds and reopens, and the entries it opens in them. */
export interface WalkPort {
  /** The allowed directories of the call, fixed when it started. */
  readonly allowedDirs: readonly string[];
  /** The allowed directories now (roots may have replaced them since the call started). */
  currentDirs(): readonly string[];
  /** False once the allowed directories were replaced by ones that no longer hold the real path `real`. */
  stillAllowed(real: string): boolean;
  /** A link's target (`real`, as `followLink` found it inside) opened as a regular file inside, its descriptor handed over (or why not, naming `shown`); synchronous. */
  openLinkedSync(real: string, shown: string): WalkedResult;
  /** The entries of a directory opened by `FilePort.openDirectory` (`dir` = its `child("")`). */
  readEntries(dir: string): Promise<Dirent[]>;
  /** The entries of a directory opened by `FilePort.openDirectory`, a bounded batch at a time (a huge directory is never held whole). */
  entryBatches(dir: string): AsyncIterable<Dirent[]>;
  /** Entry `name` of `dir` as a listing shows it; never rejects. */
  entryFacts(dir: string, name: string, isLink: boolean): Promise<EntryFacts>;
  /** A walk's root (a validated path) opened and read; `close` releases it. */
  openWalkRoot(root: string): Promise<{ listing: Listing; close: () => Promise<void> }>;
  /** Entry `name` of a walked directory opened as a regular file; the caller closes it. */
  openWalkedFile(reach: string, name: string, shown: string): Promise<Opened>;
  /**
   * Entries `names` of a walked directory opened as regular files inside, their descriptors handed over (or why not, naming
   * `shownOf(i)`); synchronous. With `unchecked`, those the reach proves inside come unchecked (size -1, no identity): their reader checks.
   */
  openWalkedSync(reach: string, names: readonly string[], shownOf: (i: number) => string, unchecked?: boolean): WalkedResult[];
  /** Entry `name` of a walked directory read as a directory (in the thread pool with `inPool`, else a small one at once); never rejects. */
  readChild(parent: Reach, name: string, shown: string, inPool?: boolean): Promise<Read>;
  /** Lets go of a walked directory's reach. */
  release(read: Reach): void;
  /** Entry `name` of a walked directory reopened as the directory `id` read before; synchronous. */
  reopenChild(parent: Reach, name: string, shown: string, id: FileObjectId | undefined): Reach;
  /** How many descriptors this process may hold open, or Infinity where walks hold none. */
  descriptorLimit(): number;
  /** Where the symlink at `link` (reached through a walked directory) leads, resolved from inside; synchronous, never throws. */
  followLink(link: string, withSize: boolean): LinkVerdict;
}
