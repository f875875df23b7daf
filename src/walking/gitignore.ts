/**
 * `.gitignore` support for the walkers (SPEC §10, §11 respectGitignore): the
 * `.gitignore` files inside the walked tree, with git's rules (the `ignore`
 * library matches the patterns; the nesting is done here), and `.git` skipped.
 * Each file is read through the directory the walk actually read, never
 * through a symlink (git does not follow a symlinked .gitignore either) and
 * only when it is inside the allowed directories.
 */
import type { Dirent } from "node:fs";
import path from "node:path";
import ignore, { type Ignore } from "ignore";
import { formatCount, type TextSink } from "../bounded.js";
import { escapeControls, type Shown } from "../escape.js";
import { reason, type Sandbox } from "../sandbox/index.js";
import type { WalkVisitor } from "./walker.js";

const GITIGNORE = ".gitignore";
/** Largest `.gitignore` read; a bigger one is reported as unread rather than held in memory. */
export const MAX_GITIGNORE_BYTES = 1 << 20;
const NOTE_PATHS = 5;
const BOM = "\uFEFF";

/** One file's verdict on one path: the last rule matching it ignores it, re-includes it, or none matches. */
type RuleTest = (rel: string) => { ignored: boolean; unignored: boolean };

/** The rules of one `.gitignore`, for the paths under `prefix` (its directory relative to the root, with '/'). */
interface Frame {
  prefix: string;
  test: RuleTest;
}

// The library's public test() also applies one file's rules to every parent directory of the path,
// which is right for a lone .gitignore but not across nested ones: a directory that a deeper file
// re-includes is entered, and the outer file's verdict on that directory must not then fall on its
// entries. Git matches each path on its own while it walks, which is what the library's per-path rule
// list test does; `ignore` is pinned to an exact version, and the probe below checks that internal
// behaves that way, falling back to the public test otherwise.
type RuleList = { test(rel: string, mode: string): { ignored: boolean; unignored: boolean } };
const rulesOf = (ig: Ignore): RuleList | undefined => {
  const rules = (ig as unknown as { _rules?: Partial<RuleList> })._rules;
  return typeof rules?.test === "function" ? (rules as RuleList) : undefined;
};
const PER_PATH_MODE = "regex";
// Probed on the first .gitignore compiled, not at start-up: most calls never read one.
let perPath: boolean | undefined;
const perPathWorks = (): boolean => (perPath ??= probePerPath());
function probePerPath(): boolean {
  const probe = rulesOf(ignore().add("a/\n!b\n"));
  try {
    return (
      probe?.test("a/", PER_PATH_MODE).ignored === true &&
      probe.test("a/c", PER_PATH_MODE).ignored === false &&
      probe.test("b", PER_PATH_MODE).unignored === true
    );
  } catch {
    return false;
  }
}
// The public test() caches a result per path asked (and per parent), which would grow with the
// tree; the fallback rebuilds its instance after this many tests.
const CACHE_RESET_EVERY = 1024;

/**
 * Compiles the text of one `.gitignore` into a test of paths relative to its directory ('/'
 * separators, a directory with a trailing '/'). Case-sensitive, as git is unless core.ignorecase
 * is set, which a walk cannot see.
 */
function compileGitignore(text: string): RuleTest {
  const build = (): Ignore => ignore({ ignorecase: false }).add(text);
  let ig = build();
  const rules = perPathWorks() ? rulesOf(ig) : undefined;
  if (rules) return (rel) => rules.test(rel, PER_PATH_MODE);
  let tests = 0;
  return (rel) => {
    if (++tests % CACHE_RESET_EVERY === 0) ig = build();
    return ig.test(rel);
  };
}

const toPosix = path.sep === "/" ? (rel: string) => rel : (rel: string) => rel.split(path.sep).join("/");

/**
 * Reads `reach + ".gitignore"` (`shown` is its path for messages): not through a symlink,
 * only a regular file inside the sandbox, at most MAX_GITIGNORE_BYTES.
 * @throws when it cannot be opened or read, is not a regular file, is too big, or lies outside
 */
export async function readGitignore(reach: string, shown: string, sandbox: Sandbox): Promise<string> {
  const { handle, stat: st } = await sandbox.openWalkedFile(reach, GITIGNORE, shown);
  try {
    if (st.size > BigInt(MAX_GITIGNORE_BYTES)) {
      throw new Error(`${formatCount(Number(st.size))} bytes, over the limit of ${formatCount(MAX_GITIGNORE_BYTES)}`);
    }
    // One byte more than the limit tells a file that grew since the stat.
    const buf = Buffer.alloc(MAX_GITIGNORE_BYTES + 1);
    let length = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buf, length, buf.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length > MAX_GITIGNORE_BYTES) throw new Error(`grew over the limit of ${formatCount(MAX_GITIGNORE_BYTES)} bytes`);
    }
    const text = buf.toString("utf8", 0, length);
    return text.startsWith(BOM) ? text.slice(1) : text;
  } finally {
    await handle.close();
  }
}

/**
 * What `.gitignore` files say about the entries of one walk. `opened` is the walker's
 * hook (it loads the directory's `.gitignore`); `excluded` judges an entry and counts it.
 */
export class GitignoreFilter {
  /** Entries left out by a `.gitignore` rule (an ignored directory counts once; it is not entered). */
  ignored = 0;
  /** `.git` entries left out. */
  gitDirs = 0;
  /** `.gitignore` files that were not read (symlinks, unreadable, too big, outside). */
  unread = 0;
  private readonly unreadShown: string[] = [];
  // The .gitignore frames of the directories on the walk's current path, outermost first; a frame
  // of a finished directory lingers until the next directory is opened and is skipped by prefix.
  private frames: Frame[] = [];

  constructor(
    private readonly root: string,
    private readonly sandbox: Sandbox,
  ) {}

  /** Walk hook: loads the `.gitignore` of directory `rel` (read through `reach`), if it has one. */
  async opened(rel: string, entries: readonly Dirent[], reach: string): Promise<void> {
    const prefix = rel === "" ? "" : `${toPosix(rel)}/`;
    this.frames = this.frames.filter((f) => prefix.startsWith(f.prefix));
    const entry = entries.find((e) => e.name === GITIGNORE);
    if (entry === undefined || entry.isDirectory()) return;
    const shown = escapeControls(path.join(this.root, rel, GITIGNORE));
    if (entry.isSymbolicLink()) return this.noteUnread(shown, escapeControls("a symbolic link, not followed (as git does)"));
    try {
      const text = await readGitignore(reach, shown, this.sandbox);
      this.frames.push({ prefix, test: compileGitignore(text) });
    } catch (error) {
      this.noteUnread(shown, escapeControls(reason(error)));
    }
  }

  /** True (and counted) when `.gitignore` rules or the `.git` rule leave out the entry at `rel`. */
  excluded(rel: string, entry?: Dirent): boolean {
    const posix = toPosix(rel);
    // Git never lists a `.git`, be it a repository directory or a worktree's or submodule's file.
    if ((entry?.name ?? path.basename(rel)) === ".git") {
      this.gitDirs++;
      return true;
    }
    const asked = entry?.isDirectory() ? `${posix}/` : posix;
    // Deeper files take precedence; within one file the last matching rule decides. The path's
    // ancestors need no test: the walk entered them, so none of them is ignored.
    for (let i = this.frames.length - 1; i >= 0; i--) {
      const frame = this.frames[i]!;
      if (asked.length <= frame.prefix.length || !asked.startsWith(frame.prefix)) continue;
      const verdict = frame.test(asked.slice(frame.prefix.length));
      if (verdict.ignored) {
        this.ignored++;
        return true;
      }
      if (verdict.unignored) return false;
    }
    return false;
  }

  /** Appends a note of what was left out and what was not read, only when something was. */
  appendNote(sink: TextSink): void {
    const parts: string[] = [];
    if (this.ignored > 0) parts.push(`${formatCount(this.ignored)} ${this.ignored === 1 ? "entry" : "entries"} ignored by .gitignore`);
    if (this.gitDirs > 0) parts.push(`${formatCount(this.gitDirs)} .git ${this.gitDirs === 1 ? "entry" : "entries"}`);
    if (parts.length > 0) sink.append(`\n\n[Left out ${parts.join(" and ")}; respectGitignore=false includes them]`);
    if (this.unread > 0) {
      const more = this.unread - this.unreadShown.length;
      const tail = more > 0 ? `, and ${formatCount(more)} more` : "";
      sink.append(`\n\n[.gitignore not applied: ${this.unreadShown.join("; ")}${tail}]`);
    }
  }

  private noteUnread(shown: Shown, why: Shown): void {
    this.unread++;
    if (this.unreadShown.length < NOTE_PATHS) this.unreadShown.push(`${shown} (${why})`);
  }
}

/** `visitor` with `filter` applied after its own exclusions (which are not counted as ignored); `visitor` itself without a filter. */
export function withGitignore(visitor: WalkVisitor, filter: GitignoreFilter | undefined): WalkVisitor {
  if (filter === undefined) return visitor;
  return {
    excluded: (rel, entry) => visitor.excluded(rel, entry) || filter.excluded(rel, entry),
    opened: async (rel, entries, reach) => {
      await visitor.opened?.(rel, entries, reach);
      await filter.opened(rel, entries, reach);
    },
    enter: (dir, entry, rel, depth, reach) => visitor.enter(dir, entry, rel, depth, reach),
    leave: (depth) => visitor.leave(depth),
  };
}
