/**
 * One `.gitignore` compiled once (SPEC §10, §11): git's line syntax (comments,
 * `!`, `\` escapes, trailing spaces, a trailing `/` for directories only, a
 * `/` at the start or in the middle anchoring the rule to the file's
 * directory), and its verdict on a path in time that does not grow with the
 * number of plain rules: names and paths without wildcards, and `*x` / `x*`
 * names, are looked up in maps; only the other rules run wildmatch, and those
 * too costly to run on every entry are left out and reported, never dropped
 * in silence.
 */
import { compileGlob, matchBasename, matchPath, type Glob } from "./wildmatch.js";

/** A rule whose pattern runs wildmatch is left out when it has more wildcards than this. */
export const MAX_RULE_WILDCARDS = 64;
/** … or is longer than this, in bytes. */
export const MAX_RULE_BYTES = 1024;
/** Wildcards of all the wildmatch rules of one file together; rules past this are left out. */
export const MAX_FILE_WILDCARDS = 8192;
// Lines compiled between turns of the event loop, so a 1 MiB file never holds it for long.
const LINES_PER_SLICE = 4096;

/** A rule left out because matching it would cost too much, with why. */
export interface CostlyRule {
  line: number;
  pattern: string;
  why: string;
}

// The verdict of one file on one path: no rule matches, the last match ignores it, or it re-includes it.
const NONE = 0;
/** The last matching rule ignores the path. */
export const IGNORED = 1;
/** The last matching rule is a negation: the path is included again. */
export const REINCLUDED = 2;
/** One of NONE (no rule matches), IGNORED, REINCLUDED. */
export type Verdict = typeof NONE | typeof IGNORED | typeof REINCLUDED;

/** The path asked about, relative to the walk's root with "/", and what the filter knows of it. */
export interface Subject {
  readonly name: string;
  readonly isDir: boolean;
  /** The path relative to the `.gitignore`'s directory. */
  readonly relative: string;
  /** The whole path's UTF-8 bytes and its components' starts, made once per entry and only when a wildmatch rule asks. */
  bytes(): { path: Uint8Array; starts: Int32Array; name: Uint8Array };
  /** Index in `starts` of the first component below the `.gitignore`'s directory. */
  readonly first: number;
}

/** The last (highest) rule index a key is matched by, for any entry and for directories only. */
interface Last {
  any: number;
  dir: number;
}

interface GlobRule {
  index: number;
  glob: Glob;
  dirOnly: boolean;
  basename: boolean;
  /** Literal text every match starts with (relative to the file's directory, or the name). */
  prefix: string;
}

function note(map: Map<string, Last>, key: string, index: number, dirOnly: boolean): void {
  let last = map.get(key);
  if (last === undefined) map.set(key, (last = { any: -1, dir: -1 }));
  if (dirOnly) last.dir = index;
  else last.any = index;
}

const best = (last: Last | undefined, isDir: boolean, than: number): number =>
  last === undefined ? than : Math.max(than, last.any, isDir ? last.dir : -1);

// git's trim_trailing_spaces: unescaped trailing spaces go, an escaped one stays, and a trailing
// backslash stops the trimming.
function trimTrailingSpaces(line: string): string {
  let cut = -1;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === " ") {
      if (cut < 0) cut = i;
    } else if (c === "\\") {
      if (++i >= line.length) return line;
      cut = -1;
    } else {
      cut = -1;
    }
  }
  return cut < 0 ? line : line.slice(0, cut);
}

const WILDCARD = /[*?[\\]/;
const literalPrefix = (pattern: string): string => {
  const at = pattern.search(WILDCARD);
  return at < 0 ? pattern : pattern.slice(0, at);
};

/** The text a pattern without wildcards stands for (its escapes undone); undefined when it has wildcards or ends in a lone backslash. */
function literalOf(pattern: string): string | undefined {
  if (!WILDCARD.test(pattern)) return pattern;
  let out = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === "*" || c === "?" || c === "[") return undefined;
    if (c === "\\") {
      if (++i >= pattern.length) return undefined;
      out += pattern[i];
    } else {
      out += c;
    }
  }
  return out;
}

// A costly rule is named in a note: its line as written, within reason.
const SHOWN_CHARS = 120;
const shownLine = (text: string): string => (text.length <= SHOWN_CHARS ? text : `${text.slice(0, SHOWN_CHARS)}…`);

/** The compiled rules of one `.gitignore`. */
export class RuleSet {
  private readonly negated: boolean[] = [];
  private readonly names = new Map<string, Last>();
  private readonly paths = new Map<string, Last>();
  // `*x` and `x*` names, by the length of x; lengths kept sorted for the lookups.
  private readonly suffixes = new Map<number, Map<string, Last>>();
  private readonly prefixes = new Map<number, Map<string, Last>>();
  private suffixLengths: number[] = [];
  private prefixLengths: number[] = [];
  /** Wildmatch rules, in file order. */
  private readonly globs: GlobRule[] = [];
  private wildcards = 0;
  /** Rules left out as too costly, in file order. */
  readonly costly: CostlyRule[] = [];

  /** Adds the rule on (1-based) line `line`; blank lines and comments add nothing. */
  add(raw: string, line: number): void {
    // git reads lines up to "\n" and drops one "\r" before it.
    const text = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (text === "" || text.startsWith("#")) return;
    let pattern = trimTrailingSpaces(text);
    const negated = pattern.startsWith("!");
    if (negated) pattern = pattern.slice(1);
    const dirOnly = pattern.endsWith("/");
    if (dirOnly) pattern = pattern.slice(0, -1);
    // An empty pattern ("!", "/", spaces) matches nothing, as in git.
    if (pattern === "") return;
    const basename = !pattern.includes("/");
    if (pattern.startsWith("/")) pattern = pattern.slice(1);
    const index = this.negated.push(negated) - 1;
    const literal = literalOf(pattern);
    if (literal !== undefined) {
      note(basename ? this.names : this.paths, literal, index, dirOnly);
      return;
    }
    if (basename && this.indexAffix(pattern, index, dirOnly)) return;
    this.addGlob(pattern, shownLine(text), line, index, dirOnly, basename);
  }

  // "*x" and "x*" names with a literal x (no other wildcard, no escape): looked up, not matched.
  private indexAffix(pattern: string, index: number, dirOnly: boolean): boolean {
    const stars = /^(\**)([^*?[\\]*)(\**)$/.exec(pattern);
    if (stars === null) return false;
    const [, lead = "", middle = "", trail = ""] = stars;
    // "*" alone is a suffix of length 0, which every name has.
    if (lead !== "" && trail !== "") return false;
    const byLength = lead !== "" ? this.suffixes : this.prefixes;
    let map = byLength.get(middle.length);
    if (map === undefined) {
      byLength.set(middle.length, (map = new Map()));
      const lengths = [...byLength.keys()].sort((a, b) => a - b);
      if (lead !== "") this.suffixLengths = lengths;
      else this.prefixLengths = lengths;
    }
    note(map, middle, index, dirOnly);
    return true;
  }

  private addGlob(pattern: string, shown: string, line: number, index: number, dirOnly: boolean, basename: boolean): void {
    const bytes = Buffer.byteLength(pattern);
    const glob = bytes > MAX_RULE_BYTES ? null : compileGlob(pattern, !basename);
    // git's wildmatch gives up on a malformed class or a trailing backslash: such a rule matches nothing.
    if (glob === undefined) return;
    let why: string | undefined;
    if (glob === null) why = `${bytes} bytes; the limit is ${MAX_RULE_BYTES}`;
    else if (glob.wildcards > MAX_RULE_WILDCARDS) why = `${glob.wildcards} wildcards; the limit is ${MAX_RULE_WILDCARDS}`;
    else if (this.wildcards + glob.wildcards > MAX_FILE_WILDCARDS) why = `its wildcards would pass the limit of ${MAX_FILE_WILDCARDS} for one file`;
    if (glob === null || why !== undefined) {
      this.costly.push({ line, pattern: shown, why: why ?? "" });
      return;
    }
    this.wildcards += glob.wildcards;
    this.globs.push({ index, glob, dirOnly, basename, prefix: literalPrefix(pattern) });
  }

  /** The verdict on `s`: the last rule of this file that matches it decides. */
  test(s: Subject): Verdict {
    const { name, isDir, relative } = s;
    let last = best(this.names.get(name), isDir, -1);
    if (this.paths.size > 0) last = best(this.paths.get(relative), isDir, last);
    for (const n of this.suffixLengths) {
      if (n > name.length) break;
      last = best(this.suffixes.get(n)!.get(name.slice(name.length - n)), isDir, last);
    }
    for (const n of this.prefixLengths) {
      if (n > name.length) break;
      last = best(this.prefixes.get(n)!.get(name.slice(0, n)), isDir, last);
    }
    // Later rules first: the first that matches beats every earlier one, and an earlier rule than
    // one already matched needs no test.
    for (let i = this.globs.length - 1; i >= 0; i--) {
      const rule = this.globs[i]!;
      if (rule.index <= last) break;
      if ((rule.dirOnly && !isDir) || !(rule.basename ? name : relative).startsWith(rule.prefix)) continue;
      const b = s.bytes();
      if (rule.basename ? matchBasename(rule.glob, b.name) : matchPath(rule.glob, b.path, b.starts, s.first)) {
        last = rule.index;
        break;
      }
    }
    if (last < 0) return NONE;
    return this.negated[last] ? REINCLUDED : IGNORED;
  }
}

/** Compiles the text of one `.gitignore`, giving the event loop a turn between slices of lines. */
export async function compileRules(text: string): Promise<RuleSet> {
  const rules = new RuleSet();
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    if (i > 0 && i % LINES_PER_SLICE === 0) await new Promise<void>((resolve) => setImmediate(resolve));
    rules.add(lines[i]!, i + 1);
  }
  return rules;
}
