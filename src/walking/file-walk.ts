/**
 * The files of a tree, for search_file_contents (SPEC §10): every regular file
 * under `root` whose path matches `pattern` and no exclude (.gitignore too when
 * asked), opened through the sandbox and handed to `onFile` one at a time, in
 * walk order. Symlinks are followed only to files inside; each file object is
 * visited once, however many names lead to it; what is not visited is counted.
 */
import type { BigIntStats, Dirent } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import path from "node:path";
import { Minimatch } from "minimatch";
import { escapeControls, type Shown } from "../escape.js";
import { errnoCode, type FileObjectId, type Sandbox, type WalkedRead } from "../sandbox/index.js";
import { GitignoreFilter, withGitignore } from "./gitignore.js";
import { walkTree, type WalkOptions } from "./walker.js";

/** Why an entry was not searched. */
export type FileSkip = "gitignored" | "unreadable" | "outsideLink" | "linkLoop" | "pathLimit";

// Past the platform's path limit a file is not unreadable: the portable strategy has no path to reach it by.
const failed = (error: unknown): FileSkip => (errnoCode(error) === "ENAMETOOLONG" ? "pathLimit" : "unreadable");

/** What to walk and which files to take. */
export interface FileSelection {
  /** Glob matched against each file's path relative to the root (search_files' rules); every file when absent. */
  pattern?: string;
  excludePatterns: readonly string[];
  respectGitignore: boolean;
}

/** Receives each selected file, opened and verified, with its path as shown; the walker closes the handle after the promise settles. */
export type FileVisitor = (handle: FileHandle, shown: Shown) => Promise<void>;

/** Receives a selected small file's whole content and its path as shown; `bytes` is reused once it returns (or its promise settles). */
export type SmallFileVisitor = (bytes: Buffer, shown: Shown) => unknown;

// Files shorter than this are read whole in one synchronous burst (as the binary probe of
// grep/file-scan.ts would read them anyway); longer ones are opened and streamed.
const SMALL_FILE_BYTES = 8192;
// Synchronous reads do not yield by themselves: the event loop gets a turn this often, so a
// cancellation or a progress notification is never held up for long.
const YIELD_AFTER_MS = 4;
const CLOCK_EVERY = 32;
const MAX_EXACT = BigInt(Number.MAX_SAFE_INTEGER);

// A number when exact, else a bigint: the one form a set finds a device or inode number by.
const oneForm = (n: number | bigint): number | bigint => (typeof n === "number" || n > MAX_EXACT ? n : Number(n));

/**
 * The file objects met so far: inode numbers by device, as numbers when exact (a string key per
 * file, or a bigint set, cost more than the file's search); the same inode always gets the same form.
 */
class SeenFiles {
  private readonly byDevice = new Map<number | bigint, Set<number | bigint>>();
  private lastDev: number | bigint | undefined;
  private inodes = new Set<number | bigint>();

  /** True the first time the file object `st` is met, false ever after. */
  firstSight(st: FileObjectId): boolean {
    const dev = oneForm(st.dev);
    if (dev !== this.lastDev) {
      this.lastDev = dev;
      const known = this.byDevice.get(dev);
      if (known === undefined) this.byDevice.set(dev, (this.inodes = new Set()));
      else this.inodes = known;
    }
    const ino = oneForm(st.ino);
    if (this.inodes.has(ino)) return false;
    this.inodes.add(ino);
    return true;
  }
}

/** Gives the event loop a turn when synchronous reads have held it for a while. */
class Pacer {
  private files = 0;
  private lastTurn = performance.now();

  constructor(private readonly signal: AbortSignal | undefined) {}

  /** Undefined unless it is time for a turn: a promise per file cost more than many a file's search. */
  pace(): Promise<void> | undefined {
    if (++this.files % CLOCK_EVERY !== 0 || performance.now() - this.lastTurn < YIELD_AFTER_MS) return undefined;
    return new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
      this.lastTurn = performance.now();
      this.signal?.throwIfAborted();
    });
  }
}

async function openLinked(sandbox: Sandbox, link: string): Promise<{ handle: FileHandle } | FileSkip | "directory"> {
  const verdict = await sandbox.followLink(link, false);
  if (verdict.kind === "outside") return "outsideLink";
  if (verdict.kind === "loop") return "linkLoop";
  if (verdict.kind === "unresolved") return verdict.code === "ENAMETOOLONG" ? "pathLimit" : "unreadable";
  if (verdict.kind === "dangling") return "unreadable";
  try {
    return { handle: (await sandbox.openFile(verdict.target.real)).handle };
  } catch (error) {
    // A link to a directory is listed by search_files but never descended; it holds no file to search.
    return errnoCode(error) === "EISDIR" ? "directory" : failed(error);
  }
}

/** The walk's handling of one entry: a file is opened (or read whole when small) and handed over, once per file object. */
class FileEntries {
  private readonly matcher: Minimatch | undefined;
  private readonly seen = new SeenFiles();
  private readonly pacer: Pacer;
  private readonly probe = Buffer.allocUnsafe(SMALL_FILE_BYTES);

  constructor(
    pattern: string | undefined,
    private readonly onFile: FileVisitor,
    private readonly onSkip: (reason: FileSkip, count: number) => void,
    private readonly opts: WalkOptions,
    private readonly onSmallFile: SmallFileVisitor | undefined,
  ) {
    this.matcher = pattern === undefined ? undefined : new Minimatch(pattern, { dot: true });
    this.pacer = new Pacer(opts.signal);
  }

  /** Takes the entry `entry` of `dir` (reached through `reach`); synchronous (no promise) for a small file searched synchronously, the common case of a tree. */
  enter(dir: string, entry: Dirent, rel: string, reach: string): Promise<void> | undefined {
    if (entry.isDirectory() || (this.matcher !== undefined && !this.matcher.match(rel))) return undefined;
    // path.join's normalising, per file, is not needed: `dir` is normalised and names hold no separator.
    const shown = escapeControls(dir.endsWith(path.sep) ? dir + entry.name : dir + path.sep + entry.name);
    if (entry.isSymbolicLink()) return this.enterLink(reach + entry.name, shown);
    if (!entry.isFile()) {
      // A FIFO, socket or device is not searched, and a skip is never silent (SPEC §10).
      this.onSkip("unreadable", 1);
      return undefined;
    }
    if (this.onSmallFile !== undefined) {
      const small = this.readSmall(reach, entry.name, shown);
      if (small === undefined) return undefined;
      if (small.kind === "whole") {
        const done = this.seen.firstSight(small.stat) ? this.onSmallFile(this.probe.subarray(0, small.length), shown) : undefined;
        return done instanceof Promise ? done.then(() => this.pacer.pace()) : this.pacer.pace();
      }
    }
    return this.enterLarge(reach, entry.name, shown);
  }

  // The whole file when it is small; undefined when it is large or was counted unreadable.
  private readSmall(reach: string, name: string, shown: Shown): WalkedRead | undefined {
    try {
      return this.opts.sandbox.readWalkedSmallFile(reach, name, shown, this.probe);
    } catch (error) {
      this.opts.signal?.throwIfAborted();
      this.onSkip(failed(error), 1);
      return undefined;
    }
  }

  private async enterLink(link: string, shown: Shown): Promise<void> {
    const linked = await openLinked(this.opts.sandbox, link);
    if (typeof linked === "string") {
      if (linked !== "directory") this.onSkip(linked, 1);
      return;
    }
    return this.visit(linked.handle, shown);
  }

  private async enterLarge(reach: string, name: string, shown: Shown): Promise<void> {
    let handle: FileHandle;
    let stat: BigIntStats;
    try {
      ({ handle, stat } = await this.opts.sandbox.openWalkedFile(reach, name, shown));
    } catch (error) {
      this.opts.signal?.throwIfAborted();
      this.onSkip(failed(error), 1);
      return;
    }
    return this.visit(handle, shown, stat);
  }

  private async visit(handle: FileHandle, shown: Shown, known?: BigIntStats): Promise<void> {
    try {
      if (this.seen.firstSight(known ?? (await handle.stat({ bigint: true })))) await this.onFile(handle, shown);
    } finally {
      await handle.close();
    }
  }
}

/**
 * Walks `root`, calling `onFile` for each selected file and `onSkip` for each entry left out; returns the
 * notes of `.gitignore` files not read and rules not applied ("" when none), for the result to end with.
 * @throws when `root` cannot be read, when the allowed directories changed so that it is no longer inside
 * them, or the signal's reason when cancelled
 */
export async function walkFiles(
  root: string,
  selection: FileSelection,
  onFile: FileVisitor,
  onSkip: (reason: FileSkip, count: number) => void,
  opts: WalkOptions,
  onSmallFile?: SmallFileVisitor,
): Promise<string> {
  const excludes = selection.excludePatterns.map((p) => new Minimatch(p, { dot: true }));
  const files = new FileEntries(selection.pattern, onFile, onSkip, opts, onSmallFile);
  const gitignore = selection.respectGitignore ? new GitignoreFilter(root, opts.sandbox) : undefined;
  const skipped = await walkTree(
    root,
    withGitignore(
      {
        excluded: (rel) => excludes.some((m) => m.match(rel)),
        enter: (dir, entry, rel, _depth, reach) => files.enter(dir, entry, rel, reach ?? dir + path.sep),
        leave() {},
      },
      gitignore,
    ),
    opts,
  );
  if (skipped.count > skipped.pastPathLimit) onSkip("unreadable", skipped.count - skipped.pastPathLimit);
  if (skipped.pastPathLimit > 0) onSkip("pathLimit", skipped.pastPathLimit);
  if (gitignore !== undefined && gitignore.ignored + gitignore.gitDirs > 0) onSkip("gitignored", gitignore.ignored + gitignore.gitDirs);
  return gitignore?.problemsNote() ?? "";
}
