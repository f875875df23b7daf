/**
 * A region's bytes in a WebAssembly memory, for the two loops of a literal search
 * that JS and Node run slowly, each 16 bytes a step:
 * - `fold`: A-Z lowered (and nothing else changed), for the case-insensitive literal
 *   and prefilter. The JS loop it replaced (4 bytes a step) took 588 ms of a 1,384 ms
 *   search over a 600 MiB file. The copy and the SIMD loop take about 90 ms.
 * - `find`: the next position where the literal's rarest byte and the byte farthest
 *   from it both stand, for a region where the rarest byte is common. Buffer#indexOf
 *   of the whole literal took 566 ms of an 850 ms search over the same file.
 * The JS loops stay where WebAssembly is missing, for the last bytes, and as the
 * reference in tests.
 *
 *   (import "m" "mem" (memory 1))
 *   (func (export "fold") (param $p i32) (param $len i32)
 *     ;; $len a multiple of 16; each byte b with b - 0x41 < 26 (unsigned: A-Z only) gets 0x20 or'ed in
 *     (loop while $p < $p + $len: v = load $p; store $p (v | ((v - 0x41 <u 26) & 0x20)); $p += 16))
 *   (func (export "find") (param $p i32) (param $end i32) (param $a i32) (param $b i32) (param $d i32) (result i32)
 *     ;; the least j >= $p with j + 16 <= $end ... examined 16 at a time, where mem[j] = $a and mem[j + $d] = $b;
 *     ;; else -1 - (the first j not examined)
 *     (loop while $p + 16 <= $end:
 *        bits = bitmask((load $p == splat $a) & (load ($p + $d) == splat $b));
 *        if bits: return $p + ctz(bits);  $p += 16)
 *     -1 - $p)
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
  I32_SUB,
  i32c,
  LOOP,
  set,
  splat8,
  V128,
  V128_LOAD,
  V128_STORE,
  VOID,
  type WasmRun,
  wasmModule,
  wasmRun,
  I8_SPLAT,
  I8_EQ,
  I8_SUB,
  I8_LT_U,
  V128_AND,
  V128_OR,
  I8_BITMASK,
  TEE,
  IF,
  RETURN,
  I32_GT_U,
  I32_CTZ,
} from "../kernel/wasm.js";

// fold's locals: 0 p, 1 len, 2 end, 3 v.
const FOLD = {
  name: "fold",
  params: [I32, I32],
  results: [],
  locals: [
    [1, I32],
    [1, V128],
  ],
  body: [
    ...[...get(0), ...get(1), I32_ADD, ...set(2)],
    ...[BLOCK, VOID, LOOP, VOID],
    ...[...get(0), ...get(2), I32_GE_U, BR_IF, 1],
    ...[...get(0), ...V128_LOAD, ...set(3)],
    ...get(0),
    ...[...get(3), ...get(3), ...splat8(0x41), ...I8_SUB, ...splat8(26), ...I8_LT_U, ...splat8(0x20), ...V128_AND, ...V128_OR],
    ...V128_STORE,
    ...[...get(0), ...i32c(16), I32_ADD, ...set(0)],
    ...[BR, 0, END, END, END],
  ],
};

// find's locals: 0 p, 1 end, 2 a, 3 b, 4 d, 5 bits, 6 splat a, 7 splat b.
const FIND = {
  name: "find",
  params: [I32, I32, I32, I32, I32],
  results: [I32],
  locals: [
    [1, I32],
    [2, V128],
  ],
  body: [
    ...[...get(2), ...I8_SPLAT, ...set(6), ...get(3), ...I8_SPLAT, ...set(7)],
    ...[BLOCK, VOID, LOOP, VOID],
    ...[...get(0), ...i32c(16), I32_ADD, ...get(1), I32_GT_U, BR_IF, 1],
    ...[...get(0), ...V128_LOAD, ...get(6), ...I8_EQ],
    ...[...get(0), ...get(4), I32_ADD, ...V128_LOAD, ...get(7), ...I8_EQ],
    ...[...V128_AND, ...I8_BITMASK, TEE, 5],
    ...[IF, VOID, ...get(0), ...get(5), I32_CTZ, I32_ADD, RETURN, END],
    ...[...get(0), ...i32c(16), I32_ADD, ...set(0)],
    ...[BR, 0, END, END],
    ...[...i32c(-1), ...get(0), I32_SUB, END],
  ],
};

/** The module's bytes. */
export const REGION_WASM = wasmModule([FOLD, FIND]);

/** `src` with A-Z lowered into `out` (at least as long) from `from` on, byte by byte: what the SIMD loop must equal. */
export function foldAsciiJs(src: Uint8Array, out: Uint8Array, from = 0): void {
  for (let i = from; i < src.length; i++) {
    const b = src[i] ?? 0;
    out[i] = b >= 0x41 && b <= 0x5a ? b | 0x20 : b;
  }
}

/** The least j in `p`..`end` (exclusive) with `m[j]` = `a` and `m[j + d]` = `b`, else -1 - `end`: what the SIMD loop answers, one byte a step. */
function findJs(m: Uint8Array, p: number, end: number, a: number, b: number, d: number): number {
  for (let j = p; j < end; j++) if (m[j] === a && m[j + d] === b) return j;
  return -1 - end;
}

// `src` with A-Z lowered into `out`, four bytes at a time where both are aligned: a byte gets 0x20 when it is at
// least 'A', at most 'Z' and below 0x80 (where the SIMD loop does not run).
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

interface RegionExports {
  fold(p: number, len: number): void;
  find(p: number, end: number, a: number, b: number, d: number): number;
}

// The WebAssembly memory's size, at most: a region is a scan's chunk (256 KiB) of whole lines, but a line may make it
// as long as a piece (16 MiB), and memory kept that large would stay in the thread's resident set.
const KEPT_BYTES = 1024 * 1024;

/** One region at a time, copied into a memory of its own grown to the largest region up to KEPT_BYTES (a longer one gets one of its own). */
export class SimdRegion {
  private kept: WasmRun<RegionExports> | undefined;
  private refused = false;
  private plain = Buffer.alloc(0);
  private bytes: Buffer = Buffer.alloc(0);
  private holder = 0;

  /** @param useWasm false to run the JS loops only (tests compare the two) */
  constructor(private readonly useWasm = true) {}

  /**
   * `src` for `holder` (see `heldBy`), A-Z lowered with `fold`: copied into the WebAssembly memory when it fits
   * there (KEPT_BYTES), else lowered into a buffer of its own, or `src` itself when nothing is to be lowered.
   * Valid until the next load.
   */
  load(src: Buffer, fold: boolean, holder = 0): Buffer {
    this.holder = holder;
    const n = src.length;
    const run = n <= KEPT_BYTES ? this.run(n) : undefined;
    if (run !== undefined) {
      const bytes = run.bytes;
      bytes.set(src);
      if (fold) {
        const simdLength = n - (n % 16);
        run.exports.fold(0, simdLength);
        foldAsciiJs(src, bytes, simdLength);
      }
      this.bytes = bytes.subarray(0, n);
      return this.bytes;
    }
    if (!fold) {
      this.bytes = src;
      return src;
    }
    // A memory per long region, let go at the next load, grew the peak of a search of installed packages (their
    // minified one-line files) by 25 MB before the collector came to them; a buffer is reclaimed sooner.
    if (n > KEPT_BYTES) this.bytes = Buffer.allocUnsafe(n);
    else {
      if (this.plain.length < n) this.plain = Buffer.alloc(Math.min(KEPT_BYTES, Math.max(n, 2 * this.plain.length)));
      this.bytes = this.plain.subarray(0, n);
    }
    foldWords(src, this.bytes);
    return this.bytes;
  }

  /** True when the bytes last loaded lie in the WebAssembly memory, where `find` looks at 16 positions a step. */
  get simd(): boolean {
    return this.kept !== undefined && this.bytes.buffer === this.kept.bytes.buffer;
  }

  /** True when the last load was for `holder`: what it loaded is still here. */
  heldBy(holder: number): boolean {
    return this.holder === holder;
  }

  /**
   * The least j from `p` to `end` (exclusive) where the loaded bytes hold `a` at j and `b` at j + `d`, or -1 when
   * none; `end` - 1 + `d` must lie inside the loaded bytes.
   */
  find(p: number, end: number, a: number, b: number, d: number): number {
    let r = -1 - p;
    // The SIMD loop looks at 16 positions a step while they end by `end`; the rest one by one.
    if (this.simd) r = (this.kept as WasmRun<RegionExports>).exports.find(p, end, a, b, d);
    if (r >= 0) return r;
    const found = findJs(this.bytes, -1 - r, end, a, b, d);
    return found >= 0 ? found : -1;
  }

  // The WebAssembly instance, its memory holding at least `n` bytes (at most KEPT_BYTES); undefined where there is none.
  private run(n: number): WasmRun<RegionExports> | undefined {
    if (!this.useWasm) return undefined;
    // A memory refused once (an address-space limit) is not asked for again: the JS loops run.
    if (this.kept === undefined && !this.refused) {
      const module = compileWasm(REGION_WASM);
      this.kept = module === null ? undefined : wasmRun<RegionExports>(module, n);
      this.refused = this.kept === undefined;
    }
    const run = this.kept;
    if (run === undefined) return undefined;
    // Doubled when it grows, so that regions growing a little at a time do not grow it each time.
    const room = run.bytes.length;
    return n <= room || run.reserve(Math.min(KEPT_BYTES, Math.max(n, 2 * room))) || run.reserve(n) ? run : undefined;
  }
}

// The thread's region, shared by its literal searches: a memory each (a scan per file) cost its mapping per file and
// 10 MB more at the peak of a search of 10,000 files. A search loads its region with a holder number of its own and
// loads it again when another one loaded since; it keeps no view of it across a turn of the event loop.
let shared: SimdRegion | undefined;
let holders = 0;

/** The thread's shared region (see `SimdRegion.heldBy`), and a holder number not given before. */
export function sharedRegion(): SimdRegion {
  shared ??= new SimdRegion();
  return shared;
}

export function newHolder(): number {
  return ++holders;
}
