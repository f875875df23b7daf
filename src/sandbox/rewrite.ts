/**
 * A file rewritten in place of itself (SPEC §12), the seam edit_file plugs
 * its engine into: the file is opened through its verified parent, the engine
 * reads a re-readable byte source and writes a temp file (replace.ts), and the
 * result takes the file's place only if the file is still the one read. A write
 * that slipped in just before the swap is carried over or put back
 * (late-writes.ts). Any size: memory holds what the engine keeps, not the file.
 */
import type { FileHandle } from "node:fs/promises";
import type { Confinement } from "./confinement.js";
import { changedDuringEdit, SafeFsError, wrapError } from "./errors.js";
import { sameVersion } from "./identity.js";
import { DigestingSource, keepLateWrites, type RewriteSource } from "./late-writes.js";
import { openRegularIn } from "./open.js";
import { assertWritable, replaceWith } from "./replace.js";

export type { RewriteSource } from "./late-writes.js";

/** Where the engine writes the new content, in order. */
interface RewriteSink {
  write(data: Buffer | string): Promise<void>;
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

/**
 * Runs `engine` over the regular file `real` (a validated path) and, unless a dry run, replaces the file
 * with what it wrote: same owner, group and mode, refused if the file is read-only for the server's user,
 * changed meanwhile, or replaced by another writer.
 */
export function rewriteIn<T>(c: Confinement, real: string, options: RewriteOptions, engine: RewriteEngine<T>): Promise<Rewritten<T>> {
  return c.inParent(real, "edit", async (t) => {
    // The handle stays open until after the swap: it is how a write to the old
    // file that slipped in just before is noticed (keepLateWrites).
    const { handle: old, stat: before } = await openRegularIn(c, t);
    try {
      const source = new DigestingSource(old, Number(before.size), !options.dryRun, t.shown);
      if (options.dryRun) return { value: await engine(source, null, options.signal), appendedBytes: 0 };
      assertWritable(before, t.shown, "edit");
      // The engine's own errors (no match, too large…) are its report and pass through unworded.
      let engineFailed = false;
      try {
        const { value, written } = await replaceWith(
          t,
          before,
          async (temp) => {
            engineFailed = true;
            const report = await engine(source, sinkFor(temp, t.shown), options.signal);
            engineFailed = false;
            const digest = await source.digest();
            checkAborted(options.signal, t.shown);
            return { report, digest };
          },
          async () => {
            if (!sameVersion(await t.lstat(), before)) throw changedDuringEdit(t.shown);
          },
        );
        const appendedBytes = await keepLateWrites({ t, old, before, written, digest: value.digest });
        return { value: value.report, appendedBytes };
      } catch (err) {
        throw engineFailed ? err : wrapError(err, `Cannot edit ${t.shown}`);
      }
    } finally {
      await old.close();
    }
  });
}
