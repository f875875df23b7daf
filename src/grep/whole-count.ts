/**
 * The synchronous count of one small file read whole (SPEC §10), for results
 * that show no lines: the same binary check and matching-line count as
 * file-scan.ts's scanFile gives a file shorter than its binary probe, without
 * its per-file promise, buffers and objects (a tree of 100,000 small files spent
 * a third of its search time in them).
 */
import { BINARY_PROBE_BYTES, looksBinary } from "./file-scan.js";
import type { LineFinder } from "./line-finder.js";

/**
 * The matching lines of `bytes` (a whole file shorter than BINARY_PROBE_BYTES), or -1 when it is binary.
 * @throws when `bytes` is not shorter than BINARY_PROBE_BYTES (such files are streamed by scanFile)
 */
export function countWholeLines(finder: LineFinder, bytes: Buffer): number {
  if (bytes.length >= BINARY_PROBE_BYTES)
    throw new Error(`countWholeLines takes files shorter than ${BINARY_PROBE_BYTES} bytes; got ${bytes.length}`);
  if (looksBinary(bytes)) return -1;
  if (bytes.length === 0) return 0;
  finder.reset(bytes);
  let n = 0;
  for (let ls = finder.next(0); ls >= 0; ls = finder.next(finder.end + 1)) {
    n++;
    if (finder.end >= bytes.length) break;
  }
  return n;
}
