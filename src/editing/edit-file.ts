/**
 * edit_file whole, below the tool's schema: the streaming edit engine run through the sandbox's rewrite seam
 * (locked, atomic, line endings kept), and the text the tool returns.
 */
import { escapeControls } from "../kernel/escape.js";
import type { FilePort } from "../sandbox/index.js";
import type { EditOperation } from "./edits.js";
import { streamEdit } from "./stream.js";

const formatBytes = (n: number): string => `${n} byte${n === 1 ? "" : "s"}`;

/**
 * edit_file's work: the streaming edit engine plugged into the sandbox's rewrite seam. Returns the fenced diff,
 * and a note when bytes another process appended to the file during the edit were kept at its end.
 */
export async function editFileThrough(
  sandbox: Pick<FilePort, "rewrite">,
  path: string,
  edits: EditOperation[],
  dryRun: boolean,
  signal?: AbortSignal,
): Promise<string> {
  const { value, appendedBytes } = await sandbox.rewrite(path, { dryRun, signal }, async (source, sink, sig) => {
    const write = sink === null ? undefined : (chunk: Buffer) => sink.write(chunk);
    // The path appears in the diff's header lines, so a name with a line break is shown escaped.
    const shown = escapeControls(source.path);
    return { diff: (await streamEdit({ source, edits, path: shown, signal: sig, write })).diff, shown };
  });
  if (appendedBytes === 0) return value.diff;
  return `${value.diff}\nNote: ${formatBytes(appendedBytes)} that another process appended to ${value.shown} during the edit were kept at the end of the file.`;
}
