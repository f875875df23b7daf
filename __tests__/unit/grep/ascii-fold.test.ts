/**
 * The case-insensitive search's folding of a region (grep/ascii-fold.ts): the
 * SIMD loop and the JS one lower A-Z and change no other byte, at any length,
 * alignment and order of sizes (the folder's memory grows and is reused).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { AsciiFolder, FOLD_WASM, foldAsciiJs } from "../../../src/grep/ascii-fold.js";
import { compileWasm } from "../../../src/kernel/wasm.js";

// The reference: every byte from 'A' to 'Z' gets 0x20, no other changes.
const lowered = (src: Uint8Array): Buffer => Buffer.from(Array.from(src, (b) => (b >= 0x41 && b <= 0x5a ? b + 0x20 : b)));

// Regions of any bytes, starting at any offset of their buffer (the scanner's regions are views of its chunk).
const region = fc
  .tuple(fc.uint8Array({ maxLength: 3000, size: "max" }), fc.nat({ max: 15 }))
  .map(([bytes, offset]) => Buffer.concat([Buffer.alloc(offset), bytes]).subarray(offset));

describe("folding a region's A-Z", () => {
  it("has the SIMD module here (so the tests below compare it, not only the JS loop)", () => {
    expect(compileWasm(FOLD_WASM)).not.toBeNull();
  });

  it("folds every byte value as the reference does, across the 16-byte lanes and the tail", () => {
    const all = Buffer.from(Array.from({ length: 256 * 3 + 7 }, (_, i) => i & 0xff));
    expect(new AsciiFolder().fold(all)).toEqual(lowered(all));
    expect(new AsciiFolder(false).fold(all)).toEqual(lowered(all));
    const out = Buffer.alloc(all.length);
    foldAsciiJs(all, out);
    expect(out).toEqual(lowered(all));
  });

  it("equals the reference for any sequence of regions on one folder, SIMD and JS alike", () => {
    fc.assert(
      fc.property(fc.array(region, { minLength: 1, maxLength: 8 }), (regions) => {
        const simd = new AsciiFolder();
        const js = new AsciiFolder(false);
        for (const src of regions) {
          const before = Buffer.from(src);
          const want = lowered(before);
          // Buffer#equals, fast-check shows the region that failed (an element-wise toEqual took 20 s here).
          expect(simd.fold(src).equals(want)).toBe(true);
          expect(js.fold(src).equals(want)).toBe(true);
          // The region itself is left as it was.
          expect(src.equals(before)).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
  });

  it("grows its memory for a region past it and folds it whole", () => {
    const folder = new AsciiFolder();
    folder.fold(Buffer.from("SMALL"));
    const big = Buffer.alloc(5 * 64 * 1024 + 3, "AbZ@[`z{");
    const folded = folder.fold(big);
    expect(folded.length).toBe(big.length);
    expect(folded.equals(lowered(big))).toBe(true);
    expect(folder.fold(Buffer.from("Tail"))).toEqual(Buffer.from("tail"));
  });
});
