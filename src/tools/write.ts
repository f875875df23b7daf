/** The changing tools that write and move: write_file, edit_file, create_directory, move_file. */
import { z } from "zod";
import { endsWithNotice } from "../kernel/bounded.js";
import { streamEdit, type EditOperation } from "../editing/index.js";
import { escapeControls, type Shown } from "../kernel/escape.js";
import type { Sandbox } from "../sandbox/index.js";
import { defineTool } from "./context.js";
import { PATH_DOC } from "./read.js";

const text = (value: string) => ({ content: [{ type: "text" as const, text: value }] });

// The results that name a path: each takes it as shown (escaped), so none can be built from a raw one.
const wrote = (path: Shown) => text(`Successfully wrote to ${path}`);
const createdDirectory = (path: Shown) => text(`Successfully created directory ${path}`);
const moved = (source: Shown, destination: Shown) => text(`Successfully moved ${source} to ${destination}`);

/** The refusal of content that ends like a capped result of this server (SPEC §12). */
export function writingBackCappedRead(path: Shown): Error {
  return new Error(
    `Refusing to write ${path}: the content's last line is this server's own "[Result truncated: ...]" notice, so it ` +
      "looks like a capped read being written back, which would cut the file short and write the notice into it. " +
      "To change part of the file use edit_file; to get the rest of the text, call read_text_file again with the " +
      "offset the notice gives.",
  );
}

const formatBytes = (n: number): string => `${n} byte${n === 1 ? "" : "s"}`;

/**
 * edit_file's work: the streaming edit engine plugged into the sandbox's rewrite seam. Returns the fenced diff,
 * and a note when bytes another process appended to the file during the edit were kept at its end.
 */
export async function editFileThrough(
  sandbox: Pick<Sandbox, "rewrite">,
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

/** write_file: create or atomically replace a file. */
export const writeFile = defineTool({
  name: "write_file",
  title: "Write File",
  description: () =>
    "Create or wholly replace a file with UTF-8 text, atomically, keeping owner and mode. Part of a file: " +
    "edit_file; at the end: append_file. Refuses text ending in a cut notice. Fails on a missing parent or an " +
    "unwritable file.",
  input: {
    path: z.string().describe(PATH_DOC),
    content: z.string().describe("The whole new content."),
  },
  annotations: { readOnlyHint: false, idempotentHint: true, destructiveHint: true, openWorldHint: false },
  advice: "shorten the path",
  // Dropped silently, `append: true` from a client of the second round would replace the file it meant to extend.
  retired: { append: "write_file no longer appends (it would replace the whole file); use append_file to add text at the end" },
  async handler({ path, content }, ctx) {
    if (endsWithNotice(content)) throw writingBackCappedRead(escapeControls(path));
    await ctx.sandbox.writeFile(path, content);
    return wrote(escapeControls(path));
  },
});

/** edit_file: exact-text edits returning a unified diff. */
export const editFile = defineTool({
  name: "edit_file",
  title: "Edit File",
  description: () =>
    "Replace text in a file; returns a unified diff. Edits apply in order. oldText must match once: exactly, else its lines " +
    "apart from whitespace at either end (newText takes their indentation); more matches are refused with their count and lines, " +
    "unless replaceAll. Line endings kept. All or nothing: an edit with no match fails them all. Whole file: write_file; at the end: append_file.",
  input: {
    path: z.string().describe(PATH_DOC),
    edits: z
      .array(
        z.object({
          oldText: z.string().describe("Text to replace, as in the file; enough to be unique."),
          newText: z.string().describe("Its replacement, literal ($ is not special)."),
          replaceAll: z.boolean().optional().describe("true: replace every exact occurrence, left to right (none is an error)."),
        }),
      )
      .min(1)
      .describe("Replacements, applied in order."),
    dryRun: z.boolean().default(false).describe("true: only return the diff."),
  },
  annotations: { readOnlyHint: false, idempotentHint: false, destructiveHint: true, openWorldHint: false },
  advice: "the edit was still applied unless dryRun was set; read the file with read_text_file to see it",
  async handler({ path, edits, dryRun }, ctx) {
    return text(await editFileThrough(ctx.sandbox, path, edits, dryRun, ctx.signal));
  },
});

/** create_directory: mkdir -p inside the allowed directories. */
export const createDirectory = defineTool({
  name: "create_directory",
  title: "Create Directory",
  description: () => "Create a directory and missing parents (mkdir -p); succeeds also if it exists. Fails if part of the path is a file.",
  input: { path: z.string().describe("Directory to create.") },
  annotations: { readOnlyHint: false, idempotentHint: true, destructiveHint: false, openWorldHint: false },
  advice: "shorten the path",
  async handler({ path }, ctx) {
    await ctx.sandbox.createDirectory(path);
    return createdDirectory(escapeControls(path));
  },
});

/** move_file: move or rename, never replacing an existing destination. */
export const moveFile = defineTool({
  name: "move_file",
  title: "Move File",
  description: () =>
    "Move or rename a file, directory or symlink (the link itself). To keep the source: copy_file. Never replaces: " +
    "fails with 'Destination already exists', or across file systems.",
  input: {
    source: z.string().describe("What to move."),
    destination: z.string().describe("Its new path, name included."),
  },
  annotations: { readOnlyHint: false, idempotentHint: false, destructiveHint: false, openWorldHint: false },
  advice: "shorten the paths",
  async handler({ source, destination }, ctx) {
    await ctx.sandbox.move(source, destination);
    return moved(escapeControls(source), escapeControls(destination));
  },
});
