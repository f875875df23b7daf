/** Shared oracles for the paged-read tests: the SPEC §3.2 window of a reference string, and handle scoping. */
import { open, type FileHandle } from "node:fs/promises";

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
