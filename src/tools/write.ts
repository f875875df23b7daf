/** The changing tools: write_file, edit_file, create_directory, move_file. */
import { z } from "zod";
import { formatCount } from "../bounded.js";
import { escapeControls } from "../escape.js";
import { MAX_EDIT_BYTES } from "../sandbox/index.js";
import { defineTool } from "./context.js";
import { PATH_DOC } from "./read.js";

const text = (value: string) => ({ content: [{ type: "text" as const, text: value }] });

/** write_file: create or atomically replace a file. */
export const writeFile = defineTool({
  name: "write_file",
  title: "Write File",
  description: () =>
    "Create a new file, or overwrite an existing file's entire content without asking, with the given UTF-8 text. " +
    "The replacement is atomic (temp file + rename) and keeps the file's permission bits. Returns " +
    "'Successfully wrote to <path>'. Fails if the path is outside the allowed directories or is a directory, or if its " +
    "parent directory does not exist (make it with create_directory). To change part of a file use edit_file.",
  input: {
    path: z.string().describe(`${PATH_DOC} The parent directory must exist.`),
    content: z.string().describe("The complete new content of the file, as text; it replaces everything already there."),
  },
  annotations: { readOnlyHint: false, idempotentHint: true, destructiveHint: true, openWorldHint: false },
  advice: "shorten the path",
  async handler({ path, content }, ctx) {
    await ctx.sandbox.writeFile(path, content);
    return text(`Successfully wrote to ${escapeControls(path)}`);
  },
});

/** edit_file: exact-text edits returning a unified diff. */
export const editFile = defineTool({
  name: "edit_file",
  title: "Edit File",
  description: ({ maxResultChars }) =>
    "Edit a text file by replacing exact text, and return a unified diff of the change. Edits apply in order; each " +
    "oldText must match the file exactly, or line by line ignoring indentation (which is then kept), and its first " +
    "match is replaced. Fails and writes nothing if any edit finds no match ('Could not find exact match'), if the " +
    "file changes meanwhile, if the path is missing or outside the allowed directories, or if the file is over " +
    `${formatCount(MAX_EDIT_BYTES)} bytes or not valid UTF-8 (use write_file then). dryRun previews the diff without ` +
    `writing. The diff is capped at ${formatCount(maxResultChars)} characters (the edit still applies). Copy oldText ` +
    "from read_text_file output; to replace the whole file use write_file.",
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
    return text(await ctx.sandbox.editFile(path, edits, dryRun));
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
