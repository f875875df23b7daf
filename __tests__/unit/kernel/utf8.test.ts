/** Where UTF-8 stops being valid (kernel/utf8.ts): the first invalid sequence, and a cut that splits no character. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { completePrefix, firstInvalidUtf8 } from "../../../src/kernel/utf8.js";

describe("utf8", () => {
  it("firstInvalidUtf8: where a bad byte is put into valid text, or the text's length", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 40 }), fc.nat(), fc.constantFrom(0xff, 0xc0, 0x80, 0xf5), (text, at, bad) => {
        const valid = Buffer.from(text);
        expect(firstInvalidUtf8(valid)).toBe(valid.length);
        // At a character boundary, so everything before it is valid.
        const cut = completePrefix(valid.subarray(0, at % (valid.length + 1)));
        const broken = Buffer.concat([valid.subarray(0, cut), Buffer.from([bad]), valid.subarray(cut)]);
        expect(firstInvalidUtf8(broken)).toBe(cut);
      }),
    );
  });

  it("completePrefix: a cut inside a character ends before it, one after it is kept", () => {
    const euro = Buffer.from("a€"); // 61 e2 82 ac
    expect(completePrefix(euro.subarray(0, 2))).toBe(1);
    expect(completePrefix(euro.subarray(0, 3))).toBe(1);
    expect(completePrefix(euro)).toBe(4);
  });
});
