/** get_file_info's fields (SPEC §4, §7), from a stat result; lib.ts's getFileStats returns the same. */
import type { Stats } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { BINARY_PROBE_BYTES, utf16Order } from "../kernel/binary.js";
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

/** A text's code unit: one byte, or two in UTF-16 of either byte order (judged by the file's byte order mark). */
interface Unit {
  width: 1 | 2;
  /** Where the unit's low byte sits in it: 0 (UTF-8, UTF-16 LE) or 1 (UTF-16 BE). */
  low: 0 | 1;
}

function unitOf(head: Buffer): Unit {
  const order = utf16Order(head);
  return order === undefined ? { width: 1, low: 0 } : { width: 2, low: order === "LE" ? 0 : 1 };
}

/** Whether the unit of `bytes` starting at `at` (at a unit boundary) is the character `code` (below 0x100). */
function isUnit(bytes: Buffer, at: number, unit: Unit, code: number): boolean {
  if (at < 0 || at + unit.width > bytes.length) return false;
  return unit.width === 1 ? bytes[at] === code : bytes[at + unit.low] === code && bytes[at + 1 - unit.low] === 0;
}

/**
 * The line endings of the LFs in `bytes` whose units start at or after `from`; `base` is the file offset of `bytes[0]`
 * (a unit starts at an offset its width divides), and a unit before `from` gives the first LF its CR.
 */
function endingsIn(bytes: Buffer, from: number, base: number, unit: Unit, seen: { lf: boolean; crlf: boolean }): void {
  for (let at = bytes.indexOf(0x0a, from + unit.low); at !== -1; at = bytes.indexOf(0x0a, at + 1)) {
    const start = at - unit.low;
    if ((base + start) % unit.width !== 0 || !isUnit(bytes, start, unit, 0x0a)) continue;
    if (isUnit(bytes, start - unit.width, unit, 0x0d)) seen.crlf = true;
    else seen.lf = true;
  }
}

/**
 * Reads the first and last SAMPLE_BYTES of an opened regular file of `size` bytes (never more) and
 * tells its line endings (judged from those bytes) and whether it ends with a line break, in UTF-16 units for a
 * file that begins with a UTF-16 byte order mark.
 */
export async function sampleEnds(handle: FileHandle, size: number): Promise<EndSample> {
  const head = await readAt(handle, 0, Math.min(size, SAMPLE_BYTES));
  const unit = unitOf(head);
  const seen = { lf: false, crlf: false };
  endingsIn(head, 0, 0, unit, seen);
  let last = head;
  let lastBase = 0;
  if (size > SAMPLE_BYTES) {
    // One unit more than the sample, before it, so a CRLF cut at the sample's edge is still seen as one.
    const start = Math.max(SAMPLE_BYTES - unit.width, size - SAMPLE_BYTES - unit.width);
    last = await readAt(handle, start, size - start);
    lastBase = start;
    endingsIn(last, unit.width, start, unit, seen);
  }
  // The file's last unit, at the boundary its width sets.
  const end = last.length - ((lastBase + last.length) % unit.width) - unit.width;
  const lineEndings: LineEndings = seen.lf && seen.crlf ? "mixed" : seen.crlf ? "CRLF" : seen.lf ? "LF" : "none";
  return { head, lineEndings, endsWithNewline: isUnit(last, end, unit, 0x0a) };
}
