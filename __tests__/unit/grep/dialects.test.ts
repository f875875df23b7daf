/**
 * Queries that would find nothing, or something else than meant, are refused naming what to write instead
 * (dialects.ts): each refused regex is shown first to be read by JavaScript otherwise than its dialect means.
 */
import { describe, expect, it } from "vitest";
import { literalNote, queryProblem } from "../../../src/grep/dialects.js";
import { compileQuery } from "../../../src/grep/query.js";

describe("queryProblem", () => {
  it.each([
    // source, a line its dialect matches, what the refusal names
    ["\\p{Lu}\\p{Ll}+", "Word", "\\p{…} (a Unicode property)"],
    ["[\\p{L}]+", "word", "\\p{…} (a Unicode property)"],
    ["\\P{L}", "1", "\\P{…} (not a Unicode property)"],
    ["[[:upper:]]+", "WORD", "[:upper:] is a POSIX class"],
    ["^[[:space:][:digit:]]+$", " 12 ", "[:space:] is a POSIX class"],
    ["\\<word\\>", "a word here", "\\< (GNU's start of a word)"],
    ["\\Aword", "word", "\\A (the start of the text)"],
    ["end\\z", "the end", "\\z (the end of the text)"],
    ["end\\Z", "the end", "\\Z (the end of the text)"],
    ["a\\hb", "a b", "\\h (a horizontal space)"],
  ])("%s, which JavaScript reads otherwise, is refused", (source, meant, named) => {
    expect(new RegExp(source, "i").test(meant)).toBe(false);
    expect(queryProblem(source, true)).toContain(named);
    expect(() => compileQuery({ query: source, regex: true })).toThrow(named);
  });

  it.each(["(?i)needle", "(?s)a.b", "(?im)x", "(?-i)x", "(?i:x)"])("%s, an inline flag, is refused saying how case is set", (source) => {
    expect(queryProblem(source, true)).toMatch(/is an inline flag, which JavaScript does not have: case is set by caseSensitive/);
  });

  it("a line break never matches: \\n in a regex, a line feed in a literal", () => {
    expect(queryProblem("foo\\nbar", true)).toMatch(/^query: \\n never matches here: each line is matched on its own/);
    expect(queryProblem("foo\nbar", false)).toMatch(/^query holds a line break, which never matches here/);
    expect(() => compileQuery({ query: "foo\nbar" })).toThrow(/edit_file changes text across lines/);
  });

  it.each([
    "[^\\n]+bar",
    "a\\\\nb",
    "a\\\\p{L}",
    "(?:a|b)",
    "(?<name>x)\\k<name>",
    "(?<=a)b",
    "(?!a)b",
    "[]a]",
    "[:upper:]",
    "\\bword\\b",
    "\\d{4}-\\d{2}",
    "\\$\\{[A-Z_]+\\}",
    "p{1,2}",
    "<div>",
  ])("%s, read as its writer means, passes", (source) => {
    expect(queryProblem(source, true)).toBeUndefined();
    expect(() => compileQuery({ query: source, regex: true })).not.toThrow();
  });

  it("a literal is never read as a regex", () => {
    for (const literal of ["\\p{L}", "[[:upper:]]", "(?i)x", "\\<a\\>", "a\\nb"]) expect(queryProblem(literal, false)).toBeUndefined();
  });
});

describe("literalNote", () => {
  it.each([
    // a text query written as a regex, a line the regex matches, what the note names
    ["foo|bar", "bar baz", "|"],
    ["function.*Path", "function getPath(", ".*"],
    ["get\\w+\\(", "getPath(x)", "\\w"],
    ["[a-z]+ two", "one two", "[a-z]"],
    ["^bar", "bar two", "^ at its start"],
    ["a\\.b", "a.b", "\\."],
    // Shown cut at 20 characters.
    ["[a-zA-Z0-9_.,;:!?@#%&-]+ end", "word end", "[a-zA-Z0-9_.,;:!?@#%…"],
  ])("%s: searched as text it misses %s; the note names %s", (query, line, named) => {
    // As text the query is not in the line; as a regex it matches it: the note points at what was meant.
    expect(line.includes(query)).toBe(false);
    expect(new RegExp(query).test(line)).toBe(true);
    expect(literalNote(query)).toBe(
      `\nNote: query holds ${named}, as a regex does, and was searched for as text (regex: false); pass regex: true to search for the pattern.`,
    );
  });

  it.each(["a || b", "price: $", "x = y", "[x]", "C:\\Users", "^", "?? or ...", "a-b"])("%s reads as text: no note", (query) => {
    expect(literalNote(query)).toBe("");
  });
});
