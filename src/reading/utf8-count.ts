/**
 * Counting without decoding (SPEC §11 "Scanning speed"): the UTF-16 length of
 * valid UTF-8 is its byte count minus its continuation bytes plus one per
 * 4-byte leader, and its line breaks are its 0x0A bytes. A small WebAssembly
 * SIMD loop counts both in one pass over 16 bytes at a time; bytes it cannot
 * reach (the tail of a run, or a run outside its memory) are counted in JS.
 */
import { isAscii } from "node:buffer";
import { checkInteger } from "../kernel/integers.js";
import { compileWasm, wasmRun } from "../kernel/wasm.js";
import { COUNT_WASM } from "./utf8-count-wasm.js";

/** What one run of bytes counts to. */
export interface Utf8Counts {
  /** UTF-16 code units the bytes decode to (exact when they are valid UTF-8). */
  units: number;
  /** Number of 0x0A bytes. */
  lines: number;
}

const LF = 0x0a;

/** The plain byte-by-byte count; the reference the fast paths must equal. */
export function countUtf8Js(bytes: Uint8Array, start = 0, end = bytes.length): Utf8Counts {
  let units = 0;
  let lines = 0;
  for (let i = start; i < end; i++) {
    const b = bytes[i] ?? 0;
    if ((b & 0xc0) !== 0x80) units += b >= 0xf0 ? 2 : 1;
    if (b === LF) lines++;
  }
  return { units, lines };
}

interface CountExports {
  count(ptr: number, len: number): number;
  lines: { value: unknown };
}

/** A read buffer whose bytes the SIMD counter reads in place (no copy); JS counting where WebAssembly is missing. */
export class CountingBuffer {
  /** The bytes to read into; `count` works on ranges of it. */
  readonly bytes: Buffer;
  private readonly wasm: CountExports | undefined;

  /** @throws when size is not a positive integer */
  constructor(size: number) {
    checkInteger("CountingBuffer size", size, 1);
    // Each buffer gets its own instance and memory, so concurrent scans never share bytes.
    const module = compileWasm(COUNT_WASM);
    const run = module === null ? undefined : wasmRun<CountExports>(module, size, true);
    if (run === undefined) {
      this.bytes = Buffer.allocUnsafe(size);
      return;
    }
    this.wasm = run.exports;
    this.bytes = run.bytes.subarray(0, size);
  }

  /** Counts `bytes[start, end)`. */
  count(start: number, end: number): Utf8Counts {
    const len = end - start;
    if (len <= 0) return { units: 0, lines: 0 };
    const wasm = this.wasm;
    if (wasm === undefined || len < 64) return countUtf8Js(this.bytes, start, end);
    const simd = len - (len % 16);
    const units = wasm.count(start, simd);
    const tail = countUtf8Js(this.bytes, start + simd, end);
    return { units: units + tail.units, lines: (wasm.lines.value as number) + tail.lines };
  }
}

// A few idle buffers per size are kept: creating one maps a WebAssembly memory,
// which costs more than a warm window's whole scan of a chunk or two.
const idle = new Map<number, CountingBuffer[]>();
const IDLE_PER_SIZE = 4;

/** A counting buffer of `size` bytes, reused when one is idle; hand it back with `releaseCountingBuffer`. */
export function acquireCountingBuffer(size: number): CountingBuffer {
  return idle.get(size)?.pop() ?? new CountingBuffer(size);
}

/** Returns a buffer from `acquireCountingBuffer` for reuse; its bytes must no longer be used. */
export function releaseCountingBuffer(buffer: CountingBuffer): void {
  const list = idle.get(buffer.bytes.length) ?? [];
  if (list.length < IDLE_PER_SIZE) list.push(buffer);
  idle.set(buffer.bytes.length, list);
}

let scratch: CountingBuffer | undefined;
const SCRATCH_BYTES = 256 * 1024;

/** Counts any bytes: copied piecewise into a shared scratch buffer (single-threaded, so never in use twice). */
export function countUtf8(bytes: Uint8Array): Utf8Counts {
  if (bytes.length < 64) return countUtf8Js(bytes);
  scratch ??= new CountingBuffer(SCRATCH_BYTES);
  let units = 0;
  let lines = 0;
  for (let at = 0; at < bytes.length; at += SCRATCH_BYTES) {
    const piece = bytes.subarray(at, at + SCRATCH_BYTES);
    scratch.bytes.set(piece);
    const c = scratch.count(0, piece.length);
    units += c.units;
    lines += c.lines;
  }
  return { units, lines };
}

/** The number of 0x0A bytes in `bytes`, by the SIMD counter (a third of the time of one `indexOf` per line break). */
export function countLineFeeds(bytes: Uint8Array): number {
  return countUtf8(bytes).lines;
}

/** The UTF-16 length of valid UTF-8 `bytes`. */
export function utf16Units(bytes: Uint8Array): number {
  return isAscii(bytes) ? bytes.length : countUtf8(bytes).units;
}
