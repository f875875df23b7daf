// Reading a regex's source (SPEC §10, §16): what a quantifier allows, checked against the engine
// itself, and where a class, group or escape ends, its escapes and operands never read as plain text.
import { describe, expect, it } from "vitest";
import { classEnd, escapeEnd, quantifierOf, skipNested } from "../../../src/grep/regex-source.js";

/** Checks `end(source, start)` for each `[source, start, expected end]` of `cases`, each named by its source. */
function expectEnds(end: (source: string, start: number) => number, cases: readonly [string, number, number][]): void {
  for (const [source, start, expected] of cases) expect(end(source, start), source).toBe(expected);
}

describe("quantifierOf", () => {
  it("reads each form, greedy or lazy, with its length and counts", () => {
    const cases: [string, { length: number; min: number; max: number | undefined }][] = [
      ["+", { length: 1, min: 1, max: undefined }],
      ["*", { length: 1, min: 0, max: undefined }],
      ["?", { length: 1, min: 0, max: 1 }],
      ["{3}", { length: 3, min: 3, max: 3 }],
      ["{3,}", { length: 4, min: 3, max: undefined }],
      ["{2,15}", { length: 6, min: 2, max: 15 }],
      ["{0,0}", { length: 5, min: 0, max: 0 }],
      ["+?", { length: 2, min: 1, max: undefined }],
      ["*?", { length: 2, min: 0, max: undefined }],
      ["??", { length: 2, min: 0, max: 1 }],
      ["{2,5}?", { length: 6, min: 2, max: 5 }],
      // Only one lazy mark belongs to it; what follows is the source's next piece.
      ["{4}?x", { length: 4, min: 4, max: 4 }],
      ["+??", { length: 2, min: 1, max: undefined }],
    ];
    for (const [text, q] of cases) expect(quantifierOf(text), text).toEqual(q);
  });

  it("agrees with the engine on how many repetitions each form takes", () => {
    for (const form of ["+", "*", "?", "{3}", "{3,}", "{2,5}", "{0,1}", "{1,3}?"]) {
      const q = quantifierOf(form);
      if (q === undefined) throw new Error(`no quantifier in ${form}`);
      const re = new RegExp(`^a${form}$`);
      expect(re.test("a".repeat(q.min)), form).toBe(true);
      if (q.min > 0) expect(re.test("a".repeat(q.min - 1)), form).toBe(false);
      if (q.max === undefined) expect(re.test("a".repeat(q.min + 50)), form).toBe(true);
      else expect([re.test("a".repeat(q.max)), re.test("a".repeat(q.max + 1))], form).toEqual([true, false]);
    }
  });

  it("reads at an offset, and finds none where the text holds plain characters", () => {
    expect(quantifierOf("ab{2,}c", 2)).toEqual({ length: 4, min: 2, max: undefined });
    expect(quantifierOf("ab{2,}c", 1)).toBeUndefined();
    expect(quantifierOf("a+", 2)).toBeUndefined();
    // Without the u flag these are characters, not quantifiers.
    for (const text of ["", "a", "{", "{a}", "{,3}", "{2", "{2,", "{2,3", "{ 2}", "}", "x+"]) {
      expect(quantifierOf(text), text).toBeUndefined();
    }
  });
});

describe("classEnd", () => {
  it("ends at the first unescaped ] after the opening one, and -1 when none", () => {
    expectEnds(classEnd, [
      ["[abc]d", 0, 5],
      ["x[y]z", 1, 4],
      // An escaped ] or backslash does not close it.
      ["[\\]]x", 0, 4],
      ["[a\\\\]b", 0, 5],
      ["[.,\\]]+b", 0, 6],
      // JavaScript's [] is an empty class: a ] first closes it.
      ["[]a]", 0, 2],
      ["[^]a]", 0, 3],
      ["[ab", 0, -1],
      ["[a\\]", 0, -1],
    ]);
  });
});

describe("skipNested", () => {
  it("ends after the group's closing parenthesis, past nested groups, classes and escapes", () => {
    expectEnds(skipNested, [
      ["(a)b", 0, 3],
      ["(a(b)c)d", 0, 7],
      ["(a[)]b)c", 0, 7],
      ["(a\\)b)c", 0, 6],
      ["x(?:y|z)+", 1, 8],
      // Never closed: the source's end.
      ["(ab", 0, 3],
    ]);
  });
});

describe("escapeEnd", () => {
  it("takes the operand of the escape's letter with it", () => {
    expectEnds(escapeEnd, [
      ["\\x41b", 0, 4],
      ["\\u{1F600}z", 0, 9],
      ["\\u0041z", 0, 6],
      ["\\cAz", 0, 3],
      ["\\k<name>z", 0, 8],
      ["\\12z", 0, 3],
      ["\\dz", 0, 2],
      ["\\.+", 0, 2],
      // A short operand ends where its digits do.
      ["\\x4g", 0, 3],
      ["a\\x41", 1, 5],
    ]);
  });
});
