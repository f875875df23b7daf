/**
 * One positioned read filled to the length asked for: `handle.read` may return fewer bytes than
 * asked before the end of a file, so every reader that wants "these bytes" loops the same way.
 */
import { readSync } from "node:fs";
import type { FileHandle } from "node:fs/promises";

/** Reads up to `length` bytes at `position`, fewer only at the end of the file (into `into` when it is long enough). */
export async function readAt(handle: FileHandle, position: number, length: number, into?: Buffer): Promise<Buffer> {
  const buffer = into !== undefined && into.length >= length ? into.subarray(0, length) : Buffer.alloc(length);
  let filled = 0;
  while (filled < length) {
    const { bytesRead } = await handle.read(buffer, filled, length - filled, position + filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return filled === length ? buffer : buffer.subarray(0, filled);
}

/**
 * readAt on a raw fd without a thread-pool round trip: for a large rewrite's pieces, where a round trip
 * per piece cost more than the read itself whenever the cores were busy.
 */
export function readAtSync(fd: number, position: number, length: number, into?: Buffer): Buffer {
  const buffer = into !== undefined && into.length >= length ? into.subarray(0, length) : Buffer.alloc(length);
  let filled = 0;
  while (filled < length) {
    const bytesRead = readSync(fd, buffer, filled, length - filled, position + filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return filled === length ? buffer : buffer.subarray(0, filled);
}
