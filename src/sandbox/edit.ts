/**
 * edit_file's in-memory engine, run through the race-safe rewrite (rewrite.ts):
 * the edit is refused if the file changed while it was being edited, and a
 * write that slips in just before the swap is carried over or put back, not lost.
 */
import { isUtf8 } from "node:buffer";
import { formatCount } from "../bounded.js";
import { applyEdits, createUnifiedDiff, fenceDiff, normalizeLineEndings, type EditOperation } from "../editing/index.js";
import { SafeFsError } from "./errors.js";
import { rewriteFile } from "./rewrite.js";

/** Largest file edit_file takes on. @default 16 MiB */
export const MAX_EDIT_BYTES = 16 * 1024 * 1024;

const formatBytes = (n: number): string => `${n} byte${n === 1 ? "" : "s"}`;

/** Applies edits like upstream edit_file and returns the fenced diff; refuses if the file changed during the edit. */
export async function editFileSafely(
  path: string,
  edits: EditOperation[],
  dryRun: boolean,
  allowedDirs: readonly string[],
): Promise<string> {
  const { value: diff, appendedBytes } = await rewriteFile(path, allowedDirs, { dryRun }, async (source, sink) => {
    // This engine holds the file several times over (bytes, text, edited text, diff) on the one
    // thread that serves every call, until the streaming engine replaces it.
    if (source.size > MAX_EDIT_BYTES) {
      throw new SafeFsError(
        `File too large for edit_file: ${path} is ${formatCount(source.size)} bytes; ` +
          `the limit is ${formatCount(MAX_EDIT_BYTES)} bytes.`,
      );
    }
    const raw = await source.read(0, source.size);
    // Decoding would turn invalid bytes into U+FFFD and the rewrite would lose them, even
    // outside the edited text.
    if (!isUtf8(raw)) {
      throw new SafeFsError(
        `Cannot edit ${path}: it is not valid UTF-8 text, and rewriting it would replace its undecodable bytes; ` +
          "the file was left unchanged.",
      );
    }
    const original = normalizeLineEndings(raw.toString("utf8"));
    const modified = applyEdits(original, edits);
    await sink?.write(modified);
    return fenceDiff(createUnifiedDiff(original, modified, path));
  });
  if (appendedBytes === 0) return diff;
  return `${diff}\nNote: ${formatBytes(appendedBytes)} that another process appended to ${path} during the edit were kept at the end of the file.`;
}
