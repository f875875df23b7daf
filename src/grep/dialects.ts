/**
 * Queries that would find nothing, or something else than meant, without a word (SPEC §10: a model must never
 * conclude "absent" without being told): a line break, which no line holds, and the spellings of grep's, PCRE's and
 * ripgrep's regexes that JavaScript without the `u` flag reads as plain letters (`\p{Lu}` as `p{Lu}`, `[[:upper:]]` as
 * a set of `[:uper` then `]`, `\<` as `<`) or refuses with a bare "Invalid group" (`(?i)`).
 */

import { shortened } from "../kernel/escape.js";

/** What other dialects' escapes mean, and what to write instead; JavaScript reads each as the character alone. */
const FOREIGN_ESCAPES: Readonly<Record<string, string>> = {
  "<": "\\< (GNU's start of a word) is read by JavaScript as <: write \\b for a word edge, or < for the character",
  ">": "\\> (GNU's end of a word) is read by JavaScript as >: write \\b for a word edge, or > for the character",
  A: "\\A (the start of the text) is read by JavaScript as A: write ^ for the start of a line",
  Z: "\\Z (the end of the text) is read by JavaScript as Z: write $ for the end of a line",
  z: "\\z (the end of the text) is read by JavaScript as z: write $ for the end of a line",
  h: "\\h (a horizontal space) is read by JavaScript as h: write [ \\t]",
  p: "\\p{…} (a Unicode property) is read by JavaScript as the letter p without the u flag, which this search does not use: list the characters, as [A-Za-zÀ-ÿ]",
  P: "\\P{…} (not a Unicode property) is read by JavaScript as the letter P without the u flag, which this search does not use: list the characters, as [^A-Za-z]",
};

const POSIX_CLASS = /^\[:(alnum|alpha|blank|cntrl|digit|graph|lower|print|punct|space|upper|xdigit|word):\]/;
// (?i) and (?i:…) (ES2025 modifiers, which Node 20 does not read); (?: and (?<name> do not start with a letter.
const INLINE_FLAGS = /^\(\?[a-zA-Z-]+[):]/;

const ONE_LINE =
  "never matches here: each line is matched on its own, without its line break. Match one of the lines instead " +
  "(search_file_contents' contextLines shows the lines around it; edit_file changes text across lines).";

/**
 * Why `query` cannot be searched as meant, or undefined when it can; the text starts with "query".
 * A `\p` or `\<` in a class is read as a letter there too; an escaped backslash is skipped.
 */
export function queryProblem(query: string, regex: boolean): string | undefined {
  if (!regex) {
    return query.includes("\n") ? `query holds a line break, which ${ONE_LINE}` : undefined;
  }
  let inClass = false;
  for (let i = 0; i < query.length; i++) {
    const c = query[i];
    if (c === "\\") {
      const e = query[++i] ?? "";
      const foreign = FOREIGN_ESCAPES[e];
      if (foreign !== undefined && (e === "p" || e === "P" ? query[i + 1] === "{" : true)) return `query: ${foreign}.`;
      if (e === "n" && !inClass) return `query: \\n ${ONE_LINE}`;
    } else if (inClass) {
      const posix = c === "[" && query[i + 1] === ":" ? POSIX_CLASS.exec(query.slice(i, i + 10)) : null;
      if (posix !== null) {
        return `query: [:${posix[1]}:] is a POSIX class, which JavaScript does not have (it reads a set of those characters): write [A-Z], [a-z], [0-9], \\s or \\w instead.`;
      }
      inClass = c !== "]";
    } else if (c === "[") {
      inClass = true;
      // A class's first character is itself, `]` included (JavaScript's `[]` is an empty class, so only after `^`).
      if (query[i + 1] === "^") i++;
    } else if (c === "(") {
      const flags = INLINE_FLAGS.exec(query.slice(i, i + 12));
      if (flags !== null) {
        return `query: ${flags[0]} is an inline flag, which JavaScript does not have: case is set by caseSensitive (false ignores it), and no flag is needed for . or $, as each line is matched on its own.`;
      }
    }
  }
  return undefined;
}

// What a regex writes and a text seldom holds: an alternation, `.*` or `.+`, an escape of a class or of a character a
// regex must escape, a character range, or `^` before a word (a `$` at the end is left out: prices and shells end so).
const REGEX_LOOK: ReadonlyArray<readonly [RegExp, (m: string) => string]> = [
  [/\\[wdsbWDSB.()[\]{}|+*?]/, (m) => m],
  [/\.[*+]/, (m) => m],
  [/\[[^\]]*[a-zA-Z0-9]-[a-zA-Z0-9][^\]]*\]/, (m) => m],
  [/[^|]\|[^|]/, () => "|"],
  [/^\^[\w\\([]/, () => "^ at its start"],
];

/**
 * For a text query (regex: false) that found nothing: a note when it is written as a regex (`foo|bar`, `get.*Path`,
 * `\w+`), which was searched for as those very characters; "" otherwise.
 */
export function literalNote(query: string): string {
  for (const [look, shown] of REGEX_LOOK) {
    const m = look.exec(query);
    if (m !== null) {
      return `\nNote: query holds ${shortened(shown(m[0]), 20)}, as a regex does, and was searched for as text (regex: false); pass regex: true to search for the pattern.`;
    }
  }
  return "";
}
