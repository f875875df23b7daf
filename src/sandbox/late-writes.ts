/**
 * What a rewrite read, and what it must not lose (rewrite.ts, SPEC §12): the
 * new version knows what it was made from (origin.ts), so that after the
 * swap, at any file size in flat memory, a writer that wrote to the old file
 * between the last check and the swap is noticed. A pure append is carried
 * over to the new file; any other change is put back in place of the edit,
 * which is then refused.
 */
import { type BigIntStats, readSync } from "node:fs";
import fs, { type FileHandle } from "node:fs/promises";
import { changedDuringEdit, SafeFsError, wrapError } from "./errors.js";
import { APPEND_EXISTING_FLAGS } from "./flags.js";
import { sameFile } from "./identity.js";
import { replaceWith } from "./replace.js";
import type { HeldLock } from "./swap-lock.js";
import { readAt } from "../kernel/read-at.js";

const CHUNK = 1024 * 1024;

// When to look at the replaced file again after the swap: at once, and once more a
// little later for a writer that opened it before the swap but wrote only afterwards.
const LOOK_AFTER_MS = [0, 5];

/** The file being rewritten, as the engine sees it: readable any number of times, at any position. */
export interface RewriteSource {
  /** The file's real path inside the allowed directories (an engine's report may name it). */
  readonly path: string;
  /** Size in bytes when it was opened. */
  readonly size: number;
  /** Up to `length` bytes from `position` (fewer only at the end of the file). */
  /** `into`: a buffer the bytes may be read into (the result is then a view of it, valid until its next use). */
  read(position: number, length: number, into?: Buffer): Promise<Buffer>;
}

/** The opened file as a RewriteSource (its first `size` bytes). */
export class FileSource implements RewriteSource {
  constructor(
    private readonly handle: FileHandle,
    readonly size: number,
    readonly path: string,
  ) {}

  async read(position: number, length: number, into?: Buffer): Promise<Buffer> {
    try {
      // Synchronous: the engine reads in pieces of 64 KiB to 2 MiB, each a copy from the page cache, and a
      // thread-pool round trip per piece made a large edit several times slower on busy cores.
      return readAtSync(this.handle.fd, position, Math.max(0, Math.min(length, this.size - position)), into);
    } catch (err) {
      throw wrapError(err, `Cannot read ${this.path}`);
    }
  }
}

/** Appends bytes [from, to) of the old file to the target's entry, but only while it is still the file the edit wrote. */
async function carryOver(s: SwapDone, from: number, to: number): Promise<void> {
  const { t } = s.held;
  const handle = await fs.open(t.at, APPEND_EXISTING_FLAGS);
  try {
    if (!sameFile(await handle.stat({ bigint: true }), s.written)) {
      throw new SafeFsError(
        `File changed during edit: ${t.shown} was replaced right after the edit; ${to - from} bytes appended by ` +
          "another process to the previous version could not be added to it.",
      );
    }
    for (let at = from; at < to; ) {
      const chunk = await readAt(s.old, at, Math.min(CHUNK, to - at));
      if (chunk.length === 0) break;
      await handle.write(chunk);
      at += chunk.length;
    }
  } finally {
    await handle.close();
  }
}

/** Puts the old file's current content back in place of the edit's, keeping its owner and mode. */
async function putBack(s: SwapDone): Promise<void> {
  const { t } = s.held;
  try {
    await replaceWith(
      s.held,
      s.before,
      async (temp) => {
        for (let at = 0; ; ) {
          const chunk = await readAt(s.old, at, CHUNK);
          if (chunk.length === 0) break;
          await temp.write(chunk, 0, chunk.length, at);
          at += chunk.length;
        }
      },
      async () => {
        if (!sameFile(await t.lstat(), s.written)) throw changedDuringEdit(t.shown);
      },
    );
  } catch (err) {
    throw new SafeFsError(
      `File changed during edit: ${t.shown}; the edit was written, but another process changed the file meanwhile and ` +
        "its change could not be put back because the file changed again. Read it and check.",
      { cause: err },
    );
  }
}

/** What keepLateWrites needs to know about one swap. */
export interface SwapDone {
  /** The edited file's entry, its swap lock held. */
  held: HeldLock;
  /** The old file, still open. */
  old: FileHandle;
  before: BigIntStats;
  written: BigIntStats;
  /** Whether the old file's first `before.size` bytes are still those the new version was made from (asked only when it changed after the swap). */
  unchanged: () => Promise<boolean>;
}

/**
 * Looks at the old file after the swap; returns the bytes appended to it meanwhile that were carried
 * over. Residual window: a writer that opened the old file before the swap and writes only after the last look.
 * @throws `File changed during edit` after putting back an old file changed in place
 */
export async function keepLateWrites(s: SwapDone): Promise<number> {
  let seen = { size: s.before.size, mtimeNs: s.before.mtimeNs };
  let known = Number(s.before.size);
  for (const delay of LOOK_AFTER_MS) {
    if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
    const now = await s.old.stat({ bigint: true });
    if (now.size === seen.size && now.mtimeNs === seen.mtimeNs) continue;
    seen = { size: now.size, mtimeNs: now.mtimeNs };
    const size = Number(now.size);
    if (size >= Number(s.before.size) && (await s.unchanged())) {
      if (size > known) await carryOver(s, known, size);
      known = Math.max(known, size);
      continue;
    }
    await putBack(s);
    throw changedDuringEdit(s.held.t.shown);
  }
  return known - Number(s.before.size);
}

/**
 * readAt (kernel/read-at.ts) on a raw fd without a thread-pool round trip: for a large rewrite's pieces, where a round trip
 * per piece cost more than the read itself whenever the cores were busy. Here, not in the kernel: file-system imports stay in the sandbox.
 */
function readAtSync(fd: number, position: number, length: number, into?: Buffer): Buffer {
  const buffer = into !== undefined && into.length >= length ? into.subarray(0, length) : Buffer.alloc(length);
  let filled = 0;
  while (filled < length) {
    const bytesRead = readSync(fd, buffer, filled, length - filled, position + filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return filled === length ? buffer : buffer.subarray(0, filled);
}
