/**
 * What counts as a binary file, one rule for every tool that tells (SPEC §10): search_file_contents and
 * replace_in_files skip such files, get_file_info reports `text: false`.
 */

/** Bytes examined for NUL to call a file binary. */
export const BINARY_PROBE_BYTES = 8192;

/** The byte order of a file's first bytes that are a UTF-16 byte order mark (FF FE: LE, FE FF: BE), or undefined. */
export function utf16Order(head: Uint8Array): "LE" | "BE" | undefined {
  if (head[0] === 0xff && head[1] === 0xfe) return "LE";
  if (head[0] === 0xfe && head[1] === 0xff) return "BE";
  return undefined;
}

/** True for the first bytes of a binary file: a NUL, or a UTF-16 byte order mark. */
export function looksBinary(head: Buffer): boolean {
  return utf16Order(head) !== undefined || head.subarray(0, BINARY_PROBE_BYTES).includes(0);
}

/** How a UTF-16 file is named in the note and the refusal that tell of one: its byte order and its mark. */
export const utf16Text = (order: "LE" | "BE"): string =>
  `UTF-16 ${order} text (it begins with the byte order mark ${order === "LE" ? "FF FE" : "FE FF"})`;
