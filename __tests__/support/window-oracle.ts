/** Shared oracles for the paged-read tests: the SPEC §3.2 window of a reference string, and handle scoping. */
import { open, readFile, rm, writeFile, type FileHandle } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll } from "vitest";
import { tempDir } from "./fixtures.js";

/** A window of decoded text as the reader returns it (the shape of bounded.ts TextWindow, restated). */
export interface OracleWindow {
  text: string;
  start: number;
  end: number;
  total: number;
}

// Written out here rather than imported, so the oracle shares no code with what it checks.
const isHigh = (c: number): boolean => c >= 0xd800 && c <= 0xdbff;
const isLow = (c: number): boolean => c >= 0xdc00 && c <= 0xdfff;
const splitsPair = (s: string, i: number): boolean => i > 0 && i < s.length && isHigh(s.charCodeAt(i - 1)) && isLow(s.charCodeAt(i));

/** SPEC §3.2 window rules applied to the reference string `fs.readFile(p, "utf8")` gave. */
export function refWindow(ref: string, offset: number, limit: number): OracleWindow {
  if (offset >= ref.length) return { text: "", start: offset, end: offset, total: ref.length };
  const start = offset > 0 && isLow(ref.charCodeAt(offset)) ? offset - 1 : offset;
  let end = Math.min(start + limit, ref.length);
  if (splitsPair(ref, end)) end = end - 1 > start ? end - 1 : start + 2;
  return { text: ref.slice(start, end), start, end, total: ref.length };
}

/** Opens `p` for reading, runs `fn` on the handle and always closes it. */
export async function withHandle<T>(p: string, fn: (h: FileHandle) => Promise<T>): Promise<T> {
  const h = await open(p, "r");
  try {
    return await fn(h);
  } finally {
    await h.close();
  }
}

/**
 * A scratch directory for one suite; `withFile(bytes, fn)` writes a file there, opens it, runs `fn`
 * with the handle, the path and the reference text `fs.readFile(p, "utf8")` gives, then removes it.
 */
export function scratchFiles(prefix: string): {
  withFile<T>(bytes: Uint8Array, fn: (h: FileHandle, p: string, ref: string) => Promise<T>): Promise<T>;
} {
  let dir = "";
  let remove: () => Promise<void> = async () => undefined;
  let n = 0;
  beforeAll(async () => {
    ({ dir, remove } = await tempDir(prefix));
  });
  afterAll(() => remove());
  return {
    async withFile(bytes, fn) {
      const p = path.join(dir, `f${n++}`);
      await writeFile(p, bytes);
      const ref = await readFile(p, "utf8");
      const h = await open(p, "r");
      try {
        return await fn(h, p, ref);
      } finally {
        await h.close();
        await rm(p, { force: true });
      }
    },
  };
}
