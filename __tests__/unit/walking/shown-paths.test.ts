/**
 * A walk's shown paths (walking/walker.ts ShownPaths): each directory is escaped once for all of its
 * entries, and every entry still reads exactly as its whole path escaped — also when the walk comes
 * back to a directory after another, and for a directory given with or without its trailing separator.
 */
import path from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { escapeControls } from "../../../src/kernel/escape.js";
import { joinDir, ShownPaths } from "../../../src/walking/walker.js";

const dirs = fc.constantFrom(
  `${path.sep}plain`,
  `${path.sep}tab\there${path.sep}`,
  `${path.sep}bidi\u202eexe`,
  `${path.sep}nl\nx${path.sep}`,
  path.sep,
);

describe("ShownPaths", () => {
  it("shows each entry as its whole path escaped, over any order of directories", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(dirs, fc.string({ unit: "binary", maxLength: 12 })), { maxLength: 40 }), (entries) => {
        const shown = new ShownPaths();
        for (const [dir, name] of entries) expect(shown.entry(dir, name)).toBe(escapeControls(joinDir(dir, name)));
      }),
    );
  });

  it("gives a directory one trailing separator, escaped", () => {
    const shown = new ShownPaths();
    expect(shown.dir(`${path.sep}a\tb`)).toBe(`${path.sep}a\\tb${path.sep}`);
    expect(shown.dir(`${path.sep}a\tb${path.sep}`)).toBe(`${path.sep}a\\tb${path.sep}`);
    expect(shown.dir(path.sep)).toBe(path.sep);
  });
});
