/** The changing tools: write_file, edit_file, create_directory, move_file. */
import { z } from "zod";
import { endsWithNotice, formatCount } from "../bounded.js";
import { escapeControls } from "../escape.js";
import { defineTool } from "./context.js";
import { PATH_DOC } from "./read.js";

const text = (value: string) => ({ content: [{ type: "text" as const, text: value }] });

/** The refusal of content that ends like a capped result of this server (SPEC §12). */
function writingBackCappedRead(path: string): Error {
  return new Error(
    `Refusing to write ${path}: the content's last line is this server's own "[Result truncated: ...]" notice, so it ` +
      "looks like a capped read being written back, which would cut the file short and write the notice into it. " +
      "To change part of the file use edit_file; to get the rest of the text, call read_text_file again with the " +
      "offset the notice gives.",
  );
}

/** write_file: create or atomically replace a file, or append to one. */
export const writeFile = defineTool({
  name: "write_file",
  title: "Write File",
  description: () =>
    "Create a file, or overwrite an existing file's entire content without asking, with the given UTF-8 text; with " +
    "append, add the text at the end instead (creating the file if missing, never truncating). A replacement is " +
    "atomic and keeps the file's owner, group and permission bits. Returns 'Successfully wrote to <path>' (or " +
    "'appended to'). Fails outside the allowed directories, on a directory, if the parent directory is missing " +
    "(create_directory makes it), if the file is read-only for the server or its owner cannot be kept, or if the " +
    "content's last line is this server's '[Result truncated: ...]' notice (a capped read written back). To change " +
    "part of a file use edit_file.",
  input: {
    path: z.string().describe(`${PATH_DOC} The parent directory must exist.`),
    content: z
      .string()
      .describe("The new content, as text; it replaces everything already there (unless append)."),
    append: z
      .boolean()
      .default(false)
      .describe("true: add content at the end of the file instead of replacing it. Default false."),
  },
  annotations: { readOnlyHint: false, idempotentHint: true, destructiveHint: true, openWorldHint: false },
  advice: "shorten the path",
  async handler({ path, content, append }, ctx) {
    if (endsWithNotice(content)) throw writingBackCappedRead(path);
    await ctx.sandbox.writeFile(path, content, append);
    return text(`Successfully ${append ? "appended" : "wrote"} to ${escapeControls(path)}`);
  },
});

/** edit_file: exact-text edits returning a unified diff. */
export const editFile = defineTool({
  name: "edit_file",
  title: "Edit File",
  description: ({ maxResultChars }) =>
    "Edit a UTF-8 text file by replacing exact text; returns a unified diff. Edits apply in order; each oldText must " +
    "match exactly, or line by line ignoring indentation (kept), and its first match is replaced. The file is " +
    "replaced atomically, keeping owner, group and mode; calls on one file run one after another. " +
    "Writes nothing and fails if an edit finds no match, if another process changes the file meanwhile (read " +
    "again), if the path is missing or outside the allowed directories, if the file is read-only for the " +
    "server or its owner cannot be kept, or not UTF-8 (its other bytes would change). Any size: the file is " +
    `streamed. dryRun previews the diff. The diff is capped at ${formatCount(maxResultChars)} characters ` +
    "(the edit still applies). Copy oldText from read_text_file; to replace the whole file use write_file.",
  input: {
    path: z.string().describe(PATH_DOC),
    edits: z
      .array(
        z.object({
          oldText: z
            .string()
            .describe("Text to find, copied exactly from the file; include enough surrounding lines to be unique."),
          newText: z.string().describe("Replacement text, inserted literally ($ is not special); empty deletes oldText."),
        }),
      )
      .describe("The {oldText, newText} replacements, applied in order, each to the result of the previous one."),
    dryRun: z.boolean().default(false).describe("true: return the diff and write nothing. Default false."),
  },
  annotations: { readOnlyHint: false, idempotentHint: false, destructiveHint: true, openWorldHint: false },
  advice: "the edit was still applied unless dryRun was set; read the file with read_text_file to see it",
  async handler({ path, edits, dryRun }, ctx) {
    return text(await ctx.sandbox.editFile(path, edits, dryRun, ctx.signal));
  },
});

/** create_directory: mkdir -p inside the allowed directories. */
export const createDirectory = defineTool({
  name: "create_directory",
  title: "Create Directory",
  description: () =>
    "Create a directory, including any missing parent directories (like mkdir -p); succeeds if it already exists. " +
    "Returns 'Successfully created directory <path>'. Fails outside the allowed directories or when part of the path " +
    "is an existing file. Use it before write_file or move_file when the parent directory is missing.",
  input: { path: z.string().describe("Directory to create: absolute, or relative to an allowed directory.") },
  annotations: { readOnlyHint: false, idempotentHint: true, destructiveHint: false, openWorldHint: false },
  advice: "shorten the path",
  async handler({ path }, ctx) {
    await ctx.sandbox.createDirectory(path);
    return text(`Successfully created directory ${escapeControls(path)}`);
  },
});

/** move_file: move or rename, never replacing an existing destination. */
export const moveFile = defineTool({
  name: "move_file",
  title: "Move File",
  description: () =>
    "Move or rename a file or directory. Never overwrites: if the destination exists (file, directory or symlink) " +
    "the call fails with 'Destination already exists' and both sides are left as they were. Returns " +
    "'Successfully moved <source> to <destination>'. Both paths must be inside the allowed directories and the " +
    "destination's parent directory must exist (create_directory makes it). To replace a file's content use write_file.",
  input: {
    source: z.string().describe("Existing file or directory to move: absolute, or relative to an allowed directory."),
    destination: z.string().describe("New path; must not exist yet. Absolute, or relative to an allowed directory."),
  },
  annotations: { readOnlyHint: false, idempotentHint: false, destructiveHint: false, openWorldHint: false },
  advice: "shorten the paths",
  async handler({ source, destination }, ctx) {
    await ctx.sandbox.move(source, destination);
    return text(escapeControls(`Successfully moved ${source} to ${destination}`));
  },
});
