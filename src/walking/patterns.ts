/**
 * Limits on glob patterns (issue 5): matching costs one test per entry and per
 * brace alternative, and `{a,b}` twenty times over is a million alternatives
 * (seconds per entry, gigabytes to build), so alternatives are limited per
 * pattern and over all the patterns of a call. And what a pattern that matched
 * nothing was likely meant as.
 */
import type { Dirent } from "node:fs";
import path from "node:path";
import { braceExpand, Minimatch } from "minimatch";
import { formatCount } from "../kernel/bounded.js";
import { escapeControls } from "../kernel/escape.js";
import { excludesNothing } from "./walker.js";

const MAX_ALTERNATIVES = 1_000;
const MAX_TOTAL_ALTERNATIVES = 10_000;

/**
 * Refuses globs whose brace expansion would make a walk hang.
 * @param patterns `[parameter name, pattern]` pairs, so the error can name the parameter
 * @throws naming the parameter, the pattern and the limit
 */
export function checkPatterns(patterns: ReadonlyArray<readonly [string, string]>): void {
  let total = 0;
  for (const [param, pattern] of patterns) {
    // minimatch matches a numeric range of 100 values or more without expanding it, so such a
    // range counts once; the expansion itself stops one past the limit.
    const ranged = pattern.replace(/\{(-?\d+)\.\.(-?\d+)\}/g, (m, a: string, b: string) => (Math.abs(Number(b) - Number(a)) + 1 >= 100 ? "0" : m));
    const alternatives = braceExpand(ranged, { braceExpandMax: MAX_ALTERNATIVES + 1 }).length;
    if (alternatives > MAX_ALTERNATIVES) {
      throw new Error(
        `Pattern too complex: ${param} ${JSON.stringify(pattern.slice(0, 100))} expands through its {…} braces to more than ` +
          `${formatCount(MAX_ALTERNATIVES)} patterns; the limit is ${formatCount(MAX_ALTERNATIVES)}.`,
      );
    }
    total += alternatives;
  }
  if (total > MAX_TOTAL_ALTERNATIVES) {
    throw new Error(
      `Too many patterns: the patterns of this call expand to ${formatCount(total)} patterns in total; ` +
        `the limit is ${formatCount(MAX_TOTAL_ALTERNATIVES)}.`,
    );
  }
}

// What only a regular expression means: `.*`, an escaped dot, `^` first, `$` last.
const REGEX_LIKE = /\.\*|\\\.|^\^|\$$/;

/**
 * What a walk's glob met, for the note its result ends with: globs are matched against paths relative to the walked
 * directory, as upstream matches them, so `*.ts` names only entries directly inside it (rg's `-g '*.ts'`, and a
 * .gitignore line, match at any depth). Told of each entry the glob did not match, it looks (until it finds one) for a
 * deeper entry whose name `**\/<glob>` would match.
 */
export class GlobOutcome {
  private readonly byName: Minimatch | undefined;
  /** The glob matching letters of either case, while it has matched nothing: a name it would take so is noted. */
  private readonly folded: Minimatch | undefined;
  /** A slash-free glob as `**\/<glob>`, letter case kept: what it matches deeper differs by depth only. */
  private readonly anyDepth: Minimatch | undefined;
  private matchedAny = false;
  private deeper = false;
  /** The first entry (its path from the root, or its name) the glob missed only by letter case. */
  private caseOnly: string | undefined;

  constructor(private readonly pattern: string | undefined) {
    // As in **\/<pattern>, a leading # or ! is a character, not a comment or a negation.
    const byName = pattern !== undefined && pattern !== "" && !pattern.includes("/");
    this.byName = byName ? new Minimatch(pattern, { dot: true, nocomment: true, nonegate: true }) : undefined;
    // Slash-free, at any depth too (the note then says both); what matches at a depth as written is the deeper note's.
    const cased = pattern !== undefined && pattern.toLowerCase() !== pattern.toUpperCase();
    const glob = byName ? `**/${pattern}` : (pattern ?? "");
    this.folded = cased ? new Minimatch(glob, { dot: true, nocase: true, nocomment: true, nonegate: true }) : undefined;
    this.anyDepth = cased && byName ? new Minimatch(glob, { dot: true, nocomment: true, nonegate: true }) : undefined;
  }

  /** The glob matched an entry the walk took. */
  matched(): void {
    this.matchedAny = true;
  }

  /** An entry at `rel` (relative to the walk's root) the glob did not match; a symlink is not looked at (it may lead outside). */
  missed(rel: string, entry: Dirent): void {
    // A walk that does not make paths for a glob answered from the name (`**\/*.ts`) passes "": the name is what it matches.
    if (this.folded !== undefined && !this.matchedAny && this.caseOnly === undefined) {
      const at = rel === "" ? entry.name : rel;
      if (this.folded.match(at) && this.anyDepth?.match(at) !== true) this.caseOnly = at;
    }
    if (this.byName === undefined || this.deeper || !rel.includes(path.sep) || entry.isSymbolicLink()) return;
    this.deeper = this.byName.match(entry.name);
  }

  /**
   * The note on the glob `param` ("" when none, else starting with a line break): a slash-free one that left out deeper
   * entries it names; and when it matched nothing, what it was likely meant as, read from the glob alone.
   */
  note(param: string, root: string): string {
    const pattern = this.pattern;
    if (pattern === undefined || (this.matchedAny && !this.deeper)) return "";
    if (this.deeper) {
      return `\nNote: ${param} holds no /, so it is matched against the entries directly inside the directory searched; **/${escapeControls(pattern)} matches deeper ones too.`;
    }
    if (this.caseOnly !== undefined) {
      const example = escapeControls(this.caseOnly.split(path.sep).join("/"));
      return this.byName !== undefined && this.caseOnly.includes(path.sep)
        ? `\nNote: ${param} matched nothing; **/${escapeControls(pattern)} would match ${example} if letter case were ignored: globs are matched ` +
            "case-sensitively, and one without / only against the entries directly inside the directory searched."
        : `\nNote: ${param} matched nothing, but it matches ${example} if letter case is ignored; globs are matched case-sensitively here.`;
    }
    if (pattern === "") return `\nNote: ${param} is empty, which matches no name; **/* matches every entry.`;
    if (path.isAbsolute(pattern)) {
      const rel = relativeInside(root, pattern);
      const instead = rel === undefined ? "" : `; relative, it is ${escapeControls(rel)}`;
      return `\nNote: ${param} is matched against paths relative to the directory searched, so an absolute one matches nothing${instead}.`;
    }
    if (REGEX_LIKE.test(pattern)) {
      return `\nNote: ${param} is a glob, not a regular expression: * is any run of characters in a name, ** any depth of directories, as in **/*.ts.`;
    }
    return "";
  }
}

// `abs` relative to `root` with / between names, when it lies inside it; else undefined.
function relativeInside(root: string, abs: string): string | undefined {
  const rel = path.relative(root, abs);
  return rel !== "" && !rel.startsWith("..") && !path.isAbsolute(rel) ? rel.split(path.sep).join("/") : undefined;
}

/** A walk's exclude globs: what it asks of each path, and the note on those that left out nothing, written as paths are. */
export interface Excluder {
  readonly excluded: (rel: string) => boolean;
  /** "" or, starting with a line break, a note on the first exclude that left out nothing and is written `./x`, `x/` or absolute. */
  note(root: string): string;
}

const NO_EXCLUDES: Excluder = { excluded: excludesNothing, note: () => "" };

/**
 * A walk's excludes, matched against the path relative to the root (search_files' rules, dotfiles included);
 * `excludesNothing` when there are none, so the walk builds no relative path to ask it with. Each pattern that excludes an
 * entry is marked, at no further cost: one written as a path is, or as a .gitignore line is (`./dist`, `node_modules/`,
 * `/build`), matches no relative path, and left out nothing in silence.
 */
export function excluderOf(patterns: readonly string[]): Excluder {
  if (patterns.length === 0) return NO_EXCLUDES;
  const matchers = patterns.map((p) => new Minimatch(p, { dot: true }));
  const hit = patterns.map(() => false);
  return {
    excluded(rel) {
      for (let i = 0; i < matchers.length; i++) {
        if ((matchers[i] as Minimatch).match(rel)) {
          hit[i] = true;
          return true;
        }
      }
      return false;
    },
    note(root) {
      for (const [i, pattern] of patterns.entries()) {
        if (hit[i]) continue;
        // An absolute one outside the root is taken as a .gitignore line's anchored name (`/build`) when it has one name.
        // Only / separates a glob's names: a backslash escapes the character after it (a trailing one, nothing).
        const anchored = pattern.replace(/^\/+/, "");
        const meant = path.isAbsolute(pattern)
          ? (relativeInside(root, pattern) ?? (anchored.includes("/") ? pattern : anchored))
          : pattern.replace(/^\.\//, "").replace(/\/+$/, "");
        if (meant === pattern || meant === "") continue;
        const shown = escapeControls(meant);
        const forms = meant.includes("/") ? `write ${shown}` : `${shown} leaves out the entry directly inside it, **/${shown} any`;
        const how = path.isAbsolute(pattern) ? "" : ", without ./ before or / after";
        return `\nNote: excludePatterns[${i}] ${escapeControls(pattern)} left out nothing: excludes are matched against paths relative to the directory searched${how}; ${forms}.`;
      }
      return "";
    },
  };
}
