/**
 * edit_file whole, below the tool's schema: the streaming edit engine run through the sandbox's rewrite seam
 * (locked, atomic, line endings kept), and the text the tool returns.
 */
import { formatCount } from "../kernel/bounded.js";
import { collectGarbage } from "../kernel/collect.js";
import { escapeControls } from "../kernel/escape.js";
import { type FilePort, otherNamesNote } from "../sandbox/index.js";
import type { EditOperation } from "./edits.js";
import { type StreamEditResult, streamEdit } from "./stream.js";

/** Edits of files at least this large are followed by a full garbage collection. */
const COLLECT_AFTER_BYTES = 64 * 1024 * 1024;

const formatBytes = (n: number): string => `${n} byte${n === 1 ? "" : "s"}`;

/**
 * edit_file's work: the streaming edit engine plugged into the sandbox's rewrite seam. Returns the fenced diff,
 * a note when bytes another process appended to the file during the edit were kept at its end, and one when the
 * file had other names (hard links), which keep the previous text.
 */
export async function editFileThrough(
  sandbox: Pick<FilePort, "rewrite">,
  path: string,
  edits: EditOperation[],
  dryRun: boolean,
  signal?: AbortSignal,
  withDiff = true,
): Promise<string> {
  let size = 0;
  // An edit whose newText is its oldText changes nothing: when every edit is one, the file is only checked (its
  // matches found, the diff made), as a dry run is, not rewritten to the same bytes under a new inode and time.
  const idle = edits.flatMap((e, k) => (e.newText === e.oldText ? [`edits[${k}]`] : []));
  const unchanged = idle.length === edits.length;
  const { value, appendedBytes, otherNames } = await sandbox.rewrite(path, { dryRun: dryRun || unchanged, signal }, async (source, sink, sig) => {
    size = source.size;
    const write = sink === null ? undefined : (chunk: Buffer) => sink.write(chunk);
    // The path appears in the diff's header lines, so a name with a line break is shown escaped.
    const shown = escapeControls(source.path);
    // The unchanged start of a large file is copied by the kernel (the sink's copyPrefix), not read and written.
    const copyPrefix = sink?.copyPrefix?.bind(sink);
    const copyAhead = sink?.copyAhead?.bind(sink);
    const keepRest = sink?.keepRest?.bind(sink);
    // Unchanged stretches are compared with the old file after the swap only if a late writer is seen, not hashed.
    const copied = sink?.copied?.bind(sink);
    const result = await streamEdit({ source, edits, path: shown, signal: sig, write, withDiff, copyPrefix, copyAhead, copied, keepRest });
    return { text: withDiff ? result.diff : summary(path, dryRun, result, edits), shown };
  });
  // A large edit leaves tens of MB of garbage; collected now, the next one starts from the server's own size.
  if (size >= COLLECT_AFTER_BYTES) collectGarbage();
  const late =
    appendedBytes === 0
      ? ""
      : `\nNote: ${formatBytes(appendedBytes)} that another process appended to ${value.shown} during the edit were kept at the end of the file.`;
  return value.text + late + (unchanged ? "" : otherNamesNote(value.shown, otherNames, dryRun)) + idleNote(idle, unchanged && !dryRun);
}

/** The note on the edits (`idle`) whose newText equals their oldText; `all`: they were every edit of a call that would write. */
function idleNote(idle: readonly string[], all: boolean): string {
  if (all)
    return `\nNote: ${idle.length === 1 ? "the edit's newText equals its oldText" : "every edit's newText equals its oldText"}, so the file was left as it was (not rewritten).`;
  if (idle.length === 0) return "";
  return `\nNote: ${idle.join(", ")}: newText equals oldText, so ${idle.length === 1 ? "it changes" : "they change"} nothing.`;
}

/** edit_file's one line instead of the diff (SPEC §22), naming the path as given; replaceAll counts follow it. */
function summary(requested: string, dryRun: boolean, { counts, lines }: StreamEditResult, edits: readonly EditOperation[]): string {
  const replacements = counts.reduce((a, b) => a + b, 0);
  const where = lines === undefined ? "" : `, lines ${formatCount(lines.first)}-${formatCount(lines.last)}`;
  const head = `${dryRun ? "Dry run, nothing written: would edit" : "Successfully edited"} ${escapeControls(requested)}: ${counted(counts.length, "edit", "edits")}, ${counted(replacements, "replacement", "replacements")}${where}`;
  const each = edits.some((e) => e.replaceAll === true)
    ? counts.map((n, k) => `\nedits[${k}]: replaced ${counted(n, "occurrence", "occurrences")}`)
    : [];
  return head + each.join("");
}

const counted = (n: number, one: string, many: string): string => `${formatCount(n)} ${n === 1 ? one : many}`;
