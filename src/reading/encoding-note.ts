/**
 * The note a read adds when its text shows a file that is not UTF-8 (SPEC §3.2 keeps the text itself exactly what a
 * UTF-8 decode gives): UTF-16 text (PowerShell's `>` writes it), a binary file, or text in another encoding (Latin-1,
 * Windows-1252). Such a text shows U+FFFD or NUL, so only a text holding one of them costs a look at the file.
 */
import { isUtf8 } from "node:buffer";
import type { FileHandle } from "node:fs/promises";
import { BINARY_PROBE_BYTES, utf16Order, utf16Text } from "../kernel/binary.js";
import { formatCount } from "../kernel/bounded.js";
import type { Shown } from "../kernel/escape.js";
import { readAt } from "../kernel/read-at.js";
import { completePrefix, firstInvalidUtf8 } from "../kernel/utf8.js";
import { countLineFeeds } from "./utf8-count.js";

/** How far into a file the look for its first byte that is not UTF-8 goes: past it a read gives no note. */
const ENCODING_LOOK_BYTES = 16 * 1024 * 1024;
const BLOCK_BYTES = 1024 * 1024;

/** Whether a read's text may show a file that is not UTF-8: it holds U+FFFD or a NUL (`holds` tells of one character). */
export const mayBeUndecoded = (holds: (ch: string) => boolean): boolean => holds("\uFFFD") || holds("\0");

/**
 * The note on the opened file shown as `path` when it is not UTF-8 text, or undefined: its byte order mark, a NUL in
 * its first 8 KiB, or the line and byte offset of its first bytes that are not UTF-8 within `lookBytes`.
 */
export async function encodingNote(handle: FileHandle, path: Shown, lookBytes = ENCODING_LOOK_BYTES): Promise<string | undefined> {
  const head = await readAt(handle, 0, BINARY_PROBE_BYTES);
  const order = utf16Order(head);
  if (order !== undefined) {
    return (
      `Note: ${path} is ${utf16Text(order)}, shown here ` +
      "decoded as UTF-8, as every read is: a NUL (\\u0000) beside each ASCII character, U+FFFD (\uFFFD) for most others. " +
      "Text written back from this would not be the file's."
    );
  }
  if (head.includes(0)) {
    return (
      `Note: ${path} is not text (a NUL byte in its first 8 KiB; search_file_contents skips it), shown here decoded as ` +
      "UTF-8, U+FFFD (\uFFFD) for each byte that is not. An image or audio file: read_media_file."
    );
  }
  const at = await firstInvalidByte(handle, lookBytes);
  if (at === undefined) return undefined;
  return (
    `Note: ${path} is not valid UTF-8 from line ${formatCount(at.line)} (byte offset ${formatCount(at.byte)}): bytes that are ` +
    "not show here as U+FFFD (\uFFFD), so text written back from this would replace them (edit_file refuses such a " +
    "file). It may be Latin-1 or Windows-1252 text."
  );
}

/** The first sequence of the file that is not UTF-8 (an unfinished one at its end counts), within `lookBytes`. */
async function firstInvalidByte(handle: FileHandle, lookBytes: number): Promise<{ byte: number; line: number } | undefined> {
  const buffer = Buffer.allocUnsafe(BLOCK_BYTES);
  let position = 0;
  let line = 1;
  while (position < lookBytes) {
    const block = await readAt(handle, position, BLOCK_BYTES, buffer);
    // A block ends before a character it cuts, unless the file ends there: then that character is unfinished.
    const whole = block.length === BLOCK_BYTES ? completePrefix(block) : block.length;
    const valid = block.subarray(0, whole);
    if (!isUtf8(valid)) {
      const at = firstInvalidUtf8(valid);
      return { byte: position + at, line: line + countLineFeeds(valid.subarray(0, at)) };
    }
    if (block.length < BLOCK_BYTES) return undefined;
    line += countLineFeeds(valid);
    position += whole;
  }
  return undefined;
}
