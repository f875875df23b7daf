/**
 * Turns search_file_contents' `query`, `regex` and `caseSensitive` into the
 * matching plan the scanner runs (SPEC §10): what runs on bytes, what needs a
 * decoded line, and whether the plan must run isolated from the event loop.
 */

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
 * - `never`: a literal holding a line feed cannot occur inside a line.
 */
type Strategy = "bytes" | "foldedBytes" | "latin1" | "latin1+wide" | "perLine" | "never";

/** A compiled query; plain data plus regexes, rebuilt from `spec` inside a worker. */
export interface Query {
  spec: Required<QuerySpec>;
  strategy: Strategy;
  /** UTF-8 bytes of a literal query (strategy `bytes`), A-Z lowered for `foldedBytes`. */
  bytes: Buffer;
  /** Global multiline search over a chunk; finds candidate lines. */
  chunkRe: RegExp;
  /** Non-global test of one line's text: the definition of a match. */
  lineRe: RegExp;
  /** True for user regexes, which may backtrack catastrophically. */
  mayBacktrack: boolean;
  /**
   * No assertion (`^ $ \b \B`, lookaround) in the expression: whether it
   * matches a run of characters does not depend on what surrounds the run, so a
   * hit inside an ASCII line's text needs no second test.
   */
  contextFree: boolean;
}

const ASSERTION = /[\^$]|\\[bB]|\(\?<?[=!]/;

/** Characters that make a literal special inside a regex source. */
const SPECIAL = /[\\^$.*+?()[\]{}|/]/g;

// Tokens that can match a non-ASCII character (or whose meaning we do not try
// to prove ASCII-only); any of them rules out the exact Latin-1 view.
const WIDE_TOKEN = /[^\x00-\x7f]|\\[WSDsuxcpPk0-9]|\.|\[\^/;
const LOOKAROUND = /\(\?<?[=!]/;

/**
 * Compiles a query.
 * @throws when `query` is empty, or is an invalid regular expression (quoting the engine's message)
 */
export function compileQuery(input: QuerySpec): Query {
  const spec = { query: input.query, regex: input.regex ?? false, caseSensitive: input.caseSensitive ?? false };
  if (spec.query.length === 0) throw new Error("query must not be empty");
  const source = spec.regex ? spec.query : spec.query.replace(SPECIAL, "\\$&");
  const flags = spec.caseSensitive ? "" : "i";
  let lineRe: RegExp;
  let chunkRe: RegExp;
  try {
    lineRe = new RegExp(source, flags);
    chunkRe = new RegExp(source, `gm${flags}`);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    throw new Error(`query is not a valid regular expression (regex: true): ${message}`, { cause: err });
  }
  return {
    spec,
    strategy: strategyOf(spec, source),
    bytes: Buffer.from(spec.caseSensitive ? spec.query : spec.query.replace(/[A-Z]+/g, (u) => u.toLowerCase()), "utf8"),
    chunkRe,
    lineRe,
    mayBacktrack: spec.regex,
    contextFree: !spec.regex || !ASSERTION.test(source),
  };
}

function strategyOf(spec: Required<QuerySpec>, source: string): Strategy {
  if (!spec.regex) {
    if (spec.query.includes("\n")) return "never";
    // U+FFFD in the query can match an invalid byte, which only a decoded line shows.
    if (spec.caseSensitive && !spec.query.includes("\ufffd")) return "bytes";
    return /[^\x00-\x7f]/.test(spec.query) ? "latin1+wide" : "foldedBytes";
  }
  if (LOOKAROUND.test(source)) return "perLine";
  return WIDE_TOKEN.test(source) ? "latin1+wide" : "latin1";
}
