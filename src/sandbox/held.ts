/**
 * What the two strategies' held directories (strategy.ts `HeldDir`; `FdDir` in
 * platform/procfd.ts, `CwdDir` in platform/portable.ts) and copies share: the
 * refusal for a directory that changed, a directory's identity, the run-now
 * promise, the size under which a file is copied synchronously, and closing a
 * raw fd.
 */
import fsSync, { type BigIntStats } from "node:fs";
import { SafeFsError } from "./errors.js";
import type { DirId } from "./strategy.js";

/** The refusal for a held directory that is no longer the directory that was opened. */
export function changed(real: string): SafeFsError {
  return new SafeFsError(`Directory changed during the operation: ${real} is no longer the directory that was opened`, { code: "EAGAIN" });
}

/** A directory's identity from its stat. */
export const idOf = (st: BigIntStats): DirId => ({ dev: st.dev, ino: st.ino });

/** `op`'s result (or its error) as a promise, `op` run at once. */
export function now<T>(op: () => T): Promise<T> {
  return new Promise<T>((resolve) => resolve(op()));
}

// Files smaller than this are copied synchronously: a few microseconds each, where the thread-pool
// round trips of an asynchronous copy made a 100,000-file tree copy several times slower than cp -r.
export const SMALL_COPY = 256 * 1024;

/** Closes a raw fd, ignoring an error (it is closed either way); synchronous, as a close of a regular file is. */
export function closeQuietly(fd: number): void {
  try {
    fsSync.closeSync(fd);
  } catch {
    // Closed either way.
  }
}
