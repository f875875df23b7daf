/**
 * The sandbox's public face: requested path → verified, opened object (SPEC §2,
 * §5). A `Sandbox` holds the allowed directories of one call (a Confinement).
 * Each method resolves its path from inside (requested.ts), takes the per-file
 * lock of every file a change names, and runs its operation's module: open.ts,
 * replace.ts (write_file), append.ts, rewrite.ts (the seam edit_file plugs its
 * engine into), mkdir.ts, move.ts, copy.ts, delete.ts, directories.ts (walks
 * and listings). Across processes, each change also holds its entry's swap
 * lock (swap-lock.ts); the server's own temp and lock files are named once
 * (names.ts) and shown by no directory read.
 */
import type { Dirent, Stats } from "node:fs";
import fs, { type FileHandle } from "node:fs/promises";
import path from "node:path";
import { appendText, type Ending } from "./append.js";
import { isPathWithinAllowedDirectories } from "../path-validation.js";
import { Confinement } from "./confinement.js";
import { type Copied, copyEntry } from "./copy.js";
import { type Deleted, deleteEntry } from "./delete.js";
import { type EntryFacts, entryBatches, entryFacts, openWalkRoot, readEntries, release } from "./directories.js";
import { directoryError, errnoCode, SafeFsError } from "./errors.js";
import { followLink, followLinkSync, resolveFromInside, type LinkVerdict, type Resolved } from "./lookup.js";
import { makeDirectory } from "./mkdir.js";
import { moveEntry } from "./move.js";
import { openRegularFile, openWalkedFile, openWalkedSync, statInside, type Opened, type WalkedResult } from "./open.js";
import { availableStrategies } from "./platform/index.js";
import { lockNameOf, tempNameOf } from "./names.js";
import { type Written, writeWhole } from "./replace.js";
import { creatableInside, entryInside, locateInside, validateInside, type Entry, type Located } from "./requested.js";
import { rewriteIn, type RewriteEngine, type RewriteOptions, type Rewritten } from "./rewrite.js";
import type { FileObjectId } from "./identity.js";
import type { Listing, OpenedDir, Reach, Read, StrategyName } from "./strategy.js";
import { type Intent, type LockOwner, lockIsStale, lockTextFor, parseLock } from "./lock-owner.js";
import type { FileOrDirectory, FilePort, Inspected, TreeOptions, WalkPort } from "./ports.js";
import type { SandboxRuntime } from "./runtime.js";

export type { Ending } from "./append.js";
export type { Copied } from "./copy.js";
export type { Deleted } from "./delete.js";
export { walkedEntryFigures } from "./directories.js";
export { isServerEntry, undecodable } from "./names.js";
export { SYSTEM_NAME, WINDOWS } from "./platform/index.js";

export { __testHooks } from "./confinement.js";
export { errnoCode, isDirectoryRefusal, NO_DIRECTORIES, reason, refusalOf } from "./errors.js";
export { sameVersion, versionOf, type FileObjectId, type FileVersion } from "./identity.js";
export type { LinkVerdict } from "./lookup.js";
export type { WalkedOpen, WalkedResult } from "./open.js";
export { otherNamesKeep, otherNamesNote } from "./replace.js";
export { resolveRequestedPathWith, validatePathWith } from "./requested.js";
export type { Written } from "./replace.js";
export type { RewriteEngine, RewriteSource, Rewritten } from "./rewrite.js";
export type { FilePort, WalkPort } from "./ports.js";
export { sandboxRuntime, type SandboxRuntime } from "./runtime.js";
export type { Listing, OpenedDir, Reach, Read, StrategyName } from "./strategy.js";

/** The lock key of a path that need not exist (a move's destination): its parent's real path and its name. */
async function lockKeyOf(target: string): Promise<string> {
  const abs = path.resolve(target);
  try {
    return path.join(await fs.realpath(path.dirname(abs)), path.basename(abs));
  } catch {
    return abs;
  }
}

/** The allowed directories of one call, and every operation confined to them: both ports (ports.ts). */
export class Sandbox implements FilePort, WalkPort {
  protected readonly confinement: Confinement;
  // Directories this call's walks read and reach by path (the portable strategy), by reach: their identity,
  // so that a file opened in one is checked against it instead of by a realpath, whose cost grows with
  // the square of the depth. An entry goes when the walk leaves the directory (`release`).
  private readonly walkedByPath = new Map<string, FileObjectId>();
  private liveChecked: readonly string[] | undefined;
  private liveConfinement: Confinement | undefined;

  /**
   * `runtime` holds the process's strategy and file locks; `allowedDirs` are the call's, fixed when it
   * starts; `current`, when given, tells the server's allowed directories now, which roots from the client
   * may have replaced since (SPEC §2 Roots).
   */
  constructor(
    private readonly runtime: SandboxRuntime,
    readonly allowedDirs: readonly string[],
    private readonly current?: () => readonly string[],
  ) {
    this.confinement = new Confinement(runtime.strategy, allowedDirs, runtime.lockWaits);
  }

  /**
   * True unless the allowed directories were replaced during the call by ones that no longer hold the real
   * path `real`; a walk asks before each step, so it never goes on inside a directory no longer allowed.
   */
  stillAllowed(real: string): boolean {
    const now = this.current?.();
    // The server replaces the array whenever roots change, so the same array means nothing changed.
    if (now === undefined || now === this.allowedDirs) return true;
    if (now !== this.liveChecked) {
      this.liveChecked = now;
      this.liveConfinement = new Confinement(this.runtime.strategy, now, this.runtime.lockWaits);
    }
    return this.liveConfinement!.inside(real);
  }

  /** The allowed directories now: the call's, or what replaced them since it started. */
  currentDirs(): readonly string[] {
    return this.current?.() ?? this.allowedDirs;
  }

  /** The real path of `requested` (or the path of a new file in a real parent inside), resolved from inside. */
  validate(requested: string): Promise<string> {
    return validateInside(requested, this.confinement);
  }

  /** `validate`, with how messages name the path: as given when it leads through a link, never where the link leads. */
  protected locate(requested: string): Promise<Located> {
    return locateInside(requested, this.confinement);
  }

  /** The absolute path of a directory to create, refused when it leads outside. */
  protected creatable(requested: string): Promise<string> {
    return creatableInside(requested, this.confinement);
  }

  /** The entry `requested` names, its parent resolved from inside and its final component not followed. */
  protected entry(requested: string): Promise<Entry> {
    return entryInside(requested, this.confinement);
  }

  /** Opens `requested` as a regular file for reading (no final symlink, no FIFO); the caller closes the handle. */
  async openFile(requested: string): Promise<{ handle: FileHandle; path: string }> {
    const { real, shown } = await this.locate(requested);
    return { handle: await openRegularFile(this.confinement, real, shown), path: real };
  }

  /**
   * `requested` opened as a regular file, or the real path of the directory it is: one resolution either way.
   * Anything else is refused as `openFile` refuses it.
   */
  async openFileOrDirectory(requested: string): Promise<FileOrDirectory> {
    const { real, shown } = await this.locate(requested);
    // A stat that fails says nothing here: the open below words why the path cannot be read.
    if ((await statInside(this.confinement, real, shown).catch(() => undefined))?.isDirectory()) return { kind: "directory", path: real };
    return { kind: "file", handle: await openRegularFile(this.confinement, real, shown), path: real };
  }

  /** Opens `requested` as a directory, verified inside; the caller closes it. */
  async openDirectory(requested: string): Promise<OpenedDir> {
    const real = await this.validate(requested);
    return this.confinement.openDir(real, requested).catch((error: unknown) => {
      throw directoryError(error, requested);
    });
  }

  /**
   * Metadata of `requested` (nothing at its end followed), and the file opened when it is a regular file this
   * server's user may read; one resolution. The caller closes the handle.
   */
  async inspect(requested: string): Promise<Inspected> {
    const { real, shown } = await this.locate(requested);
    const stats = await statInside(this.confinement, real, shown);
    if (!stats.isFile()) return { stats };
    try {
      return { stats, handle: await openRegularFile(this.confinement, real, shown) };
    } catch (error) {
      // The system's permission refusal (a file it may stat but not read): the description stays without the
      // file's contents. A refusal of the sandbox's own (outside, not regular) is never that.
      if (!(error instanceof SafeFsError) && errnoCode(error) === "EACCES") return { stats };
      throw error;
    }
  }

  /** Metadata of `requested` without following anything at its end. */
  async stat(requested: string): Promise<Stats> {
    const { real, shown } = await this.locate(requested);
    return statInside(this.confinement, real, shown);
  }

  /** The entries of a directory opened by `openDirectory` (`dir` = its `child("")`), in readdir order. */
  readEntries(dir: string): Promise<Dirent[]> {
    return readEntries(dir);
  }

  /** The entries of a directory opened by `openDirectory`, in readdir order, a bounded batch at a time (huge directories in flat memory). */
  entryBatches(dir: string): AsyncGenerator<Dirent[]> {
    return entryBatches(dir);
  }

  /**
   * Entry `name` of `dir` as a listing shows it: upstream's stat size, and whether it is a directory (a symlink
   * to one inside is); a link leading outside or dangling, or an entry that cannot be stat'ed, is a file of size 0.
   * Never rejects.
   */
  entryFacts(dir: string, name: string, isLink: boolean): Promise<EntryFacts> {
    return entryFacts(this.confinement, dir, name, isLink);
  }

  /** Creates or atomically replaces the file `requested` with `content`. */
  async writeFile(requested: string, content: string, signal?: AbortSignal): Promise<Written> {
    const { real, shown } = await this.locate(requested);
    return this.runtime.locks.serialised([real], { signal, shown, action: "write" }, () =>
      writeWhole(this.confinement, real, content, signal, shown),
    );
  }

  /** Adds `content` at the end of the file `requested` (created if missing) as one indivisible change; returns how it ended before. */
  async appendFile(requested: string, content: string, signal?: AbortSignal): Promise<Ending> {
    const { real, shown } = await this.locate(requested);
    return this.runtime.locks.serialised([real], { signal, shown, action: "append to" }, () =>
      appendText(this.confinement, real, content, signal, shown),
    );
  }

  /** Deletes the entry `requested` (a symlink itself); a directory only when empty, or with `recursive` everything in it. */
  async delete(requested: string, options: TreeOptions): Promise<Deleted> {
    const entry = await this.entry(requested);
    return this.runtime.locks.serialised([entry.path], { signal: options.signal, shown: requested, action: "delete" }, () =>
      deleteEntry(this.confinement, entry.path, requested, { ...options, wantsDir: entry.wantsDir }),
    );
  }

  /** Copies the entry `source` (a symlink as a link) to `destination`, never replacing anything there; a directory only with `recursive`. */
  async copy(source: string, destination: string, options: TreeOptions): Promise<Copied> {
    const from = await this.entry(source);
    const to = await this.entry(destination);
    return this.runtime.locks.serialised(
      [from.path, await lockKeyOf(to.path)],
      { signal: options.signal, shown: destination, action: `copy ${source} to` },
      () =>
        copyEntry(this.confinement, from.path, to.path, {
          ...options,
          source,
          destination,
          sourceIsDir: from.wantsDir,
          destinationIsDir: to.wantsDir,
        }),
    );
  }

  /**
   * Runs `engine` over the regular file `requested` and, unless a dry run, puts what it wrote in the file's
   * place (rewrite.ts); returns the engine's report and the bytes another process appended meanwhile that were kept.
   */
  async rewrite<T>(requested: string, options: RewriteOptions, engine: RewriteEngine<T>): Promise<Rewritten<T>> {
    const { real, shown } = await this.locate(requested);
    return this.runtime.locks.serialised([real], { signal: options.signal, shown, action: "edit" }, () =>
      rewriteIn(this.confinement, real, options, engine, shown),
    );
  }

  /** mkdir -p of `requested`; every existing ancestor is checked by real path as it is passed through. */
  async createDirectory(requested: string): Promise<void> {
    await makeDirectory(this.confinement, await this.creatable(requested));
  }

  /** Moves the entry `source` (a symlink itself, like `mv`) to `destination`, never replacing anything there. */
  async move(source: string, destination: string, signal?: AbortSignal): Promise<void> {
    const from = await this.entry(source);
    const to = await this.entry(destination);
    const given = { source, destination, sourceIsDir: from.wantsDir, destinationIsDir: to.wantsDir };
    // Both ends locked, so no write, edit or move of either name in this server interleaves.
    await this.runtime.locks.serialised([from.path, await lockKeyOf(to.path)], { signal, shown: destination, action: `move ${source} to` }, () =>
      moveEntry(this.confinement, from.path, to.path, given, signal),
    );
  }

  /**
   * Opens and reads a walk's root (an already validated path); `close` releases it.
   * @throws when `root` cannot be opened or read, or is outside the allowed directories
   */
  openWalkRoot(root: string): Promise<{ listing: Listing; close: () => Promise<void> }> {
    return openWalkRoot(this.confinement, root);
  }

  /** Opens entry `name` of a walked directory (reached through `reach`) as a regular file; the caller closes it. */
  openWalkedFile(reach: string, name: string, shown: string): Promise<Opened> {
    return openWalkedFile(this.confinement, reach, name, shown, this.walkedByPath.get(reach));
  }

  /**
   * Opens entries `names` of a walked directory (reached through `reach`), each a regular file inside, and hands their descriptors over;
   * synchronous. With `unchecked`, one the reach proves inside is handed over without its fstat (see openWalkedSync).
   */
  openWalkedSync(reach: string, names: readonly string[], shownOf: (i: number) => string, unchecked = false): WalkedResult[] {
    return openWalkedSync(this.confinement, reach, names, shownOf, this.walkedByPath.get(reach), unchecked);
  }

  /**
   * Opens a link's target `real` (found inside by `followLink`) as a regular file inside and hands its descriptor
   * over; synchronous. Opened by path and checked by what was opened, as a walked file reached by path is: a
   * component swapped since the lookup for a link leading outside is refused, never read.
   */
  openLinkedSync(real: string, shown: string): WalkedResult {
    const dir = path.dirname(real);
    const reach = dir.endsWith(path.sep) ? dir : dir + path.sep;
    return openWalkedSync(this.confinement, reach, [path.basename(real)], () => shown, this.walkedByPath.get(reach))[0] as WalkedResult;
  }

  /**
   * Reads entry `name` of a walked directory as a directory; never rejects. Its reach holds until `release`.
   * `inPool`: read ahead of the walk's need, in the thread pool where that lets it overlap the walk.
   */
  async readChild(parent: Reach, name: string, shown: string, inPool = false): Promise<Read> {
    const read = await this.runtime.strategy.readChild(parent, name, shown, inPool);
    if ("entries" in read && read.fd < 0 && read.id !== undefined) this.walkedByPath.set(read.reach, read.id);
    return read;
  }

  /** Lets go of a walked directory's reach: its fd is closed, once, and a reach by path forgotten. */
  release(read: Reach): void {
    if (read.fd < 0) this.walkedByPath.delete(read.reach);
    release(read);
  }

  /**
   * Reopens entry `name` of a walked directory (held as `parent`) as the directory `id` read before; synchronous.
   * @throws when it is gone, not a directory, or another one than the directory read
   */
  reopenChild(parent: Reach, name: string, shown: string, id: FileObjectId | undefined): Reach {
    return this.runtime.strategy.reopenChild(parent, name, shown, id);
  }

  /** How many descriptors this process may hold open, or Infinity where walks hold none. */
  descriptorLimit(): number {
    return this.runtime.strategy.descriptorLimit();
  }

  /** Where the symlink at `link` (reached through a walked directory) leads, resolved from inside; never rejects. */
  followLink(link: string, withSize: boolean): LinkVerdict {
    return followLinkSync(link, withSize, this.confinement);
  }
}

/** A Sandbox that takes every path as already validated, so tests reach the checks behind validation. */
class Unvalidated extends Sandbox {
  override validate(requested: string): Promise<string> {
    return Promise.resolve(requested);
  }

  protected override locate(requested: string): Promise<Located> {
    return Promise.resolve({ real: requested, shown: requested });
  }

  protected override creatable(requested: string): Promise<string> {
    return Promise.resolve(requested);
  }

  protected override entry(requested: string): Promise<Entry> {
    return Promise.resolve({ path: requested, wantsDir: false });
  }
}

/** Test-only: what tests legitimately reach behind the public face; not part of the tool API. */
export const __testing = {
  /** A Sandbox over `dirs` whose operations take their paths as already validated. */
  unvalidated: (runtime: SandboxRuntime, dirs: readonly string[]): Sandbox => new Unvalidated(runtime, dirs),
  /** The name of the cross-process swap lock file beside entry `name`. */
  swapLockName: (name: string): string => lockNameOf(name),
  /** The name of the temp file (or temp tree) beside entry `name`. */
  tempName: (name: string): string => tempNameOf(name),
  /** Whether a lock naming `text` and `ageMs` old is left by a holder that is gone, with `runs` as the liveness probe. */
  lockIsStale: (text: string, ageMs: number, runs?: (o: LockOwner) => boolean): boolean => lockIsStale(parseLock(text)?.owner, ageMs, runs),
  /** The text of a swap lock held by process `pid` of this machine, as that process would write it. */
  lockTextFor: (pid: number, intent?: Intent): string => lockTextFor(pid, intent),
  /** Resolution of absolute path `absolute` from inside `dirs`, one component at a time, as validation runs it. */
  resolveFromInside: (absolute: string, dirs: readonly string[]): Promise<Resolved> =>
    resolveFromInside(absolute, { inside: (real) => isPathWithinAllowedDirectories(real, dirs) }),
  /** Where the link at `link` leads as seen from inside `dirs`, by each driver of the one resolution: through the thread pool, and now. */
  followLinkBoth: async (link: string, dirs: readonly string[]): Promise<{ async: LinkVerdict; sync: LinkVerdict }> => {
    const inside = { inside: (real: string) => isPathWithinAllowedDirectories(real, dirs) };
    return { async: await followLink(link, true, inside), sync: followLinkSync(link, true, inside) };
  },
  /** The strategies this platform can run (both on Linux, portable elsewhere). */
  strategies: (): StrategyName[] => availableStrategies(),
};
