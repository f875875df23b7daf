/** get_file_info's fields (SPEC §4, §7), from a stat result; lib.ts's getFileStats returns the same. */
import type { Stats } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { BINARY_PROBE_BYTES } from "../kernel/binary.js";
import { readAt } from "../kernel/read-at.js";

/** What get_file_info reports about a path, in upstream's order. */
export interface FileInfo {
  size: number;
  created: Date;
  modified: Date;
  accessed: Date;
  isDirectory: boolean;
  isFile: boolean;
  permissions: string;
}

/** Upstream's get_file_info fields, in its order, from a stat result: permissions as the last three octal digits of the mode. */
export function fileInfo(stats: Stats): FileInfo {
  return {
    size: stats.size,
    created: stats.birthtime,
    modified: stats.mtime,
    accessed: stats.atime,
    isDirectory: stats.isDirectory(),
    isFile: stats.isFile(),
    permissions: stats.mode.toString(8).slice(-3),
  };
}

/** How a file's line breaks look in the bytes sampled: only LF, only CRLF, both, or no line break. */
type LineEndings = "LF" | "CRLF" | "mixed" | "none";

/** Bytes read at each end of a file for its line traits: at the head, the bytes grep's binary probe judges. */
export const SAMPLE_BYTES = BINARY_PROBE_BYTES;

/** A regular file's first and last bytes, and what they say of its line breaks (SPEC §15). */
export interface EndSample {
  head: Buffer;
  lineEndings: LineEndings;
  endsWithNewline: boolean;
}

/** The line endings of the LFs in `bytes` at or after `from` (a byte before `from` gives the first one its CR). */
function endingsIn(bytes: Buffer, from: number, seen: { lf: boolean; crlf: boolean }): void {
  for (let at = bytes.indexOf(0x0a, from); at !== -1; at = bytes.indexOf(0x0a, at + 1)) {
    if (at > 0 && bytes[at - 1] === 0x0d) seen.crlf = true;
    else seen.lf = true;
  }
}

/**
 * Reads the first and last SAMPLE_BYTES of an opened regular file of `size` bytes (never more) and
 * tells its line endings (judged from those bytes) and whether it ends with a line break.
 */
export async function sampleEnds(handle: FileHandle, size: number): Promise<EndSample> {
  const head = await readAt(handle, 0, Math.min(size, SAMPLE_BYTES));
  const seen = { lf: false, crlf: false };
  endingsIn(head, 0, seen);
  let last = head[head.length - 1];
  if (size > SAMPLE_BYTES) {
    // One byte more than the sample, before it, so a CRLF cut at the sample's edge is still seen as one.
    const start = Math.max(SAMPLE_BYTES - 1, size - SAMPLE_BYTES - 1);
    const tail = await readAt(handle, start, size - start);
    endingsIn(tail, 1, seen);
    last = tail[tail.length - 1];
  }
  const lineEndings: LineEndings = seen.lf && seen.crlf ? "mixed" : seen.crlf ? "CRLF" : seen.lf ? "LF" : "none";
  return { head, lineEndings, endsWithNewline: last === 0x0a };
}
