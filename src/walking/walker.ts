/**
 * The depth-first directory walker shared by directory_tree, search_files and
 * content search: readdir order, never follows symlinks, holds one readdir
 * result per level of the current path (plus a few read ahead) in a bounded
 * number of descriptors (walk-stack.ts), so a tree of any depth is walked
 * whole; survives unreadable subdirectories; honours cancellation and
 * progress; and stops when the allowed directories change under it so that
 * the walk's directory is no longer allowed. Directories are reached through
 * the sandbox's platform strategy: on Linux through the fd of the directory actually read.
 */
import type { Dirent } from "node:fs";
import path from "node:path";
import { escapeControls, type Shown } from "../kernel/escape.js";
import type { WalkPort } from "../sandbox/index.js";
import type { DescriptorBudget } from "./descriptors.js";
import { SkipLog } from "./skip-log.js";
import { DirStack, type Frame } from "./walk-stack.js";

/** What every walker needs besides its root: the call's sandbox, the runtime's descriptor budget, and its signal/progress hooks. */
export interface WalkOptions {
  sandbox: WalkPort;
  descriptors: DescriptorBudget;
  signal?: AbortSignal;
  onProgress?: (entriesVisited: number) => void;
  /**
   * Entries deeper than this (1 = the root's own entries) are not listed: a directory at this depth is passed
   * to `enter`, read only to learn whether it has entries not excluded, and left with that answer (`leave`'s `cut`).
   */
  maxDepth?: number;
  /**
   * Whether the subdirectories it reads ahead are read in the thread pool, beside the walk (the default). False
   * where the call's other threads keep the cores busy (a content search's scan workers): a read in the pool then
   * waited for a core and for the walk's next turn, and small ones are read at once instead.
   */
  poolReads?: boolean;
  /**
   * Told at each turn a content search's walk gives the event loop (file-walk.ts): the runtime settles its heap
   * there, as after a call, so a search of a large tree does not hold its garbage to the end.
   */
  onTurn?: () => void;
}

/** What a visitor may ask, during `enter`, of the entries that follow the one entered in its directory. */
export interface Upcoming {
  /**
   * Up to `max` of the next entries (within SCAN_AHEAD of it) that the walk will enter and not descend into, by the
   * walk's own judgement (judged once, as the walk judges every entry), and for which `take` (given each one's path
   * relative to the root) is true.
   */
  leavesAfter(max: number, take: (entry: Dirent, rel: string) => boolean): Dirent[];
}

/** Callbacks that turn a walk into output; entries arrive in readdir order, depth first. */
export interface WalkVisitor {
  /** True when the entry at `rel` (relative to the root) is left out and not descended into; may run ahead of `enter`, so it must be pure. */
  excluded(rel: string, entry?: Dirent): boolean;
  /**
   * Called once a directory (`rel`, "" for the root) has been read and before any of its entries is
   * judged; `reach + name` reaches an entry through the directory actually read (valid only until the
   * returned promise settles). Lets a visitor load per-directory rules such as `.gitignore`.
   */
  opened?(rel: string, entries: readonly Dirent[], reach: string): void | Promise<void>;
  /**
   * Called for each entry not excluded; a directory's children follow, then `leave`. `reach + entry.name`
   * reaches a symlink or directory entry through the directory actually read (valid only during the call);
   * walkTree always passes it, but a visitor wrapping another may leave it out.
   */
  enter(dir: string, entry: Dirent, rel: string, depth: number, reach?: string, upcoming?: Upcoming): void | Promise<void>;
  /** True when `enter` never reads its `rel` (directory_tree): the walker then makes it only for a directory it goes into. */
  ignoresRel?: boolean;
  /**
   * Called after the last child of a directory passed to `enter` (also when it was unreadable); for a directory
   * at maxDepth, whose children are never entered, `cut` says whether it has any entry not excluded.
   */
  leave(depth: number, cut?: { hasEntries: boolean }): void;
}

const ABORT_EVERY = 256;
const PROGRESS_EVERY = 1000;
// Long synchronous runs (one huge directory, costly exclusion rules) would starve the event loop, so
// cancellation requests, progress notifications and other calls could not get through: a turn is
// given every so many entries, and sooner when the clock says the walk held the loop for a while.
const YIELD_EVERY = 2048;
const CLOCK_EVERY = 32;
const TURN_MS = 10;
// Entries judged per read-ahead scan, so one huge directory is not judged in a single
// synchronous burst between cancellation checks.
const SCAN_AHEAD = 256;

/** Counts visited entries, checks cancellation and reports progress at fixed intervals. */
export class Ticker {
  visited = 0;
  private lastTurn = performance.now();

  constructor(private readonly opts: WalkOptions) {}

  /** Throws the signal's reason if the call was cancelled. */
  check(): void {
    this.opts.signal?.throwIfAborted();
  }

  /** Counts one entry; returns a promise to await when it is time to let the event loop run. */
  tick(): Promise<void> | undefined {
    const n = ++this.visited;
    if (n % ABORT_EVERY === 0) this.check();
    if (n % PROGRESS_EVERY === 0) this.opts.onProgress?.(n);
    if (n % YIELD_EVERY === 0 || (n % CLOCK_EVERY === 0 && performance.now() - this.lastTurn >= TURN_MS)) {
      return new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
        this.lastTurn = performance.now();
        this.check();
      });
    }
    return undefined;
  }
}

/** Test-only hooks into a walk; not part of the tool API. */
export const __walkHooks: {
  /** Runs before a subdirectory (its shown path) is read, so a test can change things around a walk at that point. */
  beforeDirectory?: (dir: string) => void | Promise<void>;
} = {};

/** The `excluded` of a visitor that leaves nothing out: the walker, seeing it, builds no relative path to ask it with. */
export const excludesNothing = (): boolean => false;

const UNKNOWN = 0;
const OMIT = 1;
const LEAF = 2;
const DESCEND = 3;

// `path.join(dir, name)` and `path.relative(root, …)` without their normalising: names hold no separator.
export const joinDir = (dir: string, name: string): string => (dir.endsWith(path.sep) ? dir + name : dir + path.sep + name);

/**
 * The shown paths of a walk's entries, each directory escaped once for all of its entries (escaping
 * piecewise equals escaping whole): escaping each whole path was a twentieth of a content search's main thread.
 */
export class ShownPaths {
  private lastDir: string | undefined;
  private shownDir = "" as Shown;

  /** `dir` shown, ending in a separator. */
  dir(dir: string): Shown {
    if (dir !== this.lastDir) {
      this.lastDir = dir;
      this.shownDir = escapeControls(dir.endsWith(path.sep) ? dir : dir + path.sep);
    }
    return this.shownDir;
  }

  /** Entry `name` of `dir` shown, as `escapeControls(joinDir(dir, name))`. */
  entry(dir: string, name: string): Shown {
    return (this.dir(dir) + escapeControls(name)) as Shown;
  }
}
const joinRel = (rel: string, name: string): string => (rel === "" ? name : rel + path.sep + name);

/** The error that ends a walk whose directory is no longer allowed (SPEC §2 Roots). */
function rootsChanged(dir: string, now: readonly string[]): Error {
  const err = new Error(
    `Allowed directories changed during the call; ${escapeControls(dir)} is no longer allowed (now: ` +
      `${now.map(escapeControls).join(", ") || "none"}). Nothing of this walk is returned: call again.`,
  );
  return Object.assign(err, { code: "EACCES" });
}

class Walk implements Upcoming {
  readonly ticker: Ticker;
  readonly skipped = new SkipLog();
  private readonly maxDepth: number;
  private readonly sandbox: WalkPort;
  // The shown path and the path relative to the root of the top frame; a frame's are prefixes of these.
  private dir: string;
  private rel = "";

  constructor(
    private readonly visitor: WalkVisitor,
    opts: WalkOptions,
    private readonly stack: DirStack,
    root: string,
  ) {
    this.ticker = new Ticker(opts);
    this.maxDepth = opts.maxDepth ?? Infinity;
    this.sandbox = opts.sandbox;
    this.dir = root;
  }

  /** The shown path of `frame`, one of the current path's directories. */
  shownOf(frame: Frame): string {
    return this.dir.slice(0, frame.pathLength);
  }

  private verdict(frame: Frame, i: number): number {
    if (frame.verdicts[i] === UNKNOWN) {
      const entry = frame.entries[i]!;
      // A directory at the cut is still opened, only to tell an empty one from one with entries.
      const descends = frame.depth < this.maxDepth;
      // A path built for every entry only to be told "no" was a twentieth of a wide walk's main thread.
      const omitted = this.visitor.excluded !== excludesNothing && this.visitor.excluded(joinRel(this.rel, entry.name), entry);
      frame.verdicts[i] = omitted ? OMIT : entry.isDirectory() && descends ? DESCEND : LEAF;
    }
    return frame.verdicts[i]!;
  }

  leavesAfter(max: number, take: (entry: Dirent, rel: string) => boolean): Dirent[] {
    const top = this.stack.top;
    const found: Dirent[] = [];
    const stop = Math.min(top.entries.length, top.next + SCAN_AHEAD);
    for (let i = top.next; i < stop && found.length < max; i++) {
      const entry = top.entries[i]!;
      if (this.verdict(top, i) === LEAF && take(entry, joinRel(this.rel, entry.name))) found.push(entry);
    }
    return found;
  }

  private readAhead(frame: Frame, from: number): void {
    frame.ahead = Math.max(frame.ahead, from);
    const stop = Math.min(frame.entries.length, from + SCAN_AHEAD);
    for (; frame.ahead < stop; frame.ahead++) {
      const i = frame.ahead;
      if (this.verdict(frame, i) !== DESCEND) continue;
      // Asked only for a subdirectory: asking makes the directories above let go of what they read ahead.
      if (!this.stack.mayReadAhead(frame)) return;
      const name = frame.entries[i]!.name;
      this.stack.readAhead(frame, i, name, joinDir(this.dir, name));
    }
  }

  // The allowed directories may have been replaced since `frame` was last found in them: ask again.
  private checkAllowed(frame: Frame, dir: string): void {
    const now = this.sandbox.currentDirs();
    if (now === frame.allowedUnder) return;
    if (!this.sandbox.stillAllowed(dir)) throw rootsChanged(dir, now);
    frame.allowedUnder = now;
  }

  /** Walks from the root's listing (its reach held by the caller) until every frame is left. */
  async run(rootEntries: Dirent[], rootReach: string): Promise<void> {
    const root = this.stack.push({ entries: rootEntries, reach: rootReach, fd: -1 }, "", this.dir.length);
    this.checkAllowed(root, this.dir);
    await this.visitor.opened?.("", rootEntries, rootReach);
    while (this.stack.size > 0) {
      const top = this.stack.top;
      if (top.depth >= this.maxDepth) {
        const hasEntries = !top.lost && top.entries.some((_, i) => this.verdict(top, i) !== OMIT);
        this.leave({ hasEntries });
        continue;
      }
      if (top.lost || top.next >= top.entries.length) {
        this.leave();
        continue;
      }
      const i = top.next++;
      const pause = this.ticker.tick();
      if (pause) await pause;
      this.checkAllowed(top, this.dir);
      const v = this.verdict(top, i);
      if (v === OMIT) continue;
      // Held, as it mostly is, it needs no await: a turn per entry cost a tenth of a wide walk.
      let reach = top.reach;
      if (reach === undefined) {
        try {
          reach = await this.stack.reach(top);
        } catch (error) {
          this.skipped.add(escapeControls(this.dir), error);
          continue;
        }
      }
      // Kept topped up as the walk goes, so the next subdirectories are always being read in the thread pool.
      if (this.stack.wantsAhead(top)) this.readAhead(top, i + 1);
      const entry = top.entries[i]!;
      // A path made for every entry only to be ignored was a twentieth of directory_tree's main thread.
      const childRel = v === DESCEND || !this.visitor.ignoresRel ? joinRel(this.rel, entry.name) : "";
      const entered = this.visitor.enter(this.dir, entry, childRel, top.depth, reach, this);
      if (entered) await entered;
      if (v === DESCEND) await this.descend(top, i, entry.name, childRel);
    }
  }

  private async descend(top: Frame, i: number, name: string, childRel: string): Promise<void> {
    const childDir = joinDir(this.dir, name);
    await __walkHooks.beforeDirectory?.(childDir);
    // Asked again before the read: a directory no longer allowed is not even read.
    this.checkAllowed(top, this.dir);
    const read = await this.stack.child(i, name, childDir);
    if ("error" in read) {
      this.skipped.add(escapeControls(childDir), read.error);
      // At the cut, an unreadable directory counts as empty, like any unreadable one.
      this.visitor.leave(top.depth, top.depth + 1 >= this.maxDepth ? { hasEntries: false } : undefined);
      return;
    }
    const frame = this.stack.push(read, name, childDir.length);
    this.dir = childDir;
    this.rel = childRel;
    this.checkAllowed(frame, childDir);
    this.ticker.check();
    await this.visitor.opened?.(childRel, read.entries, read.reach);
  }

  // Leaves the top frame: its parent becomes the top, and the visitor hears that the directory ended.
  private leave(cut?: { hasEntries: boolean }): void {
    const frame = this.stack.pop();
    if (this.stack.size === 0) return;
    this.dir = this.dir.slice(0, this.stack.top.pathLength);
    this.rel = this.rel.length > frame.name.length ? this.rel.slice(0, this.rel.length - frame.name.length - path.sep.length) : "";
    this.visitor.leave(frame.depth - 1, cut);
  }
}

/**
 * Walks `root` depth first, feeding `visitor`; subdirectories that cannot be
 * read count as empty and are returned in the skip log. The root is opened
 * once and verified to be inside the sandbox; every descriptor is
 * closed before this returns or throws.
 * @throws when `root` cannot be opened or read (naming it), is outside the allowed directories, when
 * the allowed directories changed during the walk so that it is no longer inside them, or the signal's
 * reason when cancelled
 */
export async function walkTree(root: string, visitor: WalkVisitor, opts: WalkOptions): Promise<SkipLog> {
  opts.signal?.throwIfAborted();
  const { listing, close } = await opts.sandbox.openWalkRoot(root);
  const share = opts.descriptors.takeShare(opts.sandbox.descriptorLimit());
  let walk: Walk | undefined;
  const stack = new DirStack(opts.sandbox, share.count, (frame) => walk!.shownOf(frame), opts.poolReads);
  walk = new Walk(visitor, opts, stack, root);
  try {
    walk.ticker.check();
    await walk.run(listing.entries, listing.reach);
  } finally {
    try {
      await stack.dispose();
    } finally {
      share.giveBack();
      await close();
    }
  }
  return walk.skipped;
}
