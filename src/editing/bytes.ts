/**
 * Byte-level helpers of the streaming editor: CRLF normalization, line counting, where a
 * block may be cut without splitting a UTF-8 sequence, and where invalid UTF-8 starts.
 */
import { isUtf8 } from "node:buffer";

const LF = 0x0a;
const CR = 0x0d;

/**
 * Copies raw[from, to) to out[at…); returns the end. Over the same memory (`out` may be another view of it) it is
 * copyWithin (a memmove), twice as fast as Buffer#copy's binding, which also made a view per call.
 */
function move(raw: Buffer, out: Buffer, at: number, from: number, to: number): number {
  if (to === from) return at;
  if (out === raw || (out.buffer === raw.buffer && out.byteOffset === raw.byteOffset)) {
    if (at !== from) raw.copyWithin(at, from, to);
  } else raw.copy(out, at, from, to);
  return at + to - from;
}

// The CRLF positions of one block gathered here, then copied out at their count: pushing into a fresh
// array per block grew it by copies, the largest share of an edit's garbage.
let gathered = new Int32Array(1024);

/**
 * Removes the CR of every CRLF, writing the text into `out` (at least as long as `raw`; it may be
 * `raw`'s own memory, as bytes only move left); returns the text, a view of `out`, and where those LFs now are.
 */
export function normalizeInto(raw: Buffer, out: Buffer): { norm: Buffer; crlf: Int32Array } {
  let count = 0;
  let written = 0;
  let from = 0;
  // A one-byte search (memchr) for CR, then a look at the byte after: a two-byte indexOf ran at a
  // tenth of the speed, and most files have no CR at all.
  for (let at = raw.indexOf(CR); at !== -1; at = raw.indexOf(CR, at + 1)) {
    if (raw[at + 1] !== LF) continue;
    written = move(raw, out, written, from, at);
    if (count === gathered.length) {
      const more = new Int32Array(2 * count);
      more.set(gathered);
      gathered = more;
    }
    gathered[count++] = written;
    from = at + 1;
  }
  written = move(raw, out, written, from, raw.length);
  return { norm: out.subarray(0, written), crlf: gathered.slice(0, count) };
}

/** Number of LF bytes in `bytes[from, to)`. */
export function countLines(bytes: Buffer, from = 0, to = bytes.length): number {
  let n = 0;
  for (let i = bytes.indexOf(LF, from); i !== -1 && i < to; i = bytes.indexOf(LF, i + 1)) n++;
  return n;
}

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
