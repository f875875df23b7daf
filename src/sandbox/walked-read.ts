/**
 * A small file met in a walk, read whole in one synchronous burst: open (final
 * symlink not followed, FIFO not waited on), fstat, the strategy's containment
 * check, read, close. Each of these through the thread pool cost a round trip of
 * 20-40 µs, which made a search of 100,000 small files 40x slower than grep -r
 * (SPEC §10); a burst is a few µs and stays short because the file is small.
 * Bigger files are left to `openWalkedFile`, which hands out a handle to stream.
 */
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { assertInside } from "./containment.js";
import { notRegular, wrapError } from "./errors.js";
import { READ_FLAGS } from "./flags.js";
import type { FileObjectId } from "./identity.js";
import { strategy } from "./platform.js";


/** A walked file read whole into the caller's buffer (`length` bytes), or too big for it ("large": nothing read). */
export type WalkedRead = { kind: "whole"; length: number; stat: FileObjectId } | { kind: "large" };

/**
 * Reads entry `name` of a walked directory (reached as `reach + name`) into `into` when it is a regular
 * file, inside `allowedDirs`, shorter than `into`. Blocks the thread for a few small syscalls only.
 * @throws naming `shown` when it is not a regular file, cannot be opened or read, or lies outside
 */
export function readWalkedSmallFile(
  reach: string,
  name: string,
  shown: string,
  allowedDirs: readonly string[],
  into: Buffer,
): WalkedRead {
  let fd: number;
  try {
    fd = openSync(reach + name, READ_FLAGS);
  } catch (err) {
    throw wrapError(err, `Cannot open ${shown}`);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw notRegular(shown, st);
    // Nothing of a large file is read here, so its check is left to the open that streams it.
    if (st.size >= into.length) return { kind: "large" };
    // Numbers are cheaper (no bigint stats per file) but lose precision past 2^53, where inode
    // numbers of some file systems lie: those are asked again as bigints.
    const exact = st.ino <= Number.MAX_SAFE_INTEGER && st.dev <= Number.MAX_SAFE_INTEGER;
    const stat = exact ? st : fstatSync(fd, { bigint: true });
    const real = strategy().realPathOfFdSync(fd, reach, name, shown, stat);
    if (real !== undefined) assertInside(real, shown, allowedDirs);
    // A size of 0 may still hide content (files of pseudo file systems), so it is read until EOF.
    const want = st.size > 0 ? st.size : into.length;
    let length = 0;
    while (length < want) {
      const n = readSync(fd, into, length, into.length - length, length);
      if (n === 0) break;
      length += n;
    }
    // Grown past the buffer since the fstat: streamed instead, like any big file.
    return length < into.length ? { kind: "whole", length, stat } : { kind: "large" };
  } catch (err) {
    throw wrapError(err, `Cannot read ${shown}`);
  } finally {
    closeSync(fd);
  }
}
