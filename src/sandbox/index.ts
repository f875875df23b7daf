/**
 * The sandbox's public face: requested path → verified, opened object
 * (SPEC §2, §5). A `Sandbox` holds the allowed directories of one call; every
 * operation is checked against them and acts through directories opened and
 * verified once, with the platform strategy chosen once (strategy.ts).
 */
import type { BigIntStats, Stats } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { appendFileSafely } from "./append.js";
import { openDir, openWalkRoot } from "./dirs.js";
import { directoryError } from "./errors.js";
import { openRegularFile, openWalkedFile, statInside, writeFileSafely } from "./files.js";
import { creatableInside, followLinkInside, validateInside, type LinkVerdict } from "./inside.js";
import { walkPath } from "./components.js";
import { heldLockCount } from "./locks.js";
import { makeDirectorySafely, moveEntry, moveNoClobber } from "./move.js";
import { rewriteFile, type RewriteEngine, type Rewritten } from "./rewrite.js";
import { availableStrategies, strategy, useStrategy } from "./platform.js";
import type { Listing, OpenedDir, Read, StrategyName } from "./strategy.js";
import { lockNameOf } from "./swap.js";
import { readWalkedSmallFile, type WalkedRead } from "./walked-read.js";

export { __testHooks, release } from "./dirs.js";
export { errnoCode, reason, SafeFsError } from "./errors.js";
export type { LinkVerdict } from "./inside.js";
export type { RewriteEngine, RewriteSink, RewriteSource, Rewritten } from "./rewrite.js";
export { sameFile, sameVersion, versionOf, type FileObjectId, type FileVersion } from "./identity.js";
export { resolveRequestedPathWith, validatePathWith, type PathIO } from "./resolve.js";
export type { StrategyName } from "./strategy.js";
export type { LinkTarget, Listing, OpenedDir, Read } from "./strategy.js";
export type { WalkedRead } from "./walked-read.js";

/** The allowed directories of one call, and every operation confined to them. */
export class Sandbox {
  constructor(readonly allowedDirs: readonly string[]) {}

  /** The real path of `requested` (or the path of a new file in a real parent inside), resolved from inside. */
  validate(requested: string): Promise<string> {
    return validateInside(requested, this.allowedDirs);
  }

  /** Opens `requested` as a regular file for reading (no final symlink, no FIFO); the caller closes the handle. */
  async openFile(requested: string): Promise<{ handle: FileHandle; path: string }> {
    const real = await this.validate(requested);
    return { handle: await openRegularFile(real, this.allowedDirs), path: real };
  }

  /** Opens `requested` as a directory, verified inside; the caller closes it. */
  async openDirectory(requested: string): Promise<OpenedDir> {
    const real = await this.validate(requested);
    return openDir(real, this.allowedDirs, requested).catch((error: unknown) => {
      throw directoryError(error, requested);
    });
  }

  /** Metadata of `requested` without following anything at its end. */
  async stat(requested: string): Promise<Stats> {
    return statInside(await this.validate(requested), this.allowedDirs);
  }

  /** Creates or atomically replaces the file `requested` with `content`; with `append`, adds it at the end instead. */
  async writeFile(requested: string, content: string, append = false): Promise<void> {
    const real = await this.validate(requested);
    await (append ? appendFileSafely : writeFileSafely)(real, content, this.allowedDirs);
  }

  /**
   * Runs `engine` over the regular file `requested` and, unless `dryRun`, puts what it wrote in the file's place
   * (rewrite.ts); returns the engine's report and the bytes another process appended meanwhile that were kept.
   */
  async rewrite<T>(requested: string, options: { dryRun: boolean; signal?: AbortSignal }, engine: RewriteEngine<T>): Promise<Rewritten<T>> {
    return rewriteFile(await this.validate(requested), this.allowedDirs, options, engine);
  }

  /** mkdir -p of `requested`; every existing ancestor is checked by real path as it is walked through. */
  async createDirectory(requested: string): Promise<void> {
    await makeDirectorySafely(await creatableInside(requested, this.allowedDirs), this.allowedDirs);
  }

  /** Moves the entry `source` (a symlink itself, like `mv`) to `destination`, never replacing anything there. */
  move(source: string, destination: string): Promise<void> {
    return moveEntry(source, destination, this.allowedDirs);
  }

  /**
   * Opens and reads a walk's root (an already validated path); `close` releases it.
   * @throws when `root` cannot be opened or read, or is outside the allowed directories
   */
  openWalkRoot(root: string): Promise<{ listing: Listing; close: () => Promise<void> }> {
    return openWalkRoot(root, this.allowedDirs);
  }

  /** Opens entry `name` of a walked directory (reached through `reach`) as a regular file; the caller closes it. */
  openWalkedFile(reach: string, name: string, shown: string): Promise<{ handle: FileHandle; stat: BigIntStats }> {
    return openWalkedFile(reach, name, shown, this.allowedDirs);
  }

  /** Reads entry `name` of a walked directory (reached through `reach`) into `into` if it is a regular file shorter than `into`; synchronous. */
  readWalkedSmallFile(reach: string, name: string, shown: string, into: Buffer): WalkedRead {
    return readWalkedSmallFile(reach, name, shown, this.allowedDirs, into);
  }

  /** Reads entry `name` of a walked directory as a directory; never rejects. */
  readChild(parent: Listing, name: string, shown: string): Promise<Read> {
    return strategy().readChild(parent, name, shown);
  }

  /** Where the symlink at `link` (reached through a walked directory) leads, resolved from inside; never rejects. */
  followLink(link: string, withSize: boolean): Promise<LinkVerdict> {
    return followLinkInside(link, withSize, this.allowedDirs);
  }
}

/** A Sandbox that takes every path as already validated, so tests reach the checks behind validation. */
class Unvalidated extends Sandbox {
  override validate(requested: string): Promise<string> {
    return Promise.resolve(requested);
  }

  override createDirectory(target: string): Promise<void> {
    return makeDirectorySafely(target, this.allowedDirs);
  }

  override move(source: string, destination: string): Promise<void> {
    return moveNoClobber(source, destination, this.allowedDirs);
  }
}

/** Test-only: what tests legitimately reach behind the public face; not part of the tool API. */
export const __testing = {
  /** A Sandbox over `dirs` whose operations take their paths as already validated. */
  unvalidated: (dirs: readonly string[]): Sandbox => new Unvalidated(dirs),
  /** How many per-file locks of this server are held or awaited (0 once every call has ended). */
  heldLockCount: (): number => heldLockCount(),
  /** The name of the cross-process swap lock file beside entry `name`. */
  swapLockName: (name: string): string => lockNameOf(name),
  /** Resolution of absolute path `absolute` from inside `dirs`, one component at a time, as validation runs it. */
  resolveFromInside: (absolute: string, dirs: readonly string[]) => walkPath(absolute, dirs),
  /** The strategies this platform can run (both on Linux, portable elsewhere). */
  strategies: (): StrategyName[] => availableStrategies(),
  /** The name of the strategy in use. */
  strategyName: (): StrategyName => strategy().name,
  /** Switches the strategy (suites run under each); throws when `name` cannot run here. */
  useStrategy: (name: StrategyName): void => useStrategy(name),
};
