/**
 * The synchronous count of one small file read whole (SPEC §10), for results
 * that show no lines: the same binary check, matching-line and occurrence
 * counts as file-scan.ts's scanFile gives a file shorter than its binary probe,
 * without its per-file promise, buffers and objects (a tree of 100,000 small
 * files spent a third of its search time in them).
 */
import { BINARY_PROBE_BYTES, looksBinary } from "../kernel/binary.js";
import type { LineFinder } from "./line-finder.js";

/** A small file's figures; `lines` is -1 when it is binary. */
export interface WholeCount {
  lines: number;
  occurrences: number;
}

/**
 * Counts the matching lines of `bytes` (a whole file shorter than BINARY_PROBE_BYTES) and, when asked, their occurrences.
 * @throws when `bytes` is not shorter than BINARY_PROBE_BYTES (such files are streamed by scanFile)
 */
export function countWholeLines(finder: LineFinder, bytes: Buffer, withOccurrences = false): WholeCount {
  if (bytes.length >= BINARY_PROBE_BYTES)
    throw new Error(`countWholeLines takes files shorter than ${BINARY_PROBE_BYTES} bytes; got ${bytes.length}`);
  if (looksBinary(bytes)) return { lines: -1, occurrences: 0 };
  if (bytes.length === 0) return { lines: 0, occurrences: 0 };
  finder.reset(bytes);
  let lines = 0;
  let occurrences = 0;
  for (let ls = finder.next(0); ls >= 0; ls = finder.next(finder.end + 1)) {
    lines++;
    if (withOccurrences) occurrences += finder.occurrences();
    if (finder.end >= bytes.length) break;
  }
  return { lines, occurrences };
}
