/**
 * The depth-first directory walker shared by directory_tree and search_files:
 * readdir order, never follows symlinks, holds one readdir result per level
 * (plus a few prefetched siblings), survives unreadable subdirectories, and
 * honours cancellation and progress. Directories are reached through the
 * sandbox's platform strategy: on Linux through the fd of the directory actually read.
 */
import type { Dirent } from "node:fs";
import path from "node:path";
import { formatCount } from "../bounded.js";
import type { TextSink } from "../bounded.js";
import { escapeControls, type Shown } from "../escape.js";
import { release, type Listing, type Read, type Sandbox } from "../sandbox/index.js";

/** What every walker needs besides its root: the call's sandbox and its signal/progress hooks. */
export interface WalkOptions {
  sandbox: Sandbox;
  signal?: AbortSignal;
  onProgress?: (entriesVisited: number) => void;
  /** Entries deeper than this (1 = the root's own entries) are not read: directories at this depth are passed to `enter` but not descended (no `leave`). */
  maxDepth?: number;
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
  enter(dir: string, entry: Dirent, rel: string, depth: number, reach?: string): void | Promise<void>;
  /** Called after the last child of a directory passed to `enter` (also when it was unreadable). */
  leave(depth: number): void;
}

const ABORT_EVERY = 256;
const PROGRESS_EVERY = 1000;
// Long synchronous runs (one huge directory) would starve the event loop, so
// cancellation requests and progress notifications could not get through.
const YIELD_EVERY = 2048;
// Sequential readdir costs ~4x `find` in thread-pool round trips; reading a few
// upcoming sibling directories ahead brings it near 1.5x (SPEC §6).
const PREFETCH_DIRS = 8;
// Stops prefetching while this many prefetched entries wait to be walked, so
// wide trees cannot pile up memory ahead of the walk.
const PREFETCH_ENTRY_BUDGET = 50_000;
// Entries examined per look-ahead scan, so one huge directory is not scanned
// in a single synchronous burst between cancellation checks.
const SCAN_AHEAD = 1024;
const NOTE_PATHS = 10;

/** Counts visited entries, checks cancellation and reports progress at fixed intervals. */
export class Ticker {
  visited = 0;

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
    if (n % YIELD_EVERY === 0) {
      return new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.check());
    }
    return undefined;
  }
}

/** Directories that could not be read during a walk, for the note appended after the output. */
export class SkipLog {
  private readonly shown: string[] = [];
  count = 0;

  /** Records an unreadable path (as shown) with the error's code. */
  add(p: Shown, error: unknown): void {
    this.count++;
    if (this.shown.length < NOTE_PATHS) {
      const code = (error as NodeJS.ErrnoException | undefined)?.code ?? (error as Error | undefined)?.name ?? "error";
      this.shown.push(`${p} (${escapeControls(code)})`);
    }
  }

  /**
   * Appends `\n\n[Skipped N unreadable entries: …]` to `sink`, only when something was skipped, and
   * tells the sink the count, so a cut that hides the note still states it (SPEC §13).
   */
  appendNote(sink: TextSink): void {
    if (this.count === 0) return;
    sink.noteSkipped(this.count);
    const more = this.count - this.shown.length;
    const noun = this.count === 1 ? "entry" : "entries";
    const tail = more > 0 ? `, and ${formatCount(more)} more` : "";
    sink.append(`\n\n[Skipped ${formatCount(this.count)} unreadable ${noun}: ${this.shown.join(", ")}${tail}]`);
  }
}

const UNKNOWN = 0;
const OMIT = 1;
const LEAF = 2;
const DESCEND = 3;

// Prefetched directories hold an fd each until walked, so their number is bounded over the whole
// walk, not only per level, or a deep tree could run out of descriptors.
const PREFETCH_DIR_BUDGET = 128;

// Same text as path.relative(root, path.join(dir, name)): names never contain a separator.
function joinRel(rel: string, name: string): string {
  return rel === "" ? name : rel + path.sep + name;
}

class Walk {
  readonly ticker: Ticker;
  readonly skipped = new SkipLog();
  private prefetchedEntries = 0;
  private prefetchedDirs = 0;
  private readonly maxDepth: number;

  constructor(
    private readonly visitor: WalkVisitor,
    private readonly opts: WalkOptions,
  ) {
    this.ticker = new Ticker(opts);
    this.maxDepth = opts.maxDepth ?? Infinity;
  }

  /** Walks the entries of `listing` (the directory `dir`), then closes it. */
  async dir(dir: string, rel: string, depth: number, listing: Listing): Promise<void> {
    const { entries } = listing;
    const pending = new Map<number, Promise<Read>>();
    try {
      this.ticker.check();
      const loading = this.visitor.opened?.(rel, entries, listing.reach);
      if (loading) await loading;
      const descends = depth + 1 < this.maxDepth;
      const verdicts = new Uint8Array(entries.length);
      const verdict = (i: number): number => {
        if (verdicts[i] === UNKNOWN) {
          const entry = entries[i]!;
          verdicts[i] = this.visitor.excluded(joinRel(rel, entry.name), entry) ? OMIT : entry.isDirectory() && descends ? DESCEND : LEAF;
        }
        return verdicts[i]!;
      };
      let ahead = 0;
      const prefetch = (from: number): void => {
        ahead = Math.max(ahead, from);
        const stop = Math.min(entries.length, from + SCAN_AHEAD);
        while (
          ahead < stop &&
          pending.size < PREFETCH_DIRS &&
          this.prefetchedDirs < PREFETCH_DIR_BUDGET &&
          this.prefetchedEntries < PREFETCH_ENTRY_BUDGET
        ) {
          if (verdict(ahead) === DESCEND) {
            const name = entries[ahead]!.name;
            this.prefetchedDirs++;
            const read = this.opts.sandbox.readChild(listing, name, path.join(dir, name)).then((r) => {
              if ("entries" in r) this.prefetchedEntries += r.entries.length;
              return r;
            });
            pending.set(ahead, read);
          }
          ahead++;
        }
      };
      prefetch(0);
      for (let i = 0; i < entries.length; i++) {
        const pause = this.ticker.tick();
        if (pause) await pause;
        if (i >= ahead) prefetch(i);
        const v = verdict(i);
        if (v === OMIT) continue;
        const entry = entries[i]!;
        const childRel = joinRel(rel, entry.name);
        const entered = this.visitor.enter(dir, entry, childRel, depth, listing.reach);
        if (entered) await entered;
        if (v !== DESCEND) continue;
        const childDir = path.join(dir, entry.name);
        const early = pending.get(i);
        if (early) {
          pending.delete(i);
          this.prefetchedDirs--;
        }
        prefetch(i + 1);
        const read = await (early ?? this.opts.sandbox.readChild(listing, entry.name, childDir));
        if ("error" in read) {
          this.skipped.add(escapeControls(childDir), read.error);
        } else {
          if (early) this.prefetchedEntries -= read.entries.length;
          await this.dir(childDir, childRel, depth + 1, read);
        }
        this.visitor.leave(depth);
      }
    } finally {
      // Only a cancelled walk leaves prefetched directories behind, their reads perhaps still
      // under way: they settle first, so that every fd they opened is closed here.
      if (pending.size > 0) {
        this.prefetchedDirs -= pending.size;
        for (const read of await Promise.all(pending.values())) release(read);
      }
      release(listing);
    }
  }
}

/**
 * Walks `root` depth first, feeding `visitor`; subdirectories that cannot be
 * read count as empty and are returned in the skip log. The root is opened
 * once and verified to be inside the sandbox; every descriptor is
 * closed before this returns or throws.
 * @throws when `root` cannot be opened or read (naming it), is outside the allowed directories, or the signal's reason when cancelled
 */
export async function walkTree(root: string, visitor: WalkVisitor, opts: WalkOptions): Promise<SkipLog> {
  const walk = new Walk(visitor, opts);
  walk.ticker.check();
  const { listing, close } = await opts.sandbox.openWalkRoot(root);
  try {
    await walk.dir(root, "", 0, listing);
  } finally {
    await close();
  }
  return walk.skipped;
}
