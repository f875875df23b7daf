/**
 * Properties of paged reads (SPEC §3.2, §8) over arbitrary bytes: walking by
 * `end` reassembles `fs.readFile(path, "utf8")` exactly, windows stay within
 * the limit and never split a surrogate pair, and any window read through a
 * warm or a cold cache equals the reference slice; head/tail match upstream.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { splitsPair, TextSink } from "../src/kernel/bounded.js";
import { CheckpointCache, headInto, readWindow, tailInto } from "../src/reading/index.js";
import { refWindow, scratchFiles } from "./support/window-oracle.js";

const { withFile } = scratchFiles("paged-prop-");

const piece = fc.constantFrom("a", "xyz", "é", "中", "😀", "🎉", "\r\n", "\n", "\r", "\uFEFF", " ");
const text = fc.oneof(fc.string({ unit: piece, maxLength: 40 }), fc.string({ unit: "binary", maxLength: 30 }));
const textBytes = text.map((s) => new Uint8Array(Buffer.from(s, "utf8")));
const rawBytes = fc.uint8Array({ maxLength: 60 });
const fileBytes = fc.oneof(
  rawBytes,
  textBytes,
  fc.array(fc.oneof(rawBytes, textBytes), { maxLength: 5 }).map((parts) => new Uint8Array(Buffer.concat(parts))),
);
const chunkSize = fc.oneof(fc.integer({ min: 1, max: 16 }), fc.constantFrom(64, 4096));
const limit = fc.integer({ min: 1, max: 64 });
// Tiny spacing and caps so small files get many checkpoints, and thinning happens.
const cacheOptions = fc.record({
  checkpointEveryBytes: fc.integer({ min: 1, max: 32 }),
  maxCheckpointsPerFile: fc.integer({ min: 2, max: 8 }),
});

const isHigh = (c: number): boolean => c >= 0xd800 && c <= 0xdbff;

const RUNS = 300;

describe("paged read properties", () => {
  it("walking by end reassembles the file, within the limit, never splitting a pair", async () => {
    await fc.assert(
      fc.asyncProperty(fileBytes, limit, chunkSize, cacheOptions, async (bytes, lim, chunk, options) => {
        await withFile(bytes, async (h, p, ref) => {
          const cache = new CheckpointCache(options);
          const parts: string[] = [];
          for (let offset = 0; ; ) {
            const w = await readWindow(h, p, offset, lim, cache, { chunkSize: chunk });
            expect(w.total).toBe(ref.length);
            expect(w.start).toBe(offset);
            expect(w.text.length).toBe(w.end - w.start);
            expect(w.text.length).toBeLessThanOrEqual(Math.max(lim, 2));
            expect(splitsPair(ref, w.start) || splitsPair(ref, w.end)).toBe(false);
            if (w.text.length > 0) expect(isHigh(w.text.charCodeAt(w.text.length - 1))).toBe(false);
            parts.push(w.text);
            if (w.end >= w.total) break;
            expect(w.end).toBeGreaterThan(offset);
            offset = w.end;
          }
          expect(parts.join("")).toBe(ref);
        });
      }),
      { numRuns: RUNS },
    );
  });

  it("a window at any offset equals the reference slice, with a cold and a warm cache", async () => {
    await fc.assert(
      fc.asyncProperty(fileBytes, fc.nat(), limit, chunkSize, cacheOptions, async (bytes, seed, lim, chunk, options) => {
        await withFile(bytes, async (h, p, ref) => {
          const offset = seed % (ref.length + 3);
          const expected = refWindow(ref, offset, lim);
          const cache = new CheckpointCache(options);
          expect(await readWindow(h, p, offset, lim, cache, { chunkSize: chunk })).toEqual(expected);
          expect(await readWindow(h, p, offset, lim, cache, { chunkSize: chunk })).toEqual(expected);
          // warm from a different window, so the read starts from a checkpoint or hint before it
          const other = new CheckpointCache(options);
          await readWindow(h, p, Math.floor(offset / 2), lim, other, { chunkSize: chunk });
          expect(await readWindow(h, p, offset, lim, other, { chunkSize: chunk })).toEqual(expected);
        });
      }),
      { numRuns: RUNS },
    );
  });

  it("head and tail equal upstream's text and count exactly past a small sink", async () => {
    const refHead = (t: string, k: number): string => {
      const parts = t.split("\n");
      if (parts[parts.length - 1] === "") parts.pop();
      return k === 0 ? "" : parts.slice(0, k).join("\n");
    };
    const refTail = (t: string, k: number): string => (k === 0 || t === "" ? "" : t.replace(/\r\n/g, "\n").split("\n").slice(-k).join("\n"));
    await fc.assert(
      fc.asyncProperty(fileBytes, fc.integer({ min: 0, max: 12 }), chunkSize, fc.integer({ min: 1, max: 8 }), async (bytes, k, chunk, max) => {
        await withFile(bytes, async (h, _p, ref) => {
          const big = [new TextSink(100_000), new TextSink(100_000)] as const;
          const small = [new TextSink(max), new TextSink(max)] as const;
          await headInto(h, k, big[0], { chunkSize: chunk });
          await tailInto(h, k, big[1], { chunkSize: chunk });
          await headInto(h, k, small[0], { chunkSize: chunk });
          await tailInto(h, k, small[1], { chunkSize: chunk });
          expect(big[0].render("x")).toBe(refHead(ref, k));
          expect(big[1].render("x")).toBe(refTail(ref, k));
          expect(small[0].total).toBe(refHead(ref, k).length);
          expect(small[1].total).toBe(refTail(ref, k).length);
        });
      }),
      { numRuns: RUNS },
    );
  });
});
