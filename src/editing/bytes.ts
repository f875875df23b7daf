/**
 * Byte-level helpers of the streaming editor: CRLF normalization and line counting (where UTF-8 stops being
 * valid is kernel/utf8.ts's).
 */

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
