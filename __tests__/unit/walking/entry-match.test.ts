/**
 * search_files' shortcut past minimatch (walking/entry-match.ts): for every pattern, the answer on each
 * entry equals minimatch's `match` with `dot: true`, the shortcut forms and the ones left to minimatch alike.
 */
import { Minimatch } from "minimatch";
import { describe, expect, it } from "vitest";
import { entryMatcher } from "../../../src/walking/entry-match.js";

const NAMES = (
  "a.txt .txt txt a.txt.bak a.TXT atxt .hidden.txt x.md README.md readme.md .README.md README.md.txt é.txt 日本.txt " +
  "star*.txt back\\slash.txt q?.txt [a].txt a.tx ..txt x_-9.txt"
)
  .split(" ")
  .concat(["sp ace.txt"]);
const DIRS = ["", "src", ".git", "a/b", ".x/.y", "dir.txt", "README.md"];
const RELS = DIRS.flatMap((d) => NAMES.map((n) => (d === "" ? n : `${d}/${n}`)));

describe("entryMatcher equals minimatch (dot: true) on walked entries", () => {
  it.each([
    "**/*.txt",
    "**/*.md",
    "**/*txt",
    "**/.txt",
    "**/README.md",
    "**/a.txt",
    "**/*_-9.txt",
    // Left to minimatch: not of the two forms.
    "*.txt",
    "**/*",
    "src/**/*.txt",
    "**/*.{txt,md}",
    "**/*.[tT]xt",
    "**/?.txt",
    "**/..",
    "!**/*.txt",
  ])("%s", (pattern) => {
    const reference = new Minimatch(pattern, { dot: true });
    const fast = entryMatcher(pattern);
    const nameOf = (rel: string): string => rel.slice(rel.lastIndexOf("/") + 1);
    const differing = RELS.filter((rel) => fast(rel, nameOf(rel)) !== reference.match(rel));
    expect(differing).toEqual([]);
    // A matcher that says it answers from the name alone (the walk then makes no path for it) never reads the path.
    expect(fast.byName === true).toBe(/^\*\*\/\*?[A-Za-z0-9._-]+$/.test(pattern) && pattern !== "**/..");
    if (fast.byName) expect(RELS.filter((rel) => fast("", nameOf(rel)) !== reference.match(rel))).toEqual([]);
    // The corpus holds matches and non-matches of each shortcut pattern, so equality is not trivial.
    if (pattern.startsWith("**/") && !pattern.includes("{")) expect(RELS.some((rel) => reference.match(rel))).toBe(pattern !== "**/..");
  });
});
