/**
 * edit_file's core: the streaming edit engine (editing/stream.ts) run through
 * the race-safe rewrite (rewrite.ts). Any size: memory holds the edited
 * regions, not the file. The edit is refused if the file changed while it was
 * being edited, and a write that slips in just before the swap is carried
 * over or put back, not lost.
 */
import { streamEdit, type EditOperation } from "../editing/index.js";
import { escapeControls } from "../escape.js";
import { rewriteFile } from "./rewrite.js";

const formatBytes = (n: number): string => `${n} byte${n === 1 ? "" : "s"}`;

/** Applies edits like upstream edit_file and returns the fenced diff; refuses if the file changed during the edit. */
export async function editFileSafely(
  path: string,
  edits: EditOperation[],
  dryRun: boolean,
  allowedDirs: readonly string[],
  signal?: AbortSignal,
): Promise<string> {
  const { value: diff, appendedBytes } = await rewriteFile(path, allowedDirs, { dryRun, signal }, async (source, sink, sig) => {
    const write = sink === null ? undefined : (chunk: Buffer) => sink.write(chunk);
    // The path appears in the diff's header lines, so a name with a line break is shown escaped.
    return (await streamEdit({ source, edits, path: escapeControls(path), signal: sig, write })).diff;
  });
  if (appendedBytes === 0) return diff;
  return `${diff}\nNote: ${formatBytes(appendedBytes)} that another process appended to ${escapeControls(path)} during the edit were kept at the end of the file.`;
}
