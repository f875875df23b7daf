/**
 * A region's bytes with A-Z lowered (and nothing else changed), for the
 * case-insensitive literal and prefilter: a WebAssembly SIMD loop over 16 bytes
 * at a time, in place in a memory the region is copied into. The JS loop it
 * replaced (four bytes at a time) was 0.59 of a second's 1.38 over a 600 MiB
 * file; the copy and the SIMD loop take 0.09. The JS loop stays where
 * WebAssembly is missing, for the last bytes, and as the reference in tests.
 *
 *   (import "m" "mem" (memory 1))
 *   (func (export "fold") (param $p i32) (param $len i32)
 *     ;; $len is a multiple of 16; each byte b with b - 0x41 < 26 (unsigned, so A-Z only) gets 0x20 or'ed in
 *     (loop while $p < $p + $len:
 *        v = load $p;  store $p (v | ((v - 0x41 <u 26) & 0x20));  $p += 16))
 */
import {
  BLOCK,
  BR,
  BR_IF,
  compileWasm,
  END,
  get,
  I32,
  I32_ADD,
  I32_GE_U,
  i32c,
  LOOP,
  set,
  simd,
  splat8,
  V128,
  V128_LOAD,
  V128_STORE,
  VOID,
  type WasmModule,
  WasmRun,
  wasmModule,
} from "../kernel/wasm.js";

const [I8_SUB, I8_LT_U, V_AND, V_OR] = [simd(0x71), simd(0x26), simd(0x4e), simd(0x50)];
// Locals: 0 p, 1 len, 2 end, 3 v.
const [P, LEN, END_AT, V] = [0, 1, 2, 3];

/** The module's bytes. */
export const FOLD_WASM = wasmModule({
  fnName: "fold",
  params: [I32, I32],
  results: [],
  locals: [
    [1, I32],
    [1, V128],
  ],
  body: [
    ...[...get(P), ...get(LEN), I32_ADD, ...set(END_AT)],
    ...[BLOCK, VOID, LOOP, VOID],
    ...[...get(P), ...get(END_AT), I32_GE_U, BR_IF, 1],
    ...[...get(P), ...V128_LOAD, ...set(V)],
    ...get(P),
    ...[...get(V), ...get(V), ...splat8(0x41), ...I8_SUB, ...splat8(26), ...I8_LT_U, ...splat8(0x20), ...V_AND, ...V_OR],
    ...V128_STORE,
    ...[...get(P), ...i32c(16), I32_ADD, ...set(P)],
    ...[BR, 0, END, END, END],
  ],
});

/** `src` with A-Z lowered into `out` (at least as long), byte by byte: what the SIMD loop must equal. */
export function foldAsciiJs(src: Uint8Array, out: Uint8Array, from = 0): void {
  for (let i = from; i < src.length; i++) {
    const b = src[i] ?? 0;
    out[i] = b >= 0x41 && b <= 0x5a ? b | 0x20 : b;
  }
}

// `src` with A-Z lowered into `out`, four bytes at a time where aligned: a byte gets 0x20 when it is at
// least 'A', at most 'Z' and below 0x80 (where WebAssembly is missing).
function foldWords(src: Buffer, out: Buffer): void {
  let i = 0;
  if ((src.byteOffset & 3) === 0 && (out.byteOffset & 3) === 0) {
    const words = src.length >>> 2;
    const s32 = new Uint32Array(src.buffer, src.byteOffset, words);
    const o32 = new Uint32Array(out.buffer, out.byteOffset, words);
    for (let k = 0; k < words; k++) {
      const v = s32[k] as number;
      const h = v & 0x7f7f7f7f;
      const upper = ((h + 0x3f3f3f3f) | 0) & ~((h + 0x25252525) | 0) & ~v & 0x80808080;
      o32[k] = v | (upper >>> 2);
    }
    i = words * 4;
  }
  foldAsciiJs(src, out, i);
}

interface FoldExports {
  fold(ptr: number, len: number): void;
}

// Compiled once per thread; each folder has its own instance and memory.
let compiled: WasmModule | null | undefined;

/** Folds regions one at a time into a buffer of its own, grown to the largest region. */
export class AsciiFolder {
  private wasm: WasmRun<FoldExports> | undefined;
  private plain = Buffer.alloc(0);

  /** @param useWasm false to fold in JS only (tests compare the two) */
  constructor(private readonly useWasm = true) {}

  /** `src` with A-Z lowered, in this folder's buffer: valid until the next call. */
  fold(src: Buffer): Buffer {
    const n = src.length;
    if (this.useWasm) {
      compiled ??= compileWasm(FOLD_WASM);
      if (compiled !== null) {
        const run = (this.wasm ??= new WasmRun<FoldExports>(compiled, n));
        // Doubled when it grows, so that regions growing a little at a time do not grow it each time.
        const room = run.bytes.length;
        if (n <= room || run.reserve(Math.max(n, 2 * room)) || run.reserve(n)) {
          const bytes = run.bytes;
          bytes.set(src);
          const simdLength = n - (n % 16);
          run.exports.fold(0, simdLength);
          foldAsciiJs(src, bytes, simdLength);
          return bytes.subarray(0, n);
        }
      }
    }
    if (this.plain.length < n) this.plain = Buffer.alloc(Math.max(n, 2 * this.plain.length));
    const out = this.plain.subarray(0, n);
    foldWords(src, out);
    return out;
  }
}
