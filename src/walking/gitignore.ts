/**
 * `.gitignore` support for the walkers (SPEC §10, §11 respectGitignore): the
 * `.gitignore` files inside the walked tree, with git's rules (each file
 * compiled once, gitignore-rules.ts; the nesting is done here), and `.git`
 * skipped. Each file is read through the directory the walk actually read,
 * never through a symlink (git does not follow a symlinked .gitignore either)
 * and only when it is inside the allowed directories. What could not be read
 * or applied is said in a note, never left out in silence.
 */
import type { Dirent } from "node:fs";
import path from "node:path";
import { formatCount, type TextSink } from "../kernel/bounded.js";
import { escapeControls, type Shown } from "../kernel/escape.js";
import { reason, type WalkPort } from "../sandbox/index.js";
import { compileRules, IGNORED, REINCLUDED, type CostlyRule, type RuleSet, type Subject } from "./gitignore-rules.js";
import type { WalkVisitor } from "./walker.js";

const GITIGNORE = ".gitignore";
/** Largest `.gitignore` read; a bigger one is reported as unread rather than held in memory. */
export const MAX_GITIGNORE_BYTES = 1 << 20;
const NOTE_PATHS = 5;
const BOM = "\uFEFF";

/** The rules of one `.gitignore`, for the paths below its directory. */
interface Frame {
  /** Its directory's path relative to the root, with "/" and a trailing "/" ("" for the root). */
  prefixLength: number;
  /** Components of that directory below the root (0 for the root). */
  components: number;
  rules: RuleSet;
  bytes: number;
}

/** Bytes of all the `.gitignore` files on one path together held compiled; a deeper one past this is not applied, and said so. */
export const MAX_HELD_GITIGNORE_BYTES = 8 << 20;
/** Costly rules named in the note; the rest are counted. */
const COSTLY_SHOWN = 5;

/** An entry as the rules of every frame see it: built once per entry, its bytes only when a wildmatch rule asks. */
class Asked implements Subject {
  relative = "";
  first = 0;
  private made: { path: Uint8Array; starts: Int32Array; name: Uint8Array } | undefined;

  constructor(
    readonly path: string,
    readonly name: string,
    readonly isDir: boolean,
  ) {}

  bytes(): { path: Uint8Array; starts: Int32Array; name: Uint8Array } {
    if (this.made !== undefined) return this.made;
    const path = Buffer.from(this.path, "utf8");
    const starts = [0];
    for (let i = 0; i < path.length; i++) if (path[i] === 0x2f) starts.push(i + 1);
    this.made = { path, starts: Int32Array.from(starts), name: Buffer.from(this.name, "utf8") };
    return this.made;
  }
}

const toPosix = path.sep === "/" ? (rel: string) => rel : (rel: string) => rel.split(path.sep).join("/");

/**
 * Reads `reach + ".gitignore"` (`shown` is its path for messages): not through a symlink,
 * only a regular file inside the sandbox, at most MAX_GITIGNORE_BYTES.
 * @throws when it cannot be opened or read, is not a regular file, is too big, or lies outside
 */
export async function readGitignore(reach: string, shown: string, sandbox: WalkPort): Promise<string> {
  const { handle, stat: st } = await sandbox.openWalkedFile(reach, GITIGNORE, shown);
  try {
    if (st.size > BigInt(MAX_GITIGNORE_BYTES)) {
      throw new Error(`${formatCount(Number(st.size))} bytes, over the limit of ${formatCount(MAX_GITIGNORE_BYTES)}`);
    }
    // One byte more than its size tells a file that grew since the stat (a size of 0 may hide content:
    // files of pseudo file systems, read up to the limit).
    const size = Number(st.size);
    const buf = Buffer.allocUnsafe((size > 0 ? size : MAX_GITIGNORE_BYTES) + 1);
    let length = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buf, length, buf.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length > MAX_GITIGNORE_BYTES) throw new Error(`grew over the limit of ${formatCount(MAX_GITIGNORE_BYTES)} bytes`);
      if (length === buf.length) throw new Error(`grew while being read, past its ${formatCount(size)} bytes`);
    }
    const text = buf.toString("utf8", 0, length);
    return text.startsWith(BOM) ? text.slice(1) : text;
  } finally {
    await handle.close();
  }
}

/**
 * What `.gitignore` files say about the entries of one walk. `opened` is the walker's
 * hook (it loads the directory's `.gitignore`); `excluded` judges an entry and counts it;
 * `left` drops the rules of a directory the walk has left.
 */
export class GitignoreFilter {
  /** Entries left out by a `.gitignore` rule (an ignored directory counts once; it is not entered). */
  ignored = 0;
  /** `.git` entries left out. */
  gitDirs = 0;
  /** `.gitignore` files that were not read (symlinks, unreadable, too big, outside). */
  unread = 0;
  private readonly unreadShown: string[] = [];
  /** Rules left out as too costly to match, over all the files read. */
  costly = 0;
  private readonly costlyShown: string[] = [];
  // The .gitignore frames of the directories on the walk's current path, outermost first.
  private readonly frames: Frame[] = [];
  private heldBytes = 0;

  constructor(
    private readonly root: string,
    private readonly sandbox: WalkPort,
  ) {}

  /** Walk hook: loads the `.gitignore` of directory `rel` (read through `reach`), if it has one. */
  async opened(rel: string, entries: readonly Dirent[], reach: string): Promise<void> {
    const entry = entries.find((e) => e.name === GITIGNORE);
    if (entry === undefined || entry.isDirectory()) return;
    const shown = escapeControls(path.join(this.root, rel, GITIGNORE));
    if (entry.isSymbolicLink()) return this.noteUnread(shown, escapeControls("a symbolic link, not followed (as git does)"));
    let text: string;
    try {
      text = await readGitignore(reach, shown, this.sandbox);
    } catch (error) {
      return this.noteUnread(shown, escapeControls(reason(error)));
    }
    const bytes = Buffer.byteLength(text);
    if (this.heldBytes + bytes > MAX_HELD_GITIGNORE_BYTES) {
      const held = formatCount(MAX_HELD_GITIGNORE_BYTES);
      return this.noteUnread(shown, escapeControls(`with the .gitignore files above it, over ${held} bytes on one path; the limit is ${held}`));
    }
    const rules = await compileRules(text);
    for (const rule of rules.costly) this.noteCostly(shown, rule);
    const prefix = rel === "" ? "" : `${toPosix(rel)}/`;
    this.frames.push({ prefixLength: prefix.length, components: rel === "" ? 0 : rel.split(path.sep).length, rules, bytes });
    this.heldBytes += bytes;
  }

  /** Walk hook: the directory entered at `depth` (its entries one deeper) is done, and so are its rules. */
  left(depth: number): void {
    for (let last = this.frames.at(-1); last !== undefined && last.components > depth; last = this.frames.at(-1)) {
      this.heldBytes -= last.bytes;
      this.frames.pop();
    }
  }

  /** True (and counted) when `.gitignore` rules or the `.git` rule leave out the entry at `rel`. */
  excluded(rel: string, entry?: Dirent): boolean {
    const name = entry?.name ?? path.basename(rel);
    // Git never lists a `.git`, be it a repository directory or a worktree's or submodule's file.
    if (name === ".git") {
      this.gitDirs++;
      return true;
    }
    if (this.frames.length === 0) return false;
    const asked = new Asked(toPosix(rel), name, entry?.isDirectory() ?? false);
    // Deeper files take precedence; within one file the last matching rule decides. The path's
    // ancestors need no test: the walk entered them, so none of them is ignored.
    for (let i = this.frames.length - 1; i >= 0; i--) {
      const frame = this.frames[i]!;
      asked.relative = asked.path.slice(frame.prefixLength);
      asked.first = frame.components;
      const verdict = frame.rules.test(asked);
      if (verdict === IGNORED) {
        this.ignored++;
        return true;
      }
      if (verdict === REINCLUDED) return false;
    }
    return false;
  }

  /** Appends a note of what was left out and what was not read or applied, only when something was. */
  appendNote(sink: TextSink): void {
    const parts: string[] = [];
    if (this.ignored > 0) parts.push(`${formatCount(this.ignored)} ${this.ignored === 1 ? "entry" : "entries"} ignored by .gitignore`);
    if (this.gitDirs > 0) parts.push(`${formatCount(this.gitDirs)} .git ${this.gitDirs === 1 ? "entry" : "entries"}`);
    if (parts.length > 0) sink.append(`\n\n[Left out ${parts.join(" and ")}; respectGitignore=false includes them]`);
    sink.append(this.problemsNote());
  }

  /** The notes of `.gitignore` files not read and of rules not applied (`\n\n[…]` each), or "" when there are none. */
  problemsNote(): string {
    let note = "";
    if (this.unread > 0) note += `\n\n[.gitignore not applied: ${this.unreadShown.join("; ")}${more(this.unread, this.unreadShown.length)}]`;
    if (this.costly > 0) {
      note +=
        `\n\n[.gitignore ${this.costly === 1 ? "rule" : "rules"} not applied, too costly to match on every entry (what ` +
        `${this.costly === 1 ? "it" : "they"} would leave out is included): ${this.costlyShown.join("; ")}${more(this.costly, this.costlyShown.length)}]`;
    }
    return note;
  }

  private noteUnread(shown: Shown, why: Shown): void {
    this.unread++;
    if (this.unreadShown.length < NOTE_PATHS) this.unreadShown.push(`${shown} (${why})`);
  }

  private noteCostly(shown: Shown, rule: CostlyRule): void {
    this.costly++;
    if (this.costlyShown.length < COSTLY_SHOWN) {
      this.costlyShown.push(`${shown} line ${formatCount(rule.line)} "${escapeControls(rule.pattern)}" (${escapeControls(rule.why)})`);
    }
  }
}

const more = (count: number, shown: number): string => (count > shown ? `, and ${formatCount(count - shown)} more` : "");

/** `visitor` with `filter` applied after its own exclusions (which are not counted as ignored); `visitor` itself without a filter. */
export function withGitignore(visitor: WalkVisitor, filter: GitignoreFilter | undefined): WalkVisitor {
  if (filter === undefined) return visitor;
  return {
    excluded: (rel, entry) => visitor.excluded(rel, entry) || filter.excluded(rel, entry),
    opened: async (rel, entries, reach) => {
      await visitor.opened?.(rel, entries, reach);
      await filter.opened(rel, entries, reach);
    },
    enter: (dir, entry, rel, depth, reach, upcoming) => visitor.enter(dir, entry, rel, depth, reach, upcoming),
    ignoresRel: visitor.ignoresRel,
    leave(depth, cut) {
      filter.left(depth);
      visitor.leave(depth, cut);
    },
  };
}
