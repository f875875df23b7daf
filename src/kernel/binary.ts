/**
 * What counts as a binary file, one rule for every tool that tells (SPEC §10): search_file_contents and
 * replace_in_files skip such files, get_file_info reports `text: false`.
 */

/** Bytes examined for NUL to call a file binary. */
export const BINARY_PROBE_BYTES = 8192;

/** True for the first bytes of a binary file: a NUL, or a UTF-16 byte order mark. */
export function looksBinary(head: Buffer): boolean {
  const probe = head.subarray(0, BINARY_PROBE_BYTES);
  if (probe.length >= 2 && ((probe[0] === 0xff && probe[1] === 0xfe) || (probe[0] === 0xfe && probe[1] === 0xff))) return true;
  return probe.includes(0);
}
