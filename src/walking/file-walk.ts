/**
 * The files of a tree, for search_file_contents and replace_in_files (SPEC §10, §16, §22): every regular
 * file under `root` whose path matches `pattern` and no exclude (.gitignore too
 * when asked), opened through the sandbox and handed over open, one at a time,
 * in walk order (the visitor then owns its descriptor). Symlinks are followed only to files inside; what is not visited is
 * counted. Each name is visited, as grep -r does, and a link followed only to a file the walk does not take under the
 * file's own name, once per file.
 */
import { closeSync, type Dirent } from "node:fs";
import path from "node:path";
import { Minimatch } from "minimatch";
import type { Shown } from "../kernel/escape.js";
import {
  errnoCode,
  isDirectoryRefusal,
  undecodable,
  type FileObjectId,
  type WalkPort,
  type WalkedOpen,
  type WalkedResult,
} from "../sandbox/index.js";
import { GitignoreFilter, withGitignore } from "./gitignore.js";
import { excluderOf, GlobOutcome } from "./patterns.js";
import { joinDir, ShownPaths, walkTree, type Upcoming, type WalkOptions } from "./walker.js";

/** Why an entry was not searched. */
export type FileSkip = "gitignored" | "unreadable" | "outsideLink" | "innerLink" | "repeatLink" | "linkLoop" | "pathLimit" | "badName";

// Past the platform's path limit a file is not unreadable: the portable strategy has no path to reach it by.
// A name read from the directory that is not found under itself was not valid UTF-8: Node gave it with U+FFFD for the
// bytes it could not decode, and the server reaches files by string names, so no call can open it.
const failed = (error: unknown, name: string): FileSkip => {
  const code = errnoCode(error);
  if (code === "ENAMETOOLONG") return "pathLimit";
  return code === "ENOENT" && undecodable(name) ? "badName" : "unreadable";
};

/**
 * What to walk and which files to take. Names and links, in every walk: each name is handed over, a hard link under
 * each (grep -r and rg search each too; replace_in_files rewrites each, as `sed -i` over grep -rl's list does, where
 * collapsing them left every other name with the old text). A symlink to a file the walk takes under the file's own
 * name (inside `root`, matching the pattern, not excluded) is counted (`innerLink`) and not followed; one to any
 * other file (still inside the allowed directories) is followed, once per file, by its real path (a later link to
 * it is counted, `repeatLink`). So each symlinked file is searched, or rewritten, once (.gitignore, when asked,
 * leaves a file out under its own name, and says so).
 */
export interface FileSelection {
  /** Glob matched against each file's path relative to the root (search_files' rules); every file when absent. */
  pattern?: string;
  excludePatterns: readonly string[];
  respectGitignore: boolean;
  /**
   * Files the walk may hold opened ahead of the visitor, at most (0 or absent: one at a time): those after a file
   * in its directory are opened with it, in one step (see FileEntries), and wait for their turn.
   */
  openAhead?: number;
  /**
   * Files the sandbox proves inside by their reach alone are handed over unchecked (size -1, no identity; see the
   * sandbox's openWalkedSync), the visitor checks them.
   */
  unchecked?: boolean;
  /**
   * With `unchecked`, the walk's first files are checked all the same, about this many (those opened together with
   * the last of them too): their sizes are known before any reader of the others has reported one.
   */
  checkedFirst?: number;
}

/**
 * A file opened through the sandbox, handed over with its size when opened, its identity and its count of names (-1 and
 * none when unchecked); whoever receives it closes it.
 */
export interface OpenedFile {
  fd: number;
  size: number;
  stat?: FileObjectId;
  links?: number;
  close(): unknown;
}

/** Receives each selected file, which it now owns (and closes), its shown path and the path itself; a promise makes the walk wait. */
export type FileVisitor = (file: OpenedFile, shown: Shown, full: string) => Promise<void> | undefined;
// Synchronous reads do not yield by themselves: the event loop gets a turn this often, so a
// cancellation or a progress notification is never held up for long.
const YIELD_AFTER_MS = 4;
const CLOCK_EVERY = 32;
/** Gives the event loop a turn when synchronous reads have held it for a while. */
class Pacer {
  private files = 0;
  private lastTurn = performance.now();

  constructor(
    private readonly signal: AbortSignal | undefined,
    private readonly onTurn: (() => void) | undefined,
  ) {}

  /** Undefined unless it is time for a turn: a promise per file cost more than many a file's search. */
  pace(): Promise<void> | undefined {
    if (++this.files % CLOCK_EVERY !== 0 || performance.now() - this.lastTurn < YIELD_AFTER_MS) return undefined;
    return new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
      this.lastTurn = performance.now();
      this.signal?.throwIfAborted();
      this.onTurn?.();
    });
  }
}

/** The files a walk follows links to: those it does not take under their own names, each once. */
interface LinkTargets {
  /** The walk's root and a separator. */
  under: string;
  /** Whether the walk takes the file at `rel` (relative to the root) under its own name: its pattern, its excludes. */
  takes: (rel: string) => boolean;
  met: Set<string>;
}

// The file a link leads to, opened (as a walked file is, synchronously), or why it is not searched; "directory" is left
// out uncounted, `repeatLink` is a file an earlier link of the walk led to.
function openLinked(sandbox: WalkPort, link: string, shown: Shown, targets: LinkTargets): WalkedResult | FileSkip | "directory" {
  const verdict = sandbox.followLink(link, false);
  if (verdict.kind === "outside") return "outsideLink";
  if (verdict.kind === "loop") return "linkLoop";
  if (verdict.kind === "unresolved") return verdict.code === "ENAMETOOLONG" ? "pathLimit" : "unreadable";
  if (verdict.kind === "dangling") return "unreadable";
  // A link to a directory is listed by search_files but never descended; it holds no file to search.
  if (verdict.target.isDir) return "directory";
  // A FIFO, socket or device is not opened (opening some has effects of its own), as a walked one is not.
  if (!verdict.target.isFile) return "unreadable";
  const real = verdict.target.real;
  if (real.startsWith(targets.under) && targets.takes(real.slice(targets.under.length))) return "innerLink";
  if (targets.met.has(real)) return "repeatLink";
  const got = sandbox.openLinkedSync(real, shown);
  if ("error" in got) return isDirectoryRefusal(got.error) ? "directory" : got;
  targets.met.add(real);
  return got;
}

/** A file opened synchronously: one object per file, no closure (a tree of tiny files makes many). */
class SyncOpened implements OpenedFile {
  constructor(
    readonly fd: number,
    readonly size: number,
    readonly stat: FileObjectId | undefined,
    readonly links: number | undefined,
  ) {}

  close(): void {
    closeSync(this.fd);
  }
}

// Files of one directory opened together, at most (one step, see openWalkedSync); at most the selection's
// `openAhead` wait opened ahead of the walk (the directories above keep theirs while it goes down).
const OPEN_TOGETHER = 16;

/** The walk's handling of one entry: a file is opened and handed over, under each of its names. */
class FileEntries {
  private readonly matcher: Minimatch | undefined;
  private readonly shownPaths = new ShownPaths();
  private readonly pacer: Pacer;
  // The files opened ahead of the walk, until it comes to them.
  private readonly ahead = new Map<Dirent, WalkedResult>();
  // Files opened so far (for `checkedFirst`).
  private filesOpened = 0;
  // What the pattern met (for the note on it).
  readonly outcome: GlobOutcome;
  // Which of the entries after one the walk will enter are opened with it: files matching the pattern, not yet opened.
  private readonly opensAhead = (entry: Dirent, rel: string): boolean =>
    entry.isFile() && !this.ahead.has(entry) && (this.matcher === undefined || this.matcher.match(rel));

  // The files links led to (see FileSelection, names and links).
  private readonly targets: LinkTargets;

  constructor(
    root: string,
    pattern: string | undefined,
    private readonly excluded: (rel: string) => boolean,
    private readonly openAhead: number,
    private readonly unchecked: boolean,
    private readonly checkedFirst: number,
    private readonly onFile: FileVisitor,
    private readonly onSkip: (reason: FileSkip, count: number) => void,
    private readonly opts: WalkOptions,
  ) {
    this.matcher = pattern === undefined ? undefined : new Minimatch(pattern, { dot: true });
    this.outcome = new GlobOutcome(pattern);
    this.pacer = new Pacer(opts.signal, opts.onTurn);
    this.targets = { under: root.endsWith(path.sep) ? root : root + path.sep, takes: (rel) => this.takes(rel), met: new Set() };
  }

  // Whether the walk takes the file at `rel` under its own name: the pattern matches it, and no exclude matches it or one
  // of its directories (an excluded directory is not entered).
  private takes(rel: string): boolean {
    if (this.matcher !== undefined && !this.matcher.match(rel)) return false;
    for (let at = rel.indexOf(path.sep); at !== -1; at = rel.indexOf(path.sep, at + 1)) if (this.excluded(rel.slice(0, at))) return false;
    return !this.excluded(rel);
  }

  /** Takes the entry `entry` of `dir` (reached through `reach`); synchronous (no promise) unless the visitor makes the walk wait. */
  enter(dir: string, entry: Dirent, reach: string, rel: string, upcoming?: Upcoming): Promise<void> | undefined {
    if (entry.isDirectory()) return undefined;
    if (this.matcher !== undefined && !this.matcher.match(rel)) {
      this.outcome.missed(rel, entry);
      return undefined;
    }
    this.outcome.matched();
    const full = joinDir(dir, entry.name);
    const shown = this.shownPaths.entry(dir, entry.name);
    if (!entry.isSymbolicLink() && !entry.isFile()) {
      // A FIFO, socket or device is not searched, and a skip is never silent (SPEC §10).
      this.onSkip("unreadable", 1);
      return undefined;
    }
    const opened = entry.isSymbolicLink() ? this.openLink(reach + entry.name, shown) : this.openSync(dir, entry, reach, shown, upcoming);
    if (opened === undefined) return undefined;
    const done = this.onFile(new SyncOpened(opened.fd, opened.size, opened.stat, opened.links), shown, full);
    return done instanceof Promise ? done.then(() => this.pacer.pace()) : this.pacer.pace();
  }

  // The file opened (ahead, or now with the next ones); undefined when it was counted unreadable.
  private openSync(dir: string, entry: Dirent, reach: string, shown: Shown, upcoming?: Upcoming): WalkedOpen | undefined {
    let got = this.ahead.get(entry);
    if (got === undefined) got = this.openTogether(dir, entry, reach, shown, upcoming);
    else this.ahead.delete(entry);
    if (!("error" in got)) return got;
    this.opts.signal?.throwIfAborted();
    this.onSkip(failed(got.error, entry.name), 1);
    return undefined;
  }

  // Opens `entry` with the next files of its directory the walk will take (as the walk judges them), in one step; keeps those.
  private openTogether(dir: string, entry: Dirent, reach: string, shown: Shown, upcoming?: Upcoming): WalkedResult {
    const room = Math.min(OPEN_TOGETHER, 1 + this.openAhead - this.ahead.size) - 1;
    const batch = [entry, ...(room > 0 && upcoming !== undefined ? upcoming.leavesAfter(room, this.opensAhead) : [])];
    const names = batch.map((e) => e.name);
    const unchecked = this.unchecked && this.filesOpened >= this.checkedFirst;
    this.filesOpened += names.length;
    const results = this.opts.sandbox.openWalkedSync(
      reach,
      names,
      (k) => (k === 0 ? shown : this.shownPaths.entry(dir, names[k] as string)),
      unchecked,
    );
    for (let k = 1; k < batch.length; k++) this.ahead.set(batch[k] as Dirent, results[k] as WalkedResult);
    return results[0] as WalkedResult;
  }

  /** Closes the files opened ahead that the walk did not come to (it was cancelled, or lost a directory). */
  dispose(): void {
    for (const got of this.ahead.values()) if (!("error" in got)) closeSync(got.fd);
    this.ahead.clear();
  }

  // The file the link at `link` leads to, opened; undefined when it is not searched (counted unless a directory).
  private openLink(link: string, shown: Shown): WalkedOpen | undefined {
    const got = openLinked(this.opts.sandbox, link, shown, this.targets);
    if (got === "directory") return undefined;
    if (typeof got === "string") this.onSkip(got, 1);
    else if ("error" in got) this.onSkip(failed(got.error, link), 1);
    else return got;
    return undefined;
  }
}

/**
 * Walks `root`, calling `onFile` for each selected file and `onSkip` for each entry left out; returns the
 * notes of `.gitignore` files not read and rules not applied, and on its `pattern` (GlobOutcome) ("" when
 * none), for the result to end with.
 * @throws when `root` cannot be read, when the allowed directories changed so that it is no longer inside
 * them, or the signal's reason when cancelled
 */
export async function walkFiles(
  root: string,
  selection: FileSelection,
  onFile: FileVisitor,
  onSkip: (reason: FileSkip, count: number) => void,
  opts: WalkOptions,
): Promise<string> {
  const gitignore = selection.respectGitignore ? new GitignoreFilter(root, opts.sandbox) : undefined;
  const excluder = excluderOf(selection.excludePatterns);
  const { excluded } = excluder;
  const files = new FileEntries(
    root,
    selection.pattern,
    excluded,
    selection.openAhead ?? 0,
    selection.unchecked ?? false,
    selection.checkedFirst ?? 0,
    onFile,
    onSkip,
    opts,
  );
  const visitor = withGitignore(
    {
      excluded,
      enter: (dir, entry, rel, _depth, reach, upcoming) => files.enter(dir, entry, reach ?? dir + path.sep, rel, upcoming),
      leave() {},
    },
    gitignore,
  );
  let skipped: Awaited<ReturnType<typeof walkTree>>;
  try {
    // Its scan workers keep the cores busy: directories read ahead in the thread pool waited for a core and for the
    // walk's next turn. Read at once, the bench's repository tree took 561 ms a search instead of 681, and the
    // process 1,010 ms of CPU instead of 1,140 (servers alternated).
    skipped = await walkTree(root, visitor, { ...opts, poolReads: false });
  } finally {
    files.dispose();
  }
  if (skipped.count > skipped.pastPathLimit) onSkip("unreadable", skipped.count - skipped.pastPathLimit);
  if (skipped.pastPathLimit > 0) onSkip("pathLimit", skipped.pastPathLimit);
  if (gitignore !== undefined && gitignore.ignored + gitignore.gitDirs > 0) onSkip("gitignored", gitignore.ignored + gitignore.gitDirs);
  return (gitignore?.problemsNote() ?? "") + files.outcome.note("pattern", root) + excluder.note(root);
}
