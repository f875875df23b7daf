/**
 * Turns search_file_contents' `query`, `regex` and `caseSensitive` into the
 * matching plan the scanner runs (SPEC §10): what runs on bytes, what needs a
 * decoded line, and whether the plan must run isolated from the event loop.
 */
import { queryProblem } from "./dialects.js";
import { lineStartSource, locatorSource } from "./locator.js";
import { requiredLiterals } from "./required-literal.js";
import { requiredSegment } from "./required-segment.js";

/** The query as the tool receives it. */
export interface QuerySpec {
  query: string;
  /** `query` is a JavaScript regular expression source. @default false */
  regex?: boolean;
  /** @default false */
  caseSensitive?: boolean;
}

/**
 * How lines are found:
 * - `bytes`: Buffer#indexOf of the query's UTF-8 bytes (case-sensitive literal);
 * - `foldedBytes`: the same over a copy of the chunk with A-Z lowered (ASCII
 *   literal, any case: no other character folds to an ASCII one);
 * - `latin1`: a regex over the chunk viewed as Latin-1, exact because the
 *   expression can only match ASCII characters;
 * - `latin1+wide`: as `latin1` for ASCII lines, and every line holding a
 *   non-ASCII byte is decoded and tested on its own;
 * - `perLine`: every line is decoded and tested (lookarounds can see past a line's end in a chunk);
 * - `prefilter` / `foldedPrefilter`: a regex with a literal every match holds (required-literal.ts):
 *   lines holding its bytes (A-Z lowered for any case) are found as for `bytes`, and only they are
 *   decoded and tested;
 * - `segment`: a regex past ASCII without a required literal, but with a rare run of ASCII classes every
 *   match holds (required-segment.ts): lines where it hits the Latin-1 view are decoded and tested.
 */
type Strategy = "bytes" | "foldedBytes" | "prefilter" | "foldedPrefilter" | "segment" | "latin1" | "latin1+wide" | "perLine";

/** A compiled query; plain data plus regexes, rebuilt from `spec` inside a worker. */
export interface Query {
  spec: Required<QuerySpec>;
  strategy: Strategy;
  /** UTF-8 bytes of a literal query (strategy `bytes`), or a regex's required literal (`prefilter`), A-Z lowered when folded. */
  bytes: Buffer;
  /** Index in `bytes` of the byte least common in source text and prose, which a scan looks for first. */
  rareAt: number;
  /** Global multiline search over a chunk; finds candidate lines (the expression, or its faster locator: locator.ts). */
  chunkRe: RegExp;
  /**
   * `chunkRe` is the expression's locator (locator.ts): each of its hits is a match too (the
   * shortest run of the opening character), but the line's first one may start earlier.
   */
  located: boolean;
  /** For an expression anchored at line starts, the faster search for candidate lines but a view's first (locator.ts `lineStartSource`). */
  startRe: RegExp | undefined;
  /** Global multiline search of a Latin-1 view for the required run of ASCII classes (strategy `segment`). */
  segmentRe: RegExp | undefined;
  /** Non-global test of one line's text: the definition of a match. */
  lineRe: RegExp;
  /** Global search of one line's text: its occurrences. */
  lineReAll: RegExp;
  /**
   * How lines are found without the required literal (`prefilter`, `foldedPrefilter`): where the
   * literal turns out common, testing each line holding it costs more than running the
   * expression over the text (line-finder.ts switches). The strategy itself for the others.
   */
  fallback: Strategy;
  /** True for user regexes, which may backtrack catastrophically. */
  mayBacktrack: boolean;
  /**
   * No assertion (`^ $ \b \B`, lookaround) in the expression: whether it
   * matches a run of characters does not depend on what surrounds the run, so a
   * hit inside an ASCII line's text needs no second test.
   */
  contextFree: boolean;
  /**
   * Nothing in the expression can match a line feed, so no match runs across lines: over a region
   * of whole lines decoded at once, the multiline `chunkRe` finds every line `lineRe` matches, at
   * the same place (SPEC §10), and does no more work than it would line by line.
   */
  blockSafe: boolean;
}

/** A shorter required literal is too common to be worth a first pass. */
const MIN_REQUIRED = 2;
/**
 * A one-character required literal is worth a first pass from this rank of COMMON on (`.` and
 * rarer: punctuation, digits, capitals): `\s[0-9]{4}\.` then looks for its `.` as grep does.
 */
const RARE_SINGLE_RANK = 29;

/** Characters that make a literal special inside a regex source. */
const SPECIAL = /[\\^$.*+?()[\]{}|/]/g;

// Escapes that can match a non-ASCII character (or whose meaning we do not try to prove ASCII-only).
const WIDE_ESCAPE = /[WSDsuxcpPk0-9]/;

/** What a regex source's tokens say about it, read one by one (so `.`, `^` or `$` inside a class, as in `[.,;]`, is the character it is). */
interface SourceTraits {
  /**
   * Every character it can match is ASCII, so the exact Latin-1 view may run it: no `.`, negated
   * class, wide escape or character past ASCII. Even under the `i` flag no character past ASCII
   * folds onto an ASCII one (without the `u` flag, ECMAScript's Canonicalize keeps it).
   */
  ascii: boolean;
  /** It holds an assertion: `^`, `$`, `\b`, `\B` or a lookaround (outside a class). */
  assertion: boolean;
}

function traitsOf(source: string): SourceTraits {
  const traits = { ascii: true, assertion: false };
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i] as string;
    if (c > "\x7f") traits.ascii = false;
    if (c === "\\") {
      const e = source[++i] ?? "";
      if (WIDE_ESCAPE.test(e)) traits.ascii = false;
      if (!inClass && (e === "b" || e === "B")) traits.assertion = true;
    } else if (inClass) {
      inClass = c !== "]";
    } else if (c === "[") {
      if (source[i + 1] === "^") traits.ascii = false;
      inClass = true;
    } else if (c === ".") {
      traits.ascii = false;
    } else if (c === "^" || c === "$" || (c === "(" && LOOKAROUND.test(source.slice(i, i + 4)))) {
      traits.assertion = true;
    }
  }
  return traits;
}
const LOOKAROUND = /\(\?<?[=!]/;
// What may match a line feed, or bound a class range that holds one: a negated class, an escape
// other than \d \w \b \B and escaped punctuation, a control character written as itself.
const MAY_CROSS_LINES = /\[\^|\\[AC-Zace-vx-z0-9]|[\x00-\x1f]/;

/**
 * Compiles a query.
 * @throws when `query` is empty, cannot match as meant (dialects.ts), or is an invalid regular expression (quoting the engine's message)
 */
export function compileQuery(input: QuerySpec): Query {
  const spec = { query: input.query, regex: input.regex ?? false, caseSensitive: input.caseSensitive ?? false };
  if (spec.query.length === 0) throw new Error("query must not be empty");
  const problem = queryProblem(spec.query, spec.regex);
  if (problem !== undefined) throw new Error(problem);
  const source = spec.regex ? spec.query : spec.query.replace(SPECIAL, "\\$&");
  const flags = spec.caseSensitive ? "" : "i";
  let lineRe: RegExp;
  let chunkRe: RegExp;
  let lineReAll: RegExp;
  try {
    lineRe = new RegExp(source, flags);
    lineReAll = new RegExp(source, `g${flags}`);
    chunkRe = new RegExp(source, `gm${flags}`);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    throw new Error(`query is not a valid regular expression (regex: true): ${message}`, { cause: err });
  }
  const located = spec.regex ? locatorOf(source, flags) : undefined;
  const contextFree = !spec.regex || !traitsOf(source).assertion;
  const required = spec.regex ? rarestRun(requiredLiterals(source), spec.caseSensitive) : "";
  const fallback = strategyOf(spec, source);
  const segmentRe = required === "" && spec.regex && fallback === "latin1+wide" ? segmentOf(source, flags) : undefined;
  const strategy = required !== "" ? (spec.caseSensitive ? "prefilter" : "foldedPrefilter") : segmentRe !== undefined ? "segment" : fallback;
  const plain = required !== "" ? required : spec.query;
  const bytes = Buffer.from(spec.caseSensitive ? plain : plain.replace(/[A-Z]+/g, (u) => u.toLowerCase()), "utf8");
  return {
    spec,
    strategy,
    bytes,
    rareAt: rarestByte(bytes),
    chunkRe: located ?? chunkRe,
    located: located !== undefined,
    segmentRe,
    startRe: spec.regex ? compiled(lineStartSource(source), `gm${flags}`) : undefined,
    lineRe,
    lineReAll,
    fallback,
    mayBacktrack: spec.regex,
    contextFree,
    blockSafe: !LOOKAROUND.test(source) && !MAY_CROSS_LINES.test(source),
  };
}

// `source` compiled with `flags`, when it is given and compiles.
function compiled(source: string | undefined, flags: string): RegExp | undefined {
  if (source === undefined) return undefined;
  try {
    return new RegExp(source, flags);
  } catch {
    return undefined;
  }
}

// The locator of `source` compiled for a chunk, when it has one that cannot match an empty string (which would make every line a candidate).
function locatorOf(source: string, flags: string): RegExp | undefined {
  const locator = locatorSource(source);
  if (locator === undefined) return undefined;
  try {
    return new RegExp(locator, flags).test("") ? undefined : new RegExp(locator, `gm${flags}`);
  } catch {
    return undefined;
  }
}

/** A required run of ASCII classes rarer than this (the sum of its atoms' ranks in COMMON: two digits) is worth a first pass. */
const RARE_SEGMENT = 76;

// The search for `source`'s rarest required run of ASCII classes, when one is rare enough.
function segmentOf(source: string, flags: string): RegExp | undefined {
  const rank = (atom: RegExp): number => {
    for (let i = 0; i < COMMON.length; i++) if (atom.test(COMMON[i] as string)) return i;
    return COMMON.length;
  };
  try {
    const segment = requiredSegment(source, flags, rank);
    return segment !== undefined && segment.rarity >= RARE_SEGMENT ? new RegExp(segment.source, `gm${flags}`) : undefined;
  } catch {
    return undefined;
  }
}

// How common a byte is in source code and prose, roughly: space and lower-case letters most, then
// common punctuation and digits, upper-case letters, rare punctuation, and bytes past ASCII least.
const COMMON = " etaoinsrlcdhupmfgybwvkxjqz\n\t.,;()=_\"'0123456789-/:{}[]<>ETAOINSRLCDHUPMFGYBWVKXJQZ";

const rankOf = (byte: number): number => {
  const at = COMMON.indexOf(String.fromCharCode(byte));
  return at < 0 ? COMMON.length : at;
};

// The run whose rarest byte is rarest (fewest lines to test), the longer one of equals; "" when none is worth a first pass.
function rarestRun(runs: string[], caseSensitive: boolean): string {
  let best = "";
  let bestScore = -1;
  for (const run of runs) {
    // A single character is looked for only when it is rare (as the search looks for it: lowered without case).
    const single = run.length === 1 && rankOf((caseSensitive ? run : run.toLowerCase()).charCodeAt(0)) >= RARE_SINGLE_RANK;
    if (run.length < MIN_REQUIRED && !single) continue;
    const bytes = Buffer.from(run, "latin1");
    const score = rankOf(bytes[rarestByte(bytes)] as number) * 1000 + Math.min(run.length, 999);
    if (score > bestScore) {
      best = run;
      bestScore = score;
    }
  }
  return best;
}

function rarestByte(bytes: Buffer): number {
  let best = 0;
  let bestRank = -1;
  for (let i = 0; i < bytes.length; i++) {
    const rank = rankOf(bytes[i] as number);
    if (rank > bestRank) {
      best = i;
      bestRank = rank;
    }
  }
  return best;
}

function strategyOf(spec: Required<QuerySpec>, source: string): Strategy {
  if (!spec.regex) {
    // U+FFFD in the query can match an invalid byte, which only a decoded line shows.
    if (spec.caseSensitive && !spec.query.includes("\ufffd")) return "bytes";
    return /[^\x00-\x7f]/.test(spec.query) ? "latin1+wide" : "foldedBytes";
  }
  if (LOOKAROUND.test(source)) return "perLine";
  return traitsOf(source).ascii ? "latin1" : "latin1+wide";
}
