/**
 * Line windows (SPEC §11): equal to slices of `fs.readFile(p, "utf8")` split
 * on "\n", cold and warm, past the end, across CRLF and 4-byte characters at
 * chunk boundaries; a cut window's notices continue it exactly; a warm deep
 * line reads only near its checkpoint.
 */
import fc from "fast-check";
import type { FileHandle } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { runBounded, type ToolOutput } from "../src/kernel/bounded.js";
import { CheckpointCache, readLineWindow, readWindow } from "../src/reading/index.js";
import { refWindow, scratchFiles } from "./support/window-oracle.js";

const { withFile } = scratchFiles("line-window-");

/** Offset just after the k-th "\n" of `ref` (0 for k = 0), or undefined. */
function afterFeed(ref: string, k: number): number | undefined {
  let at = 0;
  for (let i = 0; i < k; i++) {
    const j = ref.indexOf("\n", at);
    if (j === -1) return undefined;
    at = j + 1;
  }
  return at;
}

/** The reference text of a line window as the tool renders it. */
function refLines(ref: string, startLine: number, lineCount: number | undefined, cap: number): string {
  const start = afterFeed(ref, startLine - 1);
  if (start === undefined || start >= ref.length) return "";
  const end = lineCount === undefined ? ref.length : (afterFeed(ref, startLine - 1 + lineCount) ?? ref.length);
  if (lineCount !== undefined && end - start <= cap) return ref.slice(start, end);
  const w = refWindow(ref, start, cap);
  return w.end < w.total ? `${w.text}\n${notice(w.start, w.end, w.total)}` : w.text;
}

const group = (x: number): string => x.toLocaleString("en-US");
const notice = (start: number, end: number, total: number): string =>
  `[Result truncated: showing characters ${group(start + 1)}-${group(end)} of ${group(total)}. Call again with offset=${end} to continue.]`;

const render = async (out: ToolOutput, cap: number): Promise<string> => {
  const block = (await runBounded(cap, "unused", async () => out)).content[0];
  return block?.type === "text" ? block.text : "";
};

const NOTICE = /\n\[Result truncated: showing characters [\d,]+-[\d,]+ of [\d,]+\. Call again with offset=(\d+) to continue\.\]$/;

const piece = fc.constantFrom("a", "xyz", "é", "中", "😀", "\r\n", "\n", "\n\n", "\r", " ");
const text = fc.oneof(fc.string({ unit: piece, maxLength: 40 }), fc.string({ unit: "binary", maxLength: 30 }));
const textBytes = text.map((s) => new Uint8Array(Buffer.from(s, "utf8")));
const rawBytes = fc.uint8Array({ maxLength: 40 }).map((b) => b.map((x) => (x % 7 === 0 ? 0x0a : x)));
const fileBytes = fc.array(fc.oneof(rawBytes, textBytes), { maxLength: 5 }).map((parts) => new Uint8Array(Buffer.concat(parts)));
const chunkSize = fc.oneof(fc.integer({ min: 1, max: 16 }), fc.constantFrom(64, 4096));
const cacheOptions = fc.record({
  checkpointEveryBytes: fc.integer({ min: 1, max: 32 }),
  maxCheckpointsPerFile: fc.integer({ min: 2, max: 8 }),
});
const lineCount = fc.option(fc.integer({ min: 1, max: 6 }), { nil: undefined });

describe("readLineWindow", () => {
  it("equals the reference slice of lines, cold and warm", async () => {
    await fc.assert(
      fc.asyncProperty(
        fileBytes,
        fc.integer({ min: 1, max: 30 }),
        lineCount,
        fc.integer({ min: 1, max: 64 }),
        chunkSize,
        cacheOptions,
        async (bytes, startLine, count, cap, size, co) =>
          withFile(bytes, async (h, p, ref) => {
            const cache = new CheckpointCache(co);
            const expected = refLines(ref, startLine, count, cap);
            const cold = await readLineWindow(h, p, startLine, count, cap, cache, { chunkSize: size });
            expect(await render(cold, cap)).toBe(expected);
            const warm = await readLineWindow(h, p, startLine, count, cap, cache, { chunkSize: size });
            expect(await render(warm, cap)).toBe(expected);
          }),
      ),
      { numRuns: 250 },
    );
  });

  it("a cut window's notices, followed, yield the rest of the file from the line on", async () => {
    await fc.assert(
      fc.asyncProperty(
        fileBytes,
        fc.integer({ min: 1, max: 10 }),
        lineCount,
        fc.integer({ min: 1, max: 16 }),
        chunkSize,
        async (bytes, startLine, count, cap, size) =>
          withFile(bytes, async (h, p, ref) => {
            const cache = new CheckpointCache({ checkpointEveryBytes: 8 });
            const start = afterFeed(ref, startLine - 1);
            let out = await render(await readLineWindow(h, p, startLine, count, cap, cache, { chunkSize: size }), cap);
            let m = NOTICE.exec(out);
            if (m === null) return;
            let joined = out.slice(0, m.index);
            while (m !== null) {
              const w = await readWindow(h, p, Number(m[1]), cap, cache, { chunkSize: size });
              out = await render({ window: w }, cap);
              m = NOTICE.exec(out);
              joined += m === null ? out : out.slice(0, m.index);
            }
            expect(joined).toBe(ref.slice(start));
          }),
      ),
      { numRuns: 200 },
    );
  });

  it("handles CRLF, a missing final newline, lines past the end and an empty file", async () => {
    await withFile(Buffer.from("one\r\ntwo\r\nthree"), async (h, p) => {
      const cache = new CheckpointCache();
      const lines = async (s: number, c?: number) => await render(await readLineWindow(h, p, s, c, 1000, cache), 1000);
      expect(await lines(1, 1)).toBe("one\r\n");
      expect(await lines(2, 5)).toBe("two\r\nthree");
      expect(await lines(3)).toBe("three");
      expect(await lines(4)).toBe("");
      expect(await lines(1_000_000, 3)).toBe("");
    });
    await withFile(Buffer.from("a\n"), async (h, p) => {
      const cache = new CheckpointCache();
      expect(await render(await readLineWindow(h, p, 1, 1, 10, cache), 10)).toBe("a\n");
      expect(await render(await readLineWindow(h, p, 2, undefined, 10, cache), 10)).toBe("");
    });
    await withFile(new Uint8Array(), async (h, p) => {
      expect(await render(await readLineWindow(h, p, 1, undefined, 10, new CheckpointCache()), 10)).toBe("");
    });
  });

  it("counts 4-byte characters split across every chunk boundary", async () => {
    const ref = "😀\n😀😀\n\u{1F680}x\n\n𝄞".repeat(7);
    for (const chunkSize of [1, 2, 3, 5, 7]) {
      await withFile(Buffer.from(ref, "utf8"), async (h, p) => {
        const cache = new CheckpointCache({ checkpointEveryBytes: 3 });
        for (let line = 1; line <= 30; line += 3) {
          for (const count of [1, 2, undefined]) {
            const got = await render(await readLineWindow(h, p, line, count, 9, cache, { chunkSize }), 9);
            expect(got).toBe(refLines(ref, line, count, 9));
          }
        }
      });
    }
  });

  it("reads a deep line of a seen file from a nearby checkpoint, not from the start", async () => {
    const body = Array.from({ length: 20_000 }, (_, i) => `line ${i + 1} é😀\n`).join("");
    await withFile(Buffer.from(body, "utf8"), async (h, p, ref) => {
      const cache = new CheckpointCache({ checkpointEveryBytes: 4096 });
      await readLineWindow(h, p, 1, 1, 100, cache, { chunkSize: 4096 });
      let bytes = 0;
      const counting = {
        stat: (o?: { bigint?: boolean }) => h.stat(o as { bigint: true }),
        async read(buffer: Buffer, offset: number, length: number, position: number) {
          const r = await h.read(buffer, offset, length, position);
          bytes += r.bytesRead;
          return r;
        },
      } as unknown as FileHandle;
      const out = await render(await readLineWindow(counting, p, 19_000, 2, 100, cache, { chunkSize: 4096 }), 100);
      expect(out).toBe(refLines(ref, 19_000, 2, 100));
      expect(out).toBe("line 19000 é😀\nline 19001 é😀\n");
      expect(bytes).toBeLessThanOrEqual(4 * 4096); // of a 400 KB file
    });
  });

  // Regression (issue 16): a warm line window fstat'ed its handle 4 times (twice to find the line, twice
  // to read its window) and read the chunk holding the line twice.
  it("reads a line window in one pass: each byte at most once, one fstat warm, two cold", async () => {
    const body = Array.from({ length: 20_000 }, (_, i) => `line ${i + 1} é😀\n`).join("");
    await withFile(Buffer.from(body, "utf8"), async (h, p, ref) => {
      const recorder = () => {
        const reads: [number, number][] = [];
        let stats = 0;
        const proxy = {
          stat: (o?: { bigint?: boolean }) => {
            stats++;
            return h.stat(o as { bigint: true });
          },
          async read(buffer: Buffer, offset: number, length: number, position: number) {
            const r = await h.read(buffer, offset, length, position);
            reads.push([position, r.bytesRead]);
            return r;
          },
        } as unknown as FileHandle;
        const overlapping = (): boolean => {
          const sorted = [...reads].sort((a, b) => a[0] - b[0]);
          return sorted.some(([at], i) => i > 0 && at < sorted[i - 1]![0] + sorted[i - 1]![1]);
        };
        return { proxy, reads, overlapping, stats: () => stats };
      };
      const chunkSize = 4096;
      const cache = new CheckpointCache({ checkpointEveryBytes: chunkSize });
      const cold = recorder();
      expect(await render(await readLineWindow(cold.proxy, p, 3, 2, 100, cache, { chunkSize }), 100)).toBe(refLines(ref, 3, 2, 100));
      // The identity before the pass and after it, which stores what the pass learnt.
      expect(cold.stats()).toBe(2);
      expect(cold.overlapping()).toBe(false);
      expect(cold.reads.reduce((sum, [, n]) => sum + n, 0)).toBe(Buffer.byteLength(body));
      for (const [startLine, lineCount, cap] of [
        [19_000, 2, 100],
        [10_000, undefined, 50],
        [7_000, 40, 30],
        [20_000, 5, 100],
        [25_000, 1, 100],
      ] as const) {
        const warm = recorder();
        const out = await render(await readLineWindow(warm.proxy, p, startLine, lineCount, cap, cache, { chunkSize }), cap);
        expect(out).toBe(refLines(ref, startLine, lineCount, cap));
        expect(warm.stats(), `line ${startLine}`).toBe(1);
        expect(warm.overlapping(), `line ${startLine}`).toBe(false);
      }
    });
  });

  it("refuses a start line or count below 1, naming it", async () => {
    await withFile(Buffer.from("x\n"), async (h, p) => {
      const cache = new CheckpointCache();
      await expect(readLineWindow(h, p, 0, undefined, 10, cache)).rejects.toThrow(/startLine.*0/);
      await expect(readLineWindow(h, p, 1, 1.5, 10, cache)).rejects.toThrow(/lineCount.*1\.5/);
    });
  });
});
