/**
 * search_files' glob test of one entry (SPEC §6): minimatch's `match` with `dot: true`, which splits and
 * walks every path it is given (a fifth of a 100,000-entry search, and most of its garbage), answered
 * from the entry's name alone for the two commonest forms, `**\/*<suffix>` and `**\/<name>` with plain
 * characters only: with `dot` set, `**` takes any run of components and `*` any run of characters
 * within one, so such a pattern holds exactly when the last component ends with, or is, the text.
 */
import { Minimatch } from "minimatch";

/** Whether the entry at `rel` (relative to the walk's root; `name` is its last component) matches; `byName` when `rel` is never read. */
export type EntryMatch = ((rel: string, name: string) => boolean) & { readonly byName?: boolean };

// `**/` then an optional `*`, then characters minimatch gives no meaning (no magic, no separator, no brace).
const ANY_DEPTH = /^\*\*\/(\*?)([A-Za-z0-9._-]+)$/;

/** The test of `pattern` against walked entries, the same as `new Minimatch(pattern, { dot: true }).match(rel)`. */
export function entryMatcher(pattern: string): EntryMatch {
  const form = ANY_DEPTH.exec(pattern);
  const text = form?.[2];
  if (form !== null && text !== undefined) {
    if (form[1] === "*") return Object.assign((_rel: string, name: string) => name.endsWith(text), { byName: true });
    // A walk's names are never `.` or `..`, which minimatch keeps `**` from taking.
    if (text !== "." && text !== "..") return Object.assign((_rel: string, name: string) => name === text, { byName: true });
  }
  const matcher = new Minimatch(pattern, { dot: true });
  return (rel) => matcher.match(rel);
}
