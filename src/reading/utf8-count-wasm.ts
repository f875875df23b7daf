/**
 * The WebAssembly module behind utf8-count.ts, assembled here from its
 * instructions so the source stays readable and no build step is needed.
 *
 *   (import "m" "mem" (memory 1))
 *   (global $lines (export "lines") (mut i32) 0)
 *   (func (export "count") (param $p i32) (param $len i32) (result i32)
 *     ;; $len is a multiple of 16. Per 16-byte lane, up to 255 blocks are
 *     ;; tallied in i8 lanes (subtracting an all-ones compare mask adds 1),
 *     ;; then widened into i32x4 totals so no lane overflows.
 *     returns $len - continuation bytes (0x80-0xBF) + 4-byte leaders (0xF0-0xFF);
 *     sets $lines to the number of 0x0A bytes)
 */

import {
  BLOCK,
  BR,
  BR_IF,
  END,
  get,
  I32,
  I32_ADD,
  I32_GE_U,
  I32_LT_U,
  I32_SUB,
  i32c,
  LOOP,
  SELECT,
  set,
  splat8,
  V128,
  V128_LOAD,
  VOID,
  wasmModule,
  I8_EQ,
  I8_LT_S,
  I8_GT_U,
  I8_SUB,
  I16_EXTADD_U8,
  I32_EXTADD_U16,
  I32X4_ADD,
  lane,
} from "../kernel/wasm.js";

// Locals: 0 p, 1 len, 2 end, 3 blockEnd, 4 v, 5-7 per-block tallies, 8-10 totals.
const P = 0,
  LEN = 1,
  END_AT = 2,
  BLOCK_END = 3,
  V = 4;
const TALLY = [5, 6, 7];
const TOTAL = [8, 9, 10];
// Lane masks: continuation byte (signed < -64), 4-byte leader (unsigned > 0xEF), line feed.
const TESTS = [
  [...splat8(-64), ...I8_LT_S],
  [...splat8(0xef), ...I8_GT_U],
  [...splat8(0x0a), ...I8_EQ],
];

const sumLanes = (local: number): number[] => [
  ...get(local),
  ...lane(0),
  ...get(local),
  ...lane(1),
  I32_ADD,
  ...get(local),
  ...lane(2),
  I32_ADD,
  ...get(local),
  ...lane(3),
  I32_ADD,
];

const body = [
  ...get(P),
  ...get(LEN),
  I32_ADD,
  ...set(END_AT),
  BLOCK,
  VOID,
  LOOP,
  VOID,
  ...get(P),
  ...get(END_AT),
  I32_GE_U,
  BR_IF,
  1,
  // blockEnd = min(p + 255*16, end)
  ...get(P),
  ...i32c(255 * 16),
  I32_ADD,
  ...get(END_AT),
  ...get(P),
  ...i32c(255 * 16),
  I32_ADD,
  ...get(END_AT),
  I32_LT_U,
  SELECT,
  ...set(BLOCK_END),
  ...TALLY.flatMap((t) => [...splat8(0), ...set(t)]),
  LOOP,
  VOID,
  ...get(P),
  ...V128_LOAD,
  ...set(V),
  ...TALLY.flatMap((t, i) => [...get(t), ...get(V), ...(TESTS[i] ?? []), ...I8_SUB, ...set(t)]),
  ...get(P),
  ...i32c(16),
  I32_ADD,
  ...set(P),
  ...get(P),
  ...get(BLOCK_END),
  I32_LT_U,
  BR_IF,
  0,
  END,
  ...TALLY.flatMap((t, i) => {
    const total = TOTAL[i] ?? 0;
    return [...get(total), ...get(t), ...I16_EXTADD_U8, ...I32_EXTADD_U16, ...I32X4_ADD, ...set(total)];
  }),
  BR,
  0,
  END,
  END,
  ...sumLanes(TOTAL[2] ?? 0),
  0x24,
  0,
  ...get(LEN),
  ...sumLanes(TOTAL[0] ?? 0),
  I32_SUB,
  ...sumLanes(TOTAL[1] ?? 0),
  I32_ADD,
  END,
];

/** The module's bytes. */
export const COUNT_WASM = wasmModule(
  [
    {
      name: "count",
      params: [I32, I32],
      results: [I32],
      locals: [
        [2, I32],
        [7, V128],
      ],
      body,
    },
  ],
  "lines",
);
