/**
 * A file rewritten in place of itself (SPEC §12), the seam edit_file plugs
 * its engine into: the file is opened through its verified parent, the engine
 * reads a re-readable byte source and writes a temp file (replace.ts), and the
 * result takes the file's place only if the file is still the one read; the
 * entry's swap lock is held from before the open to after the swap. A write
 * that slipped in just before the swap is carried over or put back
 * (late-writes.ts). Any size: memory holds what the engine keeps, not the file.
 */
import { writeSync } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import type { Confinement } from "./confinement.js";
import type { Strategy } from "./strategy.js";
import { changedDuringEdit, isIoFailure, SafeFsError, wrapError } from "./errors.js";
import { sameVersion } from "./identity.js";
import { FileSource, keepLateWrites, type RewriteSource } from "./late-writes.js";
import { openRegularIn } from "./open.js";
import { Origin } from "./origin.js";
import { assertWritable, otherNamesOf, replaceWith } from "./replace.js";
import { underSwapLock } from "./swap-lock.js";

export type { RewriteSource } from "./late-writes.js";

/** Where the engine writes the new content, in order. */
interface RewriteSink {
  write(data: Buffer | string): Promise<void>;
  /**
   * Copies the source's first `length` bytes as the start of the output, before any write (by the kernel
   * where the platform allows: copy_file_range took a sixth of the kernel time of reading and writing
   * them); the writes then go on after them. Absent where the sink has no source.
   */
  copyPrefix?(length: number): Promise<void>;
  /**
   * Starts the platform's copy of the whole source now, beside the engine's reading, so that a `copyPrefix`
   * later finds it done; the writes wait for it and go over what it copied. Absent where the sink has no source.
   */
  copyAhead?(): void;
  /**
   * Ends the output with the source's bytes from `from` on, left where the copy started ahead put them: only when
   * that copy was made and the output has reached exactly `from` (the edits before it changed no length in total).
   * Resolves false, with nothing done, otherwise: the engine then writes the rest itself.
   */
  keepRest?(from: number): Promise<boolean>;
  /**
   * Says that output bytes [at, at + length) are the source's bytes from `from`, copied unchanged. Such stretches
   * are not hashed: after the swap they are compared with the old file, and only if another writer touched it.
   * Absent where the sink has no source.
   */
  copied?(at: number, from: number, length: number): void;
}

/** The editing algorithm: reads `source`, writes the new content to `sink` (null on a dry run), returns its report. */
export type RewriteEngine<T> = (source: RewriteSource, sink: RewriteSink | null, signal?: AbortSignal) => Promise<T>;

/** How a rewrite runs: a dry run writes nothing; an aborted `signal` stops it with nothing written. */
export interface RewriteOptions {
  dryRun: boolean;
  signal?: AbortSignal;
}

/** What a rewrite returns: the engine's report and the bytes another process appended meanwhile that were kept. */
export interface Rewritten<T> {
  value: T;
  appendedBytes: number;
  /** The file's other names (hard links), which keep its previous content (see replace.ts Replaced), or would in a dry run. */
  otherNames: number;
}

/** The source a sink may copy from: the old file, its size when opened, and where its copied stretches are recorded. */
interface SinkSource {
  handle: FileHandle;
  size: number;
  shown: string;
  strategy: Strategy;
  origin: Origin;
}

/**
 * A sink writing at increasing positions of `handle` from `start`, looping over short writes; failures are
 * worded `<context>: <reason>`. With `source` (and `start` 0) it can begin with a copy of the source's first bytes,
 * made by the source's platform strategy (started ahead by `copyAhead`), and the stretches copied are recorded in
 * the source's `origin`. `finish` cuts what a copy left past the last write; `settle` waits for a copy in flight
 * (the handle must outlive it).
 */
export function sinkFor(
  handle: FileHandle,
  context: string,
  start = 0,
  source?: SinkSource,
): RewriteSink & { finish(): Promise<void>; settle(): Promise<void> } {
  let position = start;
  // How far the file reaches: a copy may leave more than the prefix it is used for, which the writes go over.
  let extent = start;
  const from = start === 0 ? source : undefined;
  // The copy of the whole source started ahead, and whether the writes may go on (it is done, or there is none).
  let copying: Promise<void> | undefined;
  let copied = false;
  const copyWhole = (): Promise<void> => {
    if (from === undefined) throw new Error("copy: no source");
    copying ??= (async () => {
      try {
        await from.strategy.copyContent(from.handle.fd, handle.fd, from.size, false);
      } catch (err) {
        throw wrapError(err, context);
      }
      extent = (await handle.stat()).size;
    })();
    return copying;
  };
  // The kernel's copy must land before any write, or it would overwrite them.
  const writable = async (): Promise<void> => {
    if (copying === undefined || copied) return;
    await copying;
    copied = true;
  };
  const copyPrefix = async (length: number): Promise<void> => {
    if (from === undefined || position !== 0 || length > from.size) throw new Error("copyPrefix: no source, after a write, or too long");
    await copyWhole();
    copied = true;
    // The copy takes the source's size when it is reopened: shorter means it changed since it was read.
    if (extent < length) throw changedDuringEdit(from.shown);
    from.origin.copied(0, 0, length);
    position = length;
  };
  const keepRest = async (rest: number): Promise<boolean> => {
    if (from === undefined || copying === undefined || position !== rest || rest > from.size) return false;
    await writable();
    if (extent < from.size) throw changedDuringEdit(from.shown);
    from.origin.copied(rest, rest, from.size - rest);
    position = from.size;
    return true;
  };
  const copyAhead = (): void => {
    if (position !== 0) return;
    // Awaited by the first write, copyPrefix or settle; a failure is theirs to report.
    copyWhole().catch(() => undefined);
  };
  return {
    ...(from === undefined
      ? {}
      : { copyPrefix, copyAhead, keepRest, copied: (at: number, src: number, length: number) => from.origin.copied(at, src, length) }),
    async finish() {
      await writable();
      if (extent <= position) return;
      try {
        await handle.truncate(position);
      } catch (err) {
        throw wrapError(err, context);
      }
    },
    async settle() {
      await copying?.catch(() => undefined);
    },
    async write(data) {
      await writable();
      const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
      let done = 0;
      try {
        // Synchronous, like the source's reads: writers hand over pieces of up to a few MiB.
        while (done < bytes.length) {
          const bytesWritten = writeSync(handle.fd, bytes, done, bytes.length - done, position);
          done += bytesWritten;
          position += bytesWritten;
        }
      } catch (err) {
        throw wrapError(err, context);
      }
    },
  };
}

function checkAborted(signal: AbortSignal | undefined, shown: string): void {
  if (signal?.aborted) throw new SafeFsError(`Edit of ${shown} cancelled; no changes were written.`, { code: "ECANCELED" });
}

/**
 * Runs `engine` over the regular file `real` (a validated path) and, unless a dry run, replaces the file
 * with what it wrote: same owner, group and mode, refused if the file is read-only for the server's user,
 * changed meanwhile, or replaced by another writer.
 */
export function rewriteIn<T>(c: Confinement, real: string, options: RewriteOptions, engine: RewriteEngine<T>, shown = real): Promise<Rewritten<T>> {
  return c.inParent(
    real,
    "edit",
    async (t) => {
      if (options.dryRun) {
        const { handle, stat } = await openRegularIn(c, t);
        try {
          const value = await engine(new FileSource(handle, Number(stat.size), t.shown), null, options.signal);
          return { value, appendedBytes: 0, otherNames: otherNamesOf(stat) };
        } finally {
          await handle.close();
        }
      }
      // Refusals first, before the lock: a refused call leaves the directory as it was.
      const probe = await openRegularIn(c, t);
      try {
        assertWritable(probe.stat, t.shown, "edit");
      } finally {
        await probe.handle.close();
      }
      // The engine's own errors (no match, too large…) are its report and pass through unworded.
      try {
        return await underSwapLock(
          c,
          t,
          async (held) => {
            // The handle stays open until after the swap: it is how a write to the old
            // file that slipped in just before is noticed (keepLateWrites).
            const { handle: old, stat: before } = await openRegularIn(c, t);
            try {
              assertWritable(before, t.shown, "edit");
              const size = Number(before.size);
              const origin = new Origin();
              const { value, written, otherNames } = await replaceWith(
                held,
                before,
                async (temp) => {
                  const sink = sinkFor(temp, `Cannot write ${t.shown}`, 0, { handle: old, size, shown: t.shown, strategy: c.strategy, origin });
                  let report: T;
                  try {
                    report = await engine(new FileSource(old, size, t.shown), sink, options.signal);
                  } catch (error) {
                    throw new EngineFailed(error);
                  } finally {
                    // A copy started ahead writes into the temp file: it ends before the file is closed or removed.
                    await sink.settle();
                  }
                  await sink.finish();
                  await origin.seal(old, size);
                  checkAborted(options.signal, t.shown);
                  return report;
                },
                async () => {
                  if (!sameVersion(await t.lstat(), before)) throw changedDuringEdit(t.shown);
                },
              );
              const appendedBytes = await keepLateWrites({ held, old, before, written, unchanged: () => origin.unchanged(old, size, t.at, written) });
              return { value, appendedBytes, otherNames };
            } finally {
              await old.close();
            }
          },
          { signal: options.signal },
        );
      } catch (err) {
        const cause = err instanceof EngineFailed ? err.error : err;
        if (cause instanceof SafeFsError) throw isIoFailure(cause) ? cause.withNote(UNCHANGED) : cause;
        if (err instanceof EngineFailed) throw cause;
        throw wrapError(err, `Cannot edit ${t.shown}`).withNote(UNCHANGED);
      }
    },
    shown,
  );
}

const UNCHANGED = "no changes were written: the file keeps its previous content";

/** What the engine threw, marked as its own on the way out through the swap, so it is told apart by type, not by a flag. */
class EngineFailed extends Error {
  constructor(readonly error: unknown) {
    super("the edit engine failed", { cause: error });
  }
}
