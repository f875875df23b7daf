/**
 * Rewriting a file in place of itself (SPEC §12), with the editing algorithm
 * plugged in as an engine: this module opens the file through its verified
 * parent, hands the engine a re-readable byte source and a temp-file writer,
 * and then swaps the result in only if the file is still the one read.
 */
import type { BigIntStats } from "node:fs";
import fs, { type FileHandle } from "node:fs/promises";
import { openParentOf } from "./dirs.js";
import { SafeFsError, wrapError } from "./errors.js";
import { lstatIfExists, openRegularIn, TEMP_FLAGS, tempNameFor } from "./files.js";
import { DigestingSource, keepLateWrites, type RewriteSource } from "./late-writes.js";

export type { RewriteSource } from "./late-writes.js";
import { sameVersion } from "./identity.js";
import { withFileLocks } from "./locks.js";
import { assertWritable, keepOwnerAndMode } from "./ownership.js";
import { changedDuringEdit, swapIn } from "./swap.js";
import type { OpenedDir } from "./strategy.js";


/** Where the engine writes the new content, in order. */
export interface RewriteSink {
  write(data: Buffer | string): Promise<void>;
}

/** The editing algorithm: reads `source`, writes the new content to `sink` (null on a dry run), returns its report. */
export type RewriteEngine<T> = (source: RewriteSource, sink: RewriteSink | null, signal?: AbortSignal) => Promise<T>;

/** What a rewrite returns: the engine's report and the bytes another process appended meanwhile that were kept. */
export interface Rewritten<T> {
  value: T;
  appendedBytes: number;
}


/** A sink writing at increasing positions of `handle`, looping over short writes; failures name `shown`. */
function sinkFor(handle: FileHandle, shown: string): RewriteSink {
  let position = 0;
  return {
    async write(data) {
      const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
      let done = 0;
      try {
        while (done < bytes.length) {
          const { bytesWritten } = await handle.write(bytes, done, bytes.length - done, position);
          done += bytesWritten;
          position += bytesWritten;
        }
      } catch (err) {
        throw wrapError(err, `Cannot write ${shown}`);
      }
    },
  };
}

function checkAborted(signal: AbortSignal | undefined, shown: string): void {
  if (signal?.aborted) throw new SafeFsError(`Edit of ${shown} cancelled; no changes were written.`, { code: "ECANCELED" });
}

/** Writes the engine's output to a temp file beside `name` (same owner and mode) and swaps it in. */
async function writeAndSwap<T>(
  dir: OpenedDir,
  name: string,
  old: FileHandle,
  before: BigIntStats,
  source: DigestingSource,
  engine: RewriteEngine<T>,
  shown: string,
  signal: AbortSignal | undefined,
): Promise<Rewritten<T>> {
  const tempName = tempNameFor(name);
  let created = false;
  // The engine's own errors (no match, too large…) are its report and pass through unworded.
  let engineFailed = false;
  try {
    const temp = await fs.open(dir.child(tempName), TEMP_FLAGS, 0o600);
    created = true;
    let value: T;
    let written: BigIntStats;
    try {
      // Owner first: an edit that cannot keep it is refused before any work is done.
      await keepOwnerAndMode(temp, before, shown);
      engineFailed = true;
      value = await engine(source, sinkFor(temp, shown), signal);
      engineFailed = false;
      written = await temp.stat({ bigint: true });
    } finally {
      await temp.close();
    }
    const digest = await source.digest();
    checkAborted(signal, shown);
    await swapIn(dir, tempName, name, shown, async () => {
      if (!sameVersion(await lstatIfExists(dir.child(name)), before)) throw changedDuringEdit(shown);
    });
    created = false;
    const appendedBytes = await keepLateWrites({ dir, name, old, before, written, digest, shown });
    return { value, appendedBytes };
  } catch (err) {
    throw engineFailed ? err : wrapError(err, `Cannot edit ${shown}`);
  } finally {
    if (created) await fs.unlink(dir.child(tempName)).catch(() => undefined);
  }
}

/**
 * Runs `engine` over the regular file `path` (a validated real path) and, unless `dryRun`,
 * replaces the file with what it wrote: same owner, group and mode, refused if the file is
 * read-only for the server's user, changed meanwhile, or replaced by another writer. Serialised
 * with every other change to `path` in this server.
 */
export async function rewriteFile<T>(
  path: string,
  allowedDirs: readonly string[],
  options: { dryRun: boolean; signal?: AbortSignal },
  engine: RewriteEngine<T>,
): Promise<Rewritten<T>> {
  return withFileLocks([path], async () => {
    const { dir, name } = await openParentOf(path, allowedDirs, path, "edit");
    try {
      // The handle stays open until after the swap: it is how a write to the old
      // file that slipped in just before is noticed (keepLateWrites).
      const { handle, stat: before } = await openRegularIn(dir, name, path, allowedDirs);
      try {
        const source = new DigestingSource(handle, Number(before.size), !options.dryRun, path);
        if (options.dryRun) return { value: await engine(source, null, options.signal), appendedBytes: 0 };
        assertWritable(before, path, "edit");
        return await writeAndSwap(dir, name, handle, before, source, engine, path, options.signal);
      } finally {
        await handle.close();
      }
    } finally {
      await dir.close();
    }
  });
}
