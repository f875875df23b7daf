/**
 * Limits on glob patterns (issue 5): matching costs one test per entry and per
 * brace alternative, and `{a,b}` twenty times over is a million alternatives
 * (seconds per entry, gigabytes to build), so alternatives are limited per
 * pattern and over all the patterns of a call.
 */
import { braceExpand, Minimatch } from "minimatch";
import { formatCount } from "../kernel/bounded.js";
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

/**
 * A walk's `excluded` from its exclude globs, matched against the path relative to the root (search_files' rules, dotfiles
 * included); `excludesNothing` when there are none, so the walk builds no relative path to ask it with.
 */
export function excluderOf(patterns: readonly string[]): (rel: string) => boolean {
  if (patterns.length === 0) return excludesNothing;
  const matchers = patterns.map((p) => new Minimatch(p, { dot: true }));
  return (rel) => matchers.some((m) => m.match(rel));
}
