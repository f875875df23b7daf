/**
 * append_file (SPEC §15, §18): text added at the end of a file, created when
 * missing, so that a kill at any moment leaves the file wholly as before or
 * wholly appended. An append written in place is several write(2) calls (and
 * even one can be cut short by a fatal signal), so it is a rewrite instead:
 * the new version is the old content, copied by the kernel (a reflink where
 * the file system has them), plus the text, in the entry's temp file, swapped
 * in under the entry's swap lock after the same identity check as an edit,
 * with the same handling of writes that slip in before the swap. Its cost
 * therefore grows with the file's size (one copy of it, about as fast as cp);
 * two server processes appending to one file take turns and never interleave.
 *
 * A file whose owner or group this server's user cannot give a new version
 * (another user's file it may write through its group) cannot be replaced; it
 * is appended to in place with O_APPEND instead, still under the swap lock, and
 * a failure then says how many bytes were written (the residual: a kill during
 * that write can leave part of the text).
 */
import type { BigIntStats } from "node:fs";
import fs, { type FileHandle } from "node:fs/promises";
import { utf16Order, utf16Text } from "../kernel/binary.js";
import { readAt } from "../kernel/read-at.js";
import type { Confinement, Target } from "./confinement.js";
import { CHANGED, changedDuringEdit, errnoCode, isIoFailure, notRegular, SafeFsError, wrapError } from "./errors.js";
import { APPEND_EXISTING_FLAGS } from "./flags.js";
import { sameFile, sameVersion } from "./identity.js";
import { keepLateWrites } from "./late-writes.js";
import { Origin } from "./origin.js";
import { openRegularIn } from "./open.js";
import { assertWritable, replaceWith } from "./replace.js";
import { sinkFor } from "./rewrite.js";
import { type HeldLock, underSwapLock } from "./swap-lock.js";

// A file another program keeps changing is tried this many times before the append is refused.
const ATTEMPTS = 3;

/** How the file ended before the text was added. */
export type Ending = "new" | "empty" | "lf" | "crlf" | "none";

/** Whether the file open as `handle` ends with a line break, from its last two bytes. */
async function endingOf(handle: FileHandle, size: number): Promise<Ending> {
  if (size === 0) return "empty";
  const tail = Buffer.alloc(Math.min(2, size));
  await handle.read(tail, 0, tail.length, size - tail.length);
  if (tail.at(-1) !== 0x0a) return "none";
  return tail.length === 2 && tail[0] === 0x0d ? "crlf" : "lf";
}

function refuseNonFile(t: Target, st: BigIntStats): never {
  if (st.isSymbolicLink()) throw new SafeFsError(`Cannot append to ${t.shown}: it is a symbolic link; refusing to follow it`, { code: "ELOOP" });
  if (st.isDirectory()) throw new SafeFsError(`Cannot append to ${t.shown}: it is a directory`, { code: "EISDIR" });
  throw notRegular(t.shown, st);
}

/** Whether a replacement can keep `st`'s owner and group: root can, others only for their own file and one of their groups. */
function canKeepOwner(st: BigIntStats): boolean {
  const uid = process.geteuid?.();
  if (uid === undefined || uid === 0) return true;
  const groups = new Set([process.getegid?.(), ...(process.getgroups?.() ?? [])].map((g) => BigInt(g ?? -1)));
  return st.uid === BigInt(uid) && groups.has(st.gid);
}

/** In place, for a file that cannot be replaced: O_APPEND on the same file, checked by its handle. */
async function appendInPlace(t: Target, before: BigIntStats, text: Buffer): Promise<void> {
  const handle = await fs.open(t.at, APPEND_EXISTING_FLAGS);
  let written = 0;
  try {
    if (!sameFile(await handle.stat({ bigint: true }), before)) throw changedDuringEdit(t.shown);
    while (written < text.length) written += (await handle.write(text, written, text.length - written)).bytesWritten;
  } catch (err) {
    if (written === 0 || errnoCode(err) === CHANGED) throw err;
    throw wrapError(err, `Cannot append to ${t.shown}`).withNote(
      `only ${written} of ${text.length} bytes were appended (the file cannot be replaced by this server's user, so it was appended to in place)`,
    );
  } finally {
    await handle.close();
  }
}

/** One try: the new version built and swapped in; throws `changedDuringEdit` when the file changed meanwhile. */
async function appendOnce(c: Confinement, held: HeldLock, text: Buffer): Promise<Ending> {
  const { t } = held;
  const pre = await t.lstat();
  if (pre === undefined) {
    await replaceWith(
      held,
      undefined,
      (temp) => sinkFor(temp, `Cannot append to ${t.shown}`).write(text),
      async () => {
        if ((await t.lstat()) !== undefined) throw changedDuringEdit(t.shown);
      },
    );
    return "new";
  }
  if (!pre.isFile()) refuseNonFile(t, pre);
  const { handle: old, stat: before } = await openRegularIn(c, t);
  try {
    assertWritable(before, t.shown, "append to");
    const size = Number(before.size);
    // The text is added as UTF-8: at the end of UTF-16 text it would read as other characters, or none.
    const order = size >= 2 ? utf16Order(await readAt(old, 0, 2)) : undefined;
    if (order !== undefined) {
      throw new SafeFsError(
        `Cannot append to ${t.shown}: it is ${utf16Text(order)}, and the text would be added as UTF-8, which a reader of the ` +
          `file would not decode; nothing was appended: ${t.shown} is as it was`,
      );
    }
    const ending = await endingOf(old, size);
    if (!canKeepOwner(before)) {
      await appendInPlace(t, before, text);
      return ending;
    }
    // The new version is a copy of the old bytes, then the text: compared with the old file only if a late writer is seen.
    const origin = new Origin();
    origin.copied(0, 0, size);
    const { written } = await replaceWith(
      held,
      before,
      async (temp) => {
        await c.strategy.copyContent(old.fd, temp.fd, size);
        if ((await temp.stat()).size !== size) throw changedDuringEdit(t.shown);
        await sinkFor(temp, `Cannot append to ${t.shown}`, size).write(text);
        await origin.seal(old, size);
      },
      async () => {
        if (!sameVersion(await t.lstat(), before)) throw changedDuringEdit(t.shown);
      },
    );
    await keepLateWrites({ held, old, before, written, unchanged: () => origin.unchanged(old, size, t.at, written) });
    return ending;
  } finally {
    await old.close();
  }
}

/**
 * Appends `content` to `real` (a validated path; created if missing) as one indivisible change; returns
 * how the file ended before. Failures say that nothing was appended.
 */
export function appendText(c: Confinement, real: string, content: string, signal?: AbortSignal, shown = real): Promise<Ending> {
  const text = Buffer.from(content, "utf8");
  return c.inParent(
    real,
    "append to",
    async (t) => {
      const unchanged = `nothing was appended: ${t.shown} is as it was`;
      // Refusals first, before the lock: a refused call leaves the directory as it was.
      const pre = await t.lstat().catch((err: unknown) => {
        throw wrapError(err, `Cannot append to ${t.shown}`);
      });
      if (pre !== undefined && !pre.isFile()) refuseNonFile(t, pre);
      if (pre !== undefined) assertWritable(pre, t.shown, "append to");
      try {
        return await underSwapLock(
          c,
          t,
          async (held) => {
            for (let attempt = 1; ; attempt++) {
              try {
                return await appendOnce(c, held, text);
              } catch (err) {
                if (errnoCode(err) !== CHANGED || attempt === ATTEMPTS) throw err;
              }
            }
          },
          { signal },
        );
      } catch (err) {
        if (errnoCode(err) === CHANGED) {
          throw new SafeFsError(`Cannot append to ${t.shown}: another program kept changing it (${ATTEMPTS} tries); ${unchanged}`, { cause: err });
        }
        // Refusals already say what was wrong and that nothing was done.
        if (err instanceof SafeFsError && !isIoFailure(err) && err.message.startsWith(`Cannot append to ${t.shown}:`)) throw err;
        throw wrapError(err, `Cannot append to ${t.shown}`).withNote(unchanged);
      }
    },
    shown,
  );
}
