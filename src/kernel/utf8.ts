/**
 * Where UTF-8 text stops being valid, for the readers and the editor alike: a block cut without splitting a
 * sequence, and the first invalid sequence of a block.
 */
import { isUtf8 } from "node:buffer";

/**
 * Where the first invalid UTF-8 sequence of `bytes` starts (an incomplete one at the end counts), or `bytes.length`:
 * the longest prefix that is valid once an unfinished last character is cut off, found by halving (only for an error).
 */
export function firstInvalidUtf8(bytes: Buffer): number {
  const validTo = (n: number): number => completePrefix(bytes.subarray(0, n));
  let lo = 0;
  let hi = bytes.length;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (isUtf8(bytes.subarray(0, validTo(mid)))) lo = mid;
    else hi = mid - 1;
  }
  return validTo(lo);
}

/** Length of the longest prefix of `bytes` that does not end inside a UTF-8 sequence. */
export function completePrefix(bytes: Buffer): number {
  for (let i = bytes.length - 1; i >= 0 && i >= bytes.length - 3; i--) {
    const b = bytes[i] ?? 0;
    if ((b & 0xc0) === 0x80) continue;
    const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return bytes.length - i >= need ? bytes.length : i;
  }
  return bytes.length;
}
