/**
 * The counter behind every scan (SPEC §11 "Scanning speed"): its UTF-16 unit
 * and line feed counts equal a byte-by-byte reference and, for valid UTF-8,
 * the decoded text, at every offset and length (SIMD body plus JS tail).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CountingBuffer, countUtf8, countUtf8Js, utf16Units } from "../../../src/reading/utf8-count.js";

// Bytes rich in the classes the counter tells apart: ASCII, LF, continuation bytes, 2/3/4-byte leaders.
const byte = fc.oneof(fc.integer({ min: 0, max: 255 }), fc.constantFrom(0x0a, 0x7f, 0x80, 0xbf, 0xc0, 0xef, 0xf0, 0xff));
const bytes = fc.oneof(
  fc.uint8Array({ maxLength: 2000 }),
  fc.array(byte, { maxLength: 3000 }).map((a) => Uint8Array.from(a)),
);

/** Byte-by-byte reference written independently of countUtf8Js. */
function reference(b: Uint8Array): { units: number; lines: number } {
  let continuation = 0;
  let leaders4 = 0;
  let lines = 0;
  for (const x of b) {
    if (x >= 0x80 && x < 0xc0) continuation++;
    if (x >= 0xf0) leaders4++;
    if (x === 10) lines++;
  }
  return { units: b.length - continuation + leaders4, lines };
}

describe("UTF-8 counting", () => {
  it("equals the reference on arbitrary bytes at any offset in a counting buffer", () => {
    const buffer = new CountingBuffer(8192);
    fc.assert(
      fc.property(bytes, fc.integer({ min: 0, max: 100 }), (b, at) => {
        buffer.bytes.set(b, at);
        expect(buffer.count(at, at + b.length)).toEqual(reference(b));
        expect(countUtf8Js(b)).toEqual(reference(b));
      }),
      { numRuns: 500 },
    );
  });

  it("equals the reference on inputs longer than the scratch buffer and than a tally block", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 255 }), fc.integer({ min: 1, max: 700_000 }), (x, len) => {
        const b = new Uint8Array(len).fill(x);
        b[len - 1] = 0x0a;
        expect(countUtf8(b)).toEqual(reference(b));
      }),
      { numRuns: 40 },
    );
  });

  it("gives the decoded length of valid UTF-8", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 500 }), (s) => {
        const b = Buffer.from(s, "utf8");
        expect(utf16Units(b)).toBe(s.length);
        expect(countUtf8(b).lines).toBe(s.split("\n").length - 1);
      }),
      { numRuns: 300 },
    );
  });

  it("refuses a buffer size that is not a positive integer", () => {
    expect(() => new CountingBuffer(0)).toThrow(/size.*0/);
  });
});
