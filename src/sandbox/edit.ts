/**
 * edit_file's race-safe core (SPEC §5 "Races"): the edit is refused if the
 * file changed while it was being edited, and a write that slips in between
 * the last check and the rename is carried over or put back, not lost.
 */
import { constants, type BigIntStats } from "node:fs";
import fs, { type FileHandle } from "node:fs/promises";
import { isUtf8 } from "node:buffer";
import { formatCount } from "../bounded.js";
import { applyEdits, createUnifiedDiff, fenceDiff, normalizeLineEndings, type EditOperation } from "../editing/index.js";
import { openParentOf } from "./dirs.js";
import { SafeFsError, wrapError } from "./errors.js";
import { lstatIfExists, openRegularIn, replaceAtomically } from "./files.js";
import { O_NOFOLLOW, O_NONBLOCK } from "./flags.js";
import { sameFile, sameVersion } from "./identity.js";
import type { OpenedDir } from "./strategy.js";

/** Largest file edit_file takes on. @default 16 MiB */
export const MAX_EDIT_BYTES = 16 * 1024 * 1024;

const APPEND_FLAGS = constants.O_WRONLY | constants.O_APPEND | O_NOFOLLOW | O_NONBLOCK;

function changedDuringEdit(shown: string): SafeFsError {
  return new SafeFsError(`File changed during edit: ${shown}; no changes were written. Read it again and retry.`);
}

/** Throws unless `target` is still the same, unmodified object that was read. */
async function assertUnchanged(target: string, before: BigIntStats, shown: string): Promise<void> {
  if (!sameVersion(await lstatIfExists(target), before)) throw changedDuringEdit(shown);
}

/** Appends `extra` to entry `name` of `dir`, but only while it is still the file this edit renamed there. */
async function appendToWritten(dir: OpenedDir, name: string, written: BigIntStats, extra: Buffer, shown: string): Promise<void> {
  const handle = await fs.open(dir.child(name), APPEND_FLAGS);
  try {
    const now = await handle.stat({ bigint: true });
    if (!sameFile(now, written)) {
      throw new SafeFsError(
        `File changed during edit: ${shown} was replaced right after the edit; ${formatBytes(extra.length)} appended by ` +
          "another process to the previous version could not be added to it.",
      );
    }
    await handle.write(extra);
  } finally {
    await handle.close();
  }
}

const formatBytes = (n: number): string => `${n} byte${n === 1 ? "" : "s"}`;

// When to look at the replaced file again after the rename: at once, and once more a
// little later for a writer that opened it before the rename but wrote only afterwards.
const LOOK_AFTER_MS = [0, 5];

/**
 * After the rename: a writer that wrote to the old file between the re-check
 * and the rename would otherwise be lost with it. A pure append is carried
 * over to the new file (returns the bytes kept); any other change is put back
 * in place of the edit, which is then refused. Residual window: a writer that
 * opened the old file before the rename and writes only after the last look.
 */
async function keepLateWrites(
  dir: OpenedDir,
  name: string,
  old: FileHandle,
  raw: Buffer,
  before: BigIntStats,
  written: BigIntStats,
  shown: string,
): Promise<number> {
  let seen = { size: before.size, mtimeNs: before.mtimeNs };
  let known = raw;
  for (const delay of LOOK_AFTER_MS) {
    if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
    const now = await old.stat({ bigint: true });
    if (now.size === seen.size && now.mtimeNs === seen.mtimeNs) continue;
    seen = { size: now.size, mtimeNs: now.mtimeNs };
    const { buffer, bytesRead } = await old.read({ buffer: Buffer.alloc(Number(now.size)), position: 0 });
    const current = buffer.subarray(0, bytesRead);
    if (current.length >= known.length && current.subarray(0, known.length).equals(known)) {
      if (current.length > known.length) await appendToWritten(dir, name, written, current.subarray(known.length), shown);
      known = current;
      continue;
    }
    await putBack(dir, name, current, before, written, shown);
  }
  return known.length - raw.length;
}

/** Replaces the edited file with `current` (the other writer's version) and refuses the edit. */
async function putBack(
  dir: OpenedDir,
  name: string,
  current: Buffer,
  before: BigIntStats,
  written: BigIntStats,
  shown: string,
): Promise<never> {
  try {
    await replaceAtomically(dir, name, current, before, shown, () => assertUnchanged(dir.child(name), written, shown));
  } catch (err) {
    throw new SafeFsError(
      `File changed during edit: ${shown}; the edit was written, but another process changed the file meanwhile and ` +
        "its change could not be put back because the file changed again. Read it and check.",
      { cause: err },
    );
  }
  throw changedDuringEdit(shown);
}

/** Applies edits like upstream edit_file and returns the fenced diff; refuses if the file changed during the edit. */
export async function editFileSafely(
  path: string,
  edits: EditOperation[],
  dryRun: boolean,
  allowedDirs: readonly string[],
): Promise<string> {
  const { dir, name } = await openParentOf(path, allowedDirs, path, "edit");
  try {
    // The handle stays open until after the rename: it is how a write that
    // slipped in between the re-check and the rename is noticed (keepLateWrites).
    const { handle, stat: before } = await openRegularIn(dir, name, path, allowedDirs);
    try {
      // Editing holds the file several times over (bytes, text, edited text, diff) on the one
      // thread that serves every call, so big files go to write_file instead.
      if (before.size > BigInt(MAX_EDIT_BYTES)) {
        throw new SafeFsError(
          `File too large for edit_file: ${path} is ${formatCount(Number(before.size))} bytes; ` +
            `the limit is ${formatCount(MAX_EDIT_BYTES)} bytes. Use write_file to replace it whole.`,
        );
      }
      let raw: Buffer;
      try {
        raw = await handle.readFile();
      } catch (err) {
        throw wrapError(err, `Cannot read ${path}`);
      }
      // Decoding would turn invalid bytes into U+FFFD and the rewrite would lose them, even
      // outside the edited text.
      if (!isUtf8(raw)) {
        throw new SafeFsError(
          `Cannot edit ${path}: it is not valid UTF-8 text, and rewriting it would replace its undecodable bytes. ` +
            "Use write_file to replace it whole.",
        );
      }
      const original = normalizeLineEndings(raw.toString("utf8"));
      const modified = applyEdits(original, edits);
      const diff = fenceDiff(createUnifiedDiff(original, modified, path));
      if (dryRun) return diff;
      const written = await replaceAtomically(dir, name, modified, before, path, () =>
        assertUnchanged(dir.child(name), before, path),
      );
      const kept = await keepLateWrites(dir, name, handle, raw, before, written, path);
      if (kept === 0) return diff;
      return `${diff}\nNote: ${formatBytes(kept)} that another process appended to ${path} during the edit were kept at the end of the file.`;
    } finally {
      await handle.close();
    }
  } finally {
    await dir.close();
  }
}
