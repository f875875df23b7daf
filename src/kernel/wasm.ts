/**
 * The project's small WebAssembly SIMD loops, assembled in TypeScript from their
 * instructions (no build step, no binary in the tree): the encoding helpers
 * and the one way to compile a module and run it over a memory of its own.
 * Where WebAssembly or its SIMD is missing, `compileWasm` answers null and the
 * caller's JS loop runs instead.
 */

// The parts of the WebAssembly JS API used here (the project's libs do not declare it).
declare namespace WebAssembly {
  class Module {
    constructor(bytes: Uint8Array);
  }
  class Memory {
    constructor(desc: { initial: number; maximum?: number });
    readonly buffer: ArrayBuffer;
    grow(pages: number): number;
  }
  class Instance {
    constructor(module: Module, imports: object);
    readonly exports: object;
  }
  function validate(bytes: Uint8Array): boolean;
}

/** A compiled module, made only by `compileWasm`. */
export type WasmModule = WebAssembly.Module;

/** Bytes of a WebAssembly memory page. */
const WASM_PAGE = 64 * 1024;

/** Value types. */
export const I32 = 0x7f;
export const V128 = 0x7b;

/** Unsigned LEB128. */
function uleb(n: number): number[] {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n !== 0) b |= 0x80;
    out.push(b);
  } while (n !== 0);
  return out;
}

/** Signed LEB128 for i32 constants. */
function sleb(n: number): number[] {
  const out: number[] = [];
  for (;;) {
    const b = n & 0x7f;
    n >>= 7;
    if ((n === 0 && (b & 0x40) === 0) || (n === -1 && (b & 0x40) !== 0)) return [...out, b];
    out.push(b | 0x80);
  }
}

const vec = (items: number[][]): number[] => [...uleb(items.length), ...items.flat()];
const section = (id: number, body: number[]): number[] => [id, ...uleb(body.length), ...body];
const name = (s: string): number[] => [...uleb(s.length), ...Buffer.from(s, "latin1")];

/** A SIMD instruction (prefix 0xfd). */
const simd = (op: number): number[] => [0xfd, ...uleb(op)];
export const get = (i: number): number[] => [0x20, ...uleb(i)];
export const set = (i: number): number[] => [0x21, ...uleb(i)];
export const i32c = (n: number): number[] => [0x41, ...sleb(n)];
/** v128.load and v128.store at the address on the stack (alignment 1, offset 0). */
export const V128_LOAD = [...simd(0x00), 0, 0];
export const V128_STORE = [...simd(0x0b), 0, 0];
/** A v128 constant with `byte` in each of its 16 lanes. */
export const splat8 = (byte: number): number[] => [...simd(0x0c), ...new Array<number>(16).fill(byte & 0xff)];

/** SIMD lane instructions: i8x16 splat, compares, subtraction and bitmask; v128 and/or; widening adds; i32x4 lane extraction. */
export const I8_SPLAT = simd(0x0f);
export const I8_EQ = simd(0x23);
export const I8_LT_S = simd(0x25);
export const I8_LT_U = simd(0x26);
export const I8_GT_U = simd(0x28);
export const V128_AND = simd(0x4e);
export const V128_OR = simd(0x50);
export const I8_BITMASK = simd(0x64);
export const I8_SUB = simd(0x71);
export const I16_EXTADD_U8 = simd(0x7d);
export const I32_EXTADD_U16 = simd(0x7f);
export const I32X4_ADD = simd(0xae);
export const lane = (l: number): number[] => [...simd(0x1b), l];

/** Control, local and i32 instructions. */
export const [I32_ADD, I32_SUB, I32_LT_U, I32_GT_U, I32_GE_U, I32_CTZ, SELECT] = [0x6a, 0x6b, 0x49, 0x4b, 0x4f, 0x68, 0x1b];
export const [BLOCK, LOOP, IF, END, BR, BR_IF, RETURN, VOID, TEE] = [0x02, 0x03, 0x04, 0x0b, 0x0c, 0x0d, 0x0f, 0x40, 0x22];

/** One exported function of a module: its name, signature, locals (runs of `[count, type]`) and body. */
export interface WasmFunction {
  name: string;
  params: number[];
  results: number[];
  locals: number[][];
  body: number[];
}

/**
 * The bytes of a module that imports its memory as `m.mem` and exports `functions`, and, with `global`, one
 * mutable i32 global (starting at 0) under that name.
 */
export function wasmModule(functions: WasmFunction[], global?: string): Uint8Array {
  const exports = functions.map((f, i) => [...name(f.name), 0x00, ...uleb(i)]);
  if (global !== undefined) exports.push([...name(global), 0x03, 0]);
  const codes = functions.map((f) => {
    const code = [...vec(f.locals), ...f.body];
    return [...uleb(code.length), ...code];
  });
  return new Uint8Array([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...section(1, vec(functions.map((f) => [0x60, ...vec(f.params.map((p) => [p])), ...vec(f.results.map((r) => [r]))]))),
    ...section(2, vec([[...name("m"), ...name("mem"), 0x02, 0x00, 0x01]])),
    ...section(3, vec(functions.map((_, i) => uleb(i)))),
    ...(global === undefined ? [] : section(6, vec([[I32, 0x01, ...i32c(0), END]]))),
    ...section(7, vec(exports)),
    ...section(10, vec(codes)),
  ]);
}

// Each module's bytes compiled once in each thread (a pure cache: the bytes are constants of their modules).
const compiled = new WeakMap<Uint8Array, WasmModule | null>();

/** `bytes` compiled (once per thread), or null where this runtime has no WebAssembly or rejects the module (no SIMD). */
export function compileWasm(bytes: Uint8Array): WasmModule | null {
  let module = compiled.get(bytes);
  if (module === undefined) {
    try {
      module = WebAssembly.validate(bytes) ? new WebAssembly.Module(bytes) : null;
    } catch {
      module = null;
    }
    compiled.set(bytes, module);
  }
  return module;
}

/** An instance of a module over a memory of its own, and a Buffer over all of that memory (renewed when it grows). */
export class WasmRun<E> {
  readonly exports: E;
  private readonly memory: WebAssembly.Memory;
  private view: Buffer;

  /** @param bytes at least this many bytes of memory (whole pages); `fixed` when it never grows */
  constructor(module: WasmModule, bytes: number, fixed = false) {
    const pages = Math.max(1, Math.ceil(bytes / WASM_PAGE));
    this.memory = new WebAssembly.Memory(fixed ? { initial: pages, maximum: pages } : { initial: pages });
    this.exports = new WebAssembly.Instance(module, { m: { mem: this.memory } }).exports as E;
    this.view = Buffer.from(this.memory.buffer);
  }

  /** All of the memory's bytes. */
  get bytes(): Buffer {
    return this.view;
  }

  /** Grows the memory to at least `bytes`; false when it cannot (the limit of 4 GiB, or no memory left). */
  reserve(bytes: number): boolean {
    if (bytes <= this.view.length) return true;
    try {
      this.memory.grow(Math.ceil((bytes - this.view.length) / WASM_PAGE));
    } catch {
      return false;
    }
    this.view = Buffer.from(this.memory.buffer);
    return true;
  }
}

/**
 * A run of `module` over a memory of at least `bytes` (see WasmRun), or undefined when no memory can be had: under
 * an address-space limit (`ulimit -v`) V8 cannot reserve the guard region it puts around each memory, and the
 * caller's JS loop runs instead.
 */
export function wasmRun<E>(module: WasmModule, bytes: number, fixed = false): WasmRun<E> | undefined {
  try {
    return new WasmRun<E>(module, bytes, fixed);
  } catch {
    return undefined;
  }
}
