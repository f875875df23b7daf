/**
 * The one escaping (src/escape.ts) as a type: only escapeControls makes a
 * `Shown` and only jsonName a `ShownJson`, so a formatter that takes one
 * refuses raw text at compile time (the @ts-expect-error lines fail
 * `npm run typecheck` if that ever stops being true), and escaping a path in
 * pieces gives what escaping it whole gives. The escaping table itself is
 * tested in resolve-inside.test.ts.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { escapeControls, jsonName, jsonNameLength, shortened, type Shown, type ShownJson } from "../../../src/kernel/escape.js";
import { fileEntry } from "../../../src/grep/format.js";

describe("Shown", () => {
  it("is made only by escapeControls; raw text does not type-check where a formatter wants it", () => {
    // @ts-expect-error a raw string is not Shown
    const raw: Shown = "a\nb";
    // @ts-expect-error a JSON name is not a Shown path, nor the reverse
    const crossed: Shown = jsonName("a");
    // @ts-expect-error a Shown path is not a JSON name
    const json: ShownJson = escapeControls("a");
    // @ts-expect-error fileEntry takes the path as shown
    expect(fileEntry("/d/x\ny", 2, 3)).toBe("/d/x\ny: 2 matching lines, 3 occurrences");
    expect(fileEntry(escapeControls("/d/x\ny"), 1, 1)).toBe("/d/x\\ny: 1 matching line, 1 occurrence");
    expect([raw, crossed, json]).toEqual(["a\nb", '"a"', "a"]);
  });

  it("escaping in pieces equals escaping whole, so a directory and a name may be escaped apart", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), fc.string({ unit: "binary" }), (dir, name) => {
        expect(escapeControls(dir) + escapeControls(name)).toBe(escapeControls(dir + name));
      }),
    );
  });
});

describe("jsonName", () => {
  it("quotes a plain name as JSON.stringify does, and still escapes bidi and zero-width characters", () => {
    expect(jsonName("plain name.txt")).toBe(JSON.stringify("plain name.txt"));
    expect(jsonName('q"b\\')).toBe(JSON.stringify('q"b\\'));
    for (const ch of ["\u202a", "\u202e", "\u2066", "\u2069", "\u200b", "\u200d", "\u200e", "\u200f", "\u2060", "\ufeff", "\u2028", "\u0085"]) {
      const code = ch.charCodeAt(0).toString(16).padStart(4, "0");
      expect(jsonName(`a${ch}b`)).toBe(`"a\\u${code}b"`);
    }
  });
});

describe("plain ASCII checked by a loop, the rest by the patterns", () => {
  // Printable ASCII around one character that must be escaped, anywhere in the name: the loop must not pass over it.
  const around = (specials: string[]) =>
    fc.tuple(fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)) }), fc.constantFrom(...specials), fc.nat());
  const C0_AND_C1 = [...Array(0x20).keys(), ...Array.from({ length: 0x21 }, (_, i) => 0x7f + i)].map((c) => String.fromCharCode(c));
  const WIDE = ["\u2028", "\u2029", "\u200b", "\u200f", "\u202a", "\u202e", "\u2060", "\u2066", "\u2069", "\ufeff"];
  const insert = ([text, ch, at]: [string, string, number]): string =>
    text.slice(0, at % (text.length + 1)) + ch + text.slice(at % (text.length + 1));

  it("escapes a control, separator, bidi or zero-width character wherever it stands among plain ASCII", () => {
    fc.assert(
      fc.property(around([...C0_AND_C1, ...WIDE]), (parts) => {
        const name = insert(parts);
        expect(escapeControls(name)).not.toBe(name);
        expect(escapeControls(name)).not.toContain(parts[1]);
        expect(jsonName(name)).not.toContain(parts[1]);
      }),
    );
  });

  it("quotes a plain ASCII name as JSON.stringify does, quote and backslash included", () => {
    fc.assert(
      fc.property(around(['"', "\\", "a"]), (parts) => {
        const name = insert(parts);
        expect(jsonName(name)).toBe(JSON.stringify(name));
        expect(escapeControls(name)).toBe(name);
      }),
    );
  });

  it("counts the length of jsonName exactly, for any name", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), (name) => {
        expect(jsonNameLength(name)).toBe(jsonName(name).length);
      }),
    );
    expect(jsonNameLength('a"b')).toBe(6);
    expect(jsonNameLength("a\u0001")).toBe(9);
  });
});

describe("shortened", () => {
  it("escapes, and past the bound cuts to it with an ellipsis, never between a surrogate pair's halves", () => {
    expect(shortened("a\nb", 40)).toBe("a\\nb");
    expect(shortened("x".repeat(40), 40)).toBe("x".repeat(40));
    expect(shortened("x".repeat(41), 40)).toBe(`${"x".repeat(40)}…`);
    // An emoji across the bound: its high half would be the 40th character, so the cut comes before it.
    expect(shortened(`${"x".repeat(39)}😀tail`, 40)).toBe(`${"x".repeat(39)}…`);
    expect(shortened(`${"\t".repeat(41)}`, 40)).toBe(`${"\\t".repeat(40)}…`);
  });
});
