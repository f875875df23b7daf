/**
 * The checkpoint cache (SPEC §6): windows decoded from checkpoints equal the
 * reference text, stale entries are discarded, memory stays bounded, and
 * walking a file by `end` offsets reads it about once.
 */
import { mkdtemp, readFile, realpath, rename, rm, stat, truncate, utimes, writeFile, appendFile } from "node:fs/promises";
import type { FileHandle } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FileCheckpoints, identify } from "../../../src/reading/checkpoints.js";
import { CheckpointCache, countChars, readWindow } from "../../../src/reading/index.js";
import { refWindow, withHandle } from "../../support/window-oracle.js";

let dir: string;
beforeEach(async () => {
  dir = await realpath(await mkdtemp(path.join(tmpdir(), "checkpoints-")));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A handle that records every read's position and length, and can fake its fstat. */
function recording(h: FileHandle, statOverride?: (call: number, real: unknown) => unknown) {
  const reads: Array<{ position: number; bytes: number }> = [];
  let statCalls = 0;
  const proxy = {
    async stat(opts?: { bigint?: boolean }) {
      const real = await h.stat(opts as { bigint: true });
      return statOverride ? statOverride(statCalls++, real) : real;
    },
    async read(buffer: Buffer, offset: number, length: number, position: number) {
      const result = await h.read(buffer, offset, length, position);
      reads.push({ position, bytes: result.bytesRead });
      return result;
    },
  } as unknown as FileHandle;
  return { proxy, reads };
}

/** Deterministic mixed content: ASCII, 2/3/4-byte characters, CRLF, BOMs, invalid and truncated sequences. */
function mixedBytes(size: number, seed = 1): Buffer {
  const pieces = [
    Buffer.from("plain ascii text line\n"),
    Buffer.from("héllo wörld "),
    Buffer.from("中文字符"),
    Buffer.from("😀😁🎉"),
    Buffer.from("\r\n"),
    Buffer.from("\uFEFF"),
    Buffer.from([0xff, 0xfe]),
    Buffer.from([0xe2, 0x82]),
    Buffer.from([0xf0, 0x9f, 0x98]),
    Buffer.from([0x80, 0x80, 0xbf]),
    Buffer.from("x".repeat(500)),
  ];
  const out: Buffer[] = [];
  let length = 0;
  let state = seed;
  while (length < size) {
    state = (state * 1103515245 + 12345) % 2147483648;
    const piece = pieces[state % pieces.length] ?? Buffer.alloc(0);
    out.push(piece);
    length += piece.length;
  }
  return Buffer.concat(out).subarray(0, size);
}

describe("windows through checkpoints", () => {
  it("equal the readFile slice everywhere in a multi-MiB mixed file, and start near the window", async () => {
    const p = path.join(dir, "mixed");
    await writeFile(p, mixedBytes(3 * 1024 * 1024 + 17));
    const ref = await readFile(p, "utf8");
    const size = (await stat(p)).size;
    const cache = new CheckpointCache({ checkpointEveryBytes: 64 * 1024 });
    const opts = { chunkSize: 16 * 1024 };
    expect(await withHandle(p, (h) => countChars(h, p, cache, opts))).toBe(ref.length);
    const entry = await withHandle(p, async (h) => cache.get(p, await identify(h)));
    expect(entry?.count).toBeGreaterThan(40);
    expect(entry?.total).toBe(ref.length);
    for (let i = 0; i <= 60; i++) {
      const offset = Math.floor((ref.length * i) / 60) - (i % 3);
      for (const limit of [1, 2, 999]) {
        const w = await withHandle(p, (h) => readWindow(h, p, Math.max(0, offset), limit, cache, opts));
        expect(w).toEqual(refWindow(ref, Math.max(0, offset), limit));
      }
    }
    const deep = Math.floor(ref.length * 0.9);
    const w = await withHandle(p, async (h) => {
      const rec = recording(h);
      const result = await readWindow(rec.proxy, p, deep, 5000, cache, opts);
      expect(Math.min(...rec.reads.map((r) => r.position))).toBeGreaterThan(size * 0.8);
      return result;
    });
    expect(w).toEqual(refWindow(ref, deep, 5000));
  });

  it("gives the same window cold as warm, and the cold read fills the cache", async () => {
    const p = path.join(dir, "cold");
    await writeFile(p, mixedBytes(300_000, 7));
    const ref = await readFile(p, "utf8");
    const cache = new CheckpointCache({ checkpointEveryBytes: 4096 });
    const offset = Math.floor(ref.length * 0.7);
    const cold = await withHandle(p, (h) => readWindow(h, p, offset, 3000, cache, { chunkSize: 1000 }));
    expect(cache.size).toBe(1);
    const warm = await withHandle(p, (h) => readWindow(h, p, offset, 3000, cache, { chunkSize: 1000 }));
    expect(cold).toEqual(refWindow(ref, offset, 3000));
    expect(warm).toEqual(cold);
  });

  it("walks a file by end offsets reading it about once", async () => {
    const p = path.join(dir, "walk");
    await writeFile(p, mixedBytes(512 * 1024, 3));
    const ref = await readFile(p, "utf8");
    const size = (await stat(p)).size;
    // Only the checkpoint at 0: without the per-file hint every window would decode from the start.
    const cache = new CheckpointCache({ checkpointEveryBytes: 1 << 30 });
    const chunkSize = 4096;
    await withHandle(p, (h) => countChars(h, p, cache, { chunkSize }));
    const parts: string[] = [];
    let bytesRead = 0;
    let windows = 0;
    await withHandle(p, async (h) => {
      const rec = recording(h);
      for (let offset = 0; ; windows++) {
        const w = await readWindow(rec.proxy, p, offset, 2000, cache, { chunkSize });
        parts.push(w.text);
        if (w.end >= w.total) break;
        offset = w.end;
      }
      bytesRead = rec.reads.reduce((sum, r) => sum + r.bytes, 0);
    });
    expect(parts.join("")).toBe(ref);
    expect(windows).toBeGreaterThan(100);
    expect(bytesRead).toBeLessThan(size + windows * 3 * chunkSize);
  });
});

describe("invalidation", () => {
  async function total(p: string, cache: CheckpointCache): Promise<number> {
    return (await withHandle(p, (h) => readWindow(h, p, 0, 10, cache))).total;
  }

  it("discards an entry when the file is rewritten with the same size and a new mtime", async () => {
    const p = path.join(dir, "same-size");
    await writeFile(p, "é".repeat(1000));
    await utimes(p, 1_000_000, 1_000_000);
    const cache = new CheckpointCache();
    expect(await total(p, cache)).toBe(1000);
    await writeFile(p, "a".repeat(2000));
    await utimes(p, 2_000_000, 2_000_000);
    expect((await stat(p)).size).toBe(2000);
    expect(await total(p, cache)).toBe(2000);
    expect(await withHandle(p, (h) => readWindow(h, p, 1500, 3, cache))).toEqual({ text: "aaa", start: 1500, end: 1503, total: 2000 });
  });

  it("discards an entry when the file is replaced by another inode with the same size and mtime", async () => {
    const p = path.join(dir, "replaced");
    const q = path.join(dir, "replacement");
    await writeFile(p, "é".repeat(1000));
    await writeFile(q, "b".repeat(2000));
    await utimes(p, 1_000_000, 1_000_000);
    await utimes(q, 1_000_000, 1_000_000);
    const cache = new CheckpointCache();
    expect(await total(p, cache)).toBe(1000);
    await rename(q, p);
    expect(await total(p, cache)).toBe(2000);
  });

  it("sees appended text", async () => {
    const p = path.join(dir, "appended");
    await writeFile(p, "hello");
    const cache = new CheckpointCache();
    expect(await total(p, cache)).toBe(5);
    await appendFile(p, " world 😀");
    expect(await withHandle(p, (h) => readWindow(h, p, 5, 100, cache))).toEqual({
      text: " world 😀",
      start: 5,
      end: 14,
      total: 14,
    });
  });

  it("sees a truncated file", async () => {
    const p = path.join(dir, "truncated");
    await writeFile(p, "0123456789".repeat(10));
    const cache = new CheckpointCache();
    expect(await total(p, cache)).toBe(100);
    await truncate(p, 30);
    expect(await withHandle(p, (h) => readWindow(h, p, 50, 10, cache))).toEqual({ text: "", start: 50, end: 50, total: 30 });
  });

  it("does not store an entry for a file that changed during the first pass", async () => {
    const p = path.join(dir, "changing");
    await writeFile(p, "abcdef");
    const cache = new CheckpointCache();
    await withHandle(p, async (h) => {
      const rec = recording(h, (call, real) => (call === 0 ? real : { ...(real as object), mtimeNs: 1n }));
      expect(await countChars(rec.proxy, p, cache)).toBe(6);
    });
    expect(cache.size).toBe(0);
  });
});

describe("bounds", () => {
  it("thins checkpoints to the per-file cap and still reads correctly", async () => {
    const p = path.join(dir, "thin");
    await writeFile(p, mixedBytes(256 * 1024, 5));
    const ref = await readFile(p, "utf8");
    const cache = new CheckpointCache({ checkpointEveryBytes: 1024, maxCheckpointsPerFile: 4 });
    await withHandle(p, (h) => countChars(h, p, cache, { chunkSize: 512 }));
    const entry = await withHandle(p, async (h) => cache.get(p, await identify(h)));
    expect(entry?.count).toBeLessThanOrEqual(4);
    expect(entry?.count).toBeGreaterThanOrEqual(2);
    expect(entry?.spacingBytes).toBeGreaterThanOrEqual(64 * 1024);
    for (const offset of [0, 1000, Math.floor(ref.length / 2), ref.length - 5]) {
      const w = await withHandle(p, (h) => readWindow(h, p, offset, 700, cache, { chunkSize: 512 }));
      expect(w).toEqual(refWindow(ref, offset, 700));
    }
  });

  it("remembers at most maxFiles files, dropping the least recently used", async () => {
    const cache = new CheckpointCache({ maxFiles: 2 });
    const paths = ["a", "b", "c"].map((name) => path.join(dir, name));
    for (const p of paths) await writeFile(p, p);
    const ids = await Promise.all(paths.map((p) => withHandle(p, identify)));
    const [a, b, c] = paths as [string, string, string];
    await withHandle(a, (h) => countChars(h, a, cache));
    await withHandle(b, (h) => countChars(h, b, cache));
    expect(cache.get(a, ids[0]!)).toBeDefined(); // a is now the most recently used
    await withHandle(c, (h) => countChars(h, c, cache));
    expect(cache.size).toBe(2);
    expect(cache.get(b, ids[1]!)).toBeUndefined();
    expect(cache.get(a, ids[0]!)).toBeDefined();
    cache.clear();
    expect(cache.size).toBe(0);
  });

  it("keeps the checkpoints of all files within maxTotalCheckpoints, dropping the least recently used", async () => {
    const cache = new CheckpointCache({ checkpointEveryBytes: 1024, maxTotalCheckpoints: 40 });
    const paths = ["x", "y", "z"].map((name) => path.join(dir, name));
    for (const [i, p] of paths.entries()) await writeFile(p, mixedBytes(16 * 1024, i + 1));
    const ids = await Promise.all(paths.map((p) => withHandle(p, identify)));
    for (const p of paths) await withHandle(p, (h) => countChars(h, p, cache, { chunkSize: 512 }));
    const perFile = cache.get(paths[2]!, ids[2]!)?.count ?? 0;
    expect(perFile).toBeGreaterThan(13); // so three files cannot fit in 40
    expect(cache.checkpointCount).toBeLessThanOrEqual(40);
    expect(cache.get(paths[0]!, ids[0]!)).toBeUndefined();
    expect(cache.size).toBeLessThan(3);
  });

  it("rejects bad options naming them", () => {
    expect(() => new CheckpointCache({ maxFiles: 0 })).toThrow(/maxFiles.*0/);
    expect(() => new CheckpointCache({ maxTotalCheckpoints: -3 })).toThrow(/maxTotalCheckpoints.*-3/);
    expect(() => new CheckpointCache({ maxCheckpointsPerFile: 1 })).toThrow(/maxCheckpointsPerFile.*1/);
    expect(() => new CheckpointCache({ checkpointEveryBytes: 1.5 })).toThrow(/checkpointEveryBytes.*1\.5/);
  });
});

describe("FileCheckpoints", () => {
  const id = { dev: 1n, ino: 2n, size: 3n, mtimeNs: 4n, ctimeNs: 5n };

  it("keeps checkpoints at least the spacing apart and finds the nearest one at or before an offset", () => {
    const cp = new FileCheckpoints(id, 100, 100);
    for (const byte of [50, 100, 150, 210, 300, 310]) cp.add({ byte, char: byte / 2, line: 0 });
    expect(cp.count).toBe(4); // 0, 100, 210, 310
    expect(cp.nearest(0)).toEqual({ byte: 0, char: 0, line: 0 });
    expect(cp.nearest(49)).toEqual({ byte: 0, char: 0, line: 0 });
    expect(cp.nearest(50)).toEqual({ byte: 100, char: 50, line: 0 });
    expect(cp.nearest(104)).toEqual({ byte: 100, char: 50, line: 0 });
    expect(cp.nearest(105)).toEqual({ byte: 210, char: 105, line: 0 });
    expect(cp.nearest(154)).toEqual({ byte: 210, char: 105, line: 0 });
    expect(cp.nearest(10_000)).toEqual({ byte: 310, char: 155, line: 0 });
  });

  it("prefers the hint when it is closer and not past the offset", () => {
    const cp = new FileCheckpoints(id, 100, 100);
    cp.add({ byte: 100, char: 90, line: 0 });
    cp.hint = { byte: 170, char: 160, line: 0 };
    expect(cp.nearest(159)).toEqual({ byte: 100, char: 90, line: 0 });
    expect(cp.nearest(160)).toEqual({ byte: 170, char: 160, line: 0 });
    expect(cp.nearest(500)).toEqual({ byte: 170, char: 160, line: 0 });
  });
});

describe("cache identity and shared cold passes (SPEC §13)", () => {
  it("discards an entry when an in-place rewrite keeps size and mtime but changes ctime", async () => {
    const p = path.join(dir, "in-place");
    await writeFile(p, "é".repeat(1000));
    await utimes(p, 1_000_000, 1_000_000);
    const cache = new CheckpointCache();
    const before = await stat(p, { bigint: true });
    expect(await withHandle(p, (h) => readWindow(h, p, 0, 10, cache))).toMatchObject({ total: 1000 });
    // Same size, same whole-second mtime restored exactly, written through the same inode.
    await withHandle(p, async () => {
      const { open } = await import("node:fs/promises");
      const w = await open(p, "r+");
      await w.write(Buffer.from("a".repeat(2000)), 0, 2000, 0);
      await w.close();
    });
    await utimes(p, 1_000_000, 1_000_000);
    let after = await stat(p, { bigint: true });
    // ctime ticks coarsely; touch the times again until the clock shows the change.
    while (after.ctimeNs === before.ctimeNs) {
      await new Promise((r) => setTimeout(r, 5));
      await utimes(p, 1_000_000, 1_000_000);
      after = await stat(p, { bigint: true });
    }
    expect([after.ino, after.size, after.mtimeNs]).toEqual([before.ino, before.size, before.mtimeNs]);
    expect(await withHandle(p, (h) => readWindow(h, p, 1500, 3, cache))).toEqual({ text: "aaa", start: 1500, end: 1503, total: 2000 });
  });

  it("lets 50 concurrent cold windows of one file share a single pass", async () => {
    const p = path.join(dir, "shared");
    const body = "ab😀\n".repeat(50_000);
    await writeFile(p, body);
    const cache = new CheckpointCache();
    const windows = await withHandle(p, (h) =>
      Promise.all(Array.from({ length: 50 }, (_, i) => readWindow(h, p, i * 1000, 20, cache, { chunkSize: 16 * 1024 }))),
    );
    expect(cache.coldPasses).toBe(1);
    for (const [i, w] of windows.entries()) expect(w).toEqual(refWindow(body, i * 1000, 20));
    await withHandle(p, (h) => countChars(h, p, cache));
    expect(cache.coldPasses).toBe(1);
  });

  it("hands the pass to a waiting reader when the first cold reader is aborted", async () => {
    const p = path.join(dir, "aborted");
    const body = "xyz\n".repeat(100_000);
    await writeFile(p, body);
    const cache = new CheckpointCache();
    const controller = new AbortController();
    const results = await withHandle(p, async (h) => {
      // The second reader starts, and the first is aborted, at the first reader's first read:
      // always after the first claimed the pass, so the second always waits on it.
      let second: Promise<unknown> | undefined;
      const startingSecondOnRead = {
        stat: (opts: { bigint: true }) => h.stat(opts),
        read: (...args: Parameters<FileHandle["read"]>) => {
          if (second === undefined) {
            second = readWindow(h, p, 400_000 - 5, 5, cache, { chunkSize: 4096 });
            controller.abort(new Error("stop"));
          }
          return h.read(...args);
        },
      } as unknown as FileHandle;
      const first = await Promise.allSettled([readWindow(startingSecondOnRead, p, 0, 5, cache, { chunkSize: 4096, signal: controller.signal })]);
      return [...first, ...(await Promise.allSettled([second]))];
    });
    expect(results[0]?.status).toBe("rejected");
    expect(results[1]).toEqual({ status: "fulfilled", value: refWindow(body, 399_995, 5) });
    expect(cache.coldPasses).toBe(2);
    expect(cache.size).toBe(1);
  });
});

describe("FileCheckpoints by line", () => {
  it("finds the last checkpoint with fewer line feeds before it than asked", () => {
    const cp = new FileCheckpoints({ dev: 1n, ino: 2n, size: 3n, mtimeNs: 4n, ctimeNs: 5n }, 10, 100);
    for (const [byte, line] of [
      [10, 0],
      [20, 3],
      [30, 3],
      [40, 7],
    ] as const)
      cp.add({ byte, char: byte, line });
    expect(cp.beforeLine(0)).toEqual({ byte: 0, char: 0, line: 0 });
    expect(cp.beforeLine(1)).toEqual({ byte: 10, char: 10, line: 0 });
    expect(cp.beforeLine(3)).toEqual({ byte: 10, char: 10, line: 0 });
    expect(cp.beforeLine(4)).toEqual({ byte: 30, char: 30, line: 3 });
    expect(cp.beforeLine(100)).toEqual({ byte: 40, char: 40, line: 7 });
  });
});
