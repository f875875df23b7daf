/** The changing tools: write_file, edit_file, create_directory, move_file. */
import { z } from "zod";
import { resolveRequestedPath, validatePathIn } from "../lib.js";
import { editFileSafely, makeDirectorySafely, moveNoClobber, writeFileSafely } from "../safe-fs.js";
import { defineTool } from "./context.js";
import { PATH_DOC } from "./read.js";

const text = (value: string) => ({ content: [{ type: "text" as const, text: value }] });

export const writeFile = defineTool({
  name: "write_file",
  title: "Write File",
  description: () =>
    "Create a file, or replace an existing file's whole content, with the given UTF-8 text. The replace is atomic " +
    "(temp file + rename) and keeps the file's permission bits. Returns a one-line confirmation. " +
    "The parent directory must exist inside the allowed directories. To change part of a file use edit_file.",
  input: {
    path: z.string().describe(`${PATH_DOC} The parent directory must exist.`),
    content: z.string().describe("The complete new content of the file, as text."),
  },
  annotations: { readOnlyHint: false, idempotentHint: true, destructiveHint: true, openWorldHint: false },
  advice: "shorten the path",
  async handler({ path, content }, ctx) {
    const target = await validatePathIn(path, ctx.allowedDirs);
    await writeFileSafely(target, content, ctx.allowedDirs);
    return text(`Successfully wrote to ${path}`);
  },
});

export const editFile = defineTool({
  name: "edit_file",
  title: "Edit File",
  description: ({ maxResultChars }) =>
    "Replace exact text in a file, edit by edit in order, and return a unified diff of the change. Each oldText must " +
    "match the file (exactly, or line by line ignoring indentation); newText is inserted literally. " +
    "If any edit does not match, or the file changes while editing, nothing is written. " +
    `dryRun returns the diff without writing. The diff is capped at ${maxResultChars} characters. ` +
    "To replace the whole file use write_file.",
  input: {
    path: z.string().describe(PATH_DOC),
    edits: z
      .array(
        z.object({
          oldText: z.string().describe("Text to find; include enough context to be unique. Its first match is replaced."),
          newText: z.string().describe("Replacement text, inserted as is."),
        }),
      )
      .describe("Edits applied in order, each to the result of the previous one."),
    dryRun: z.boolean().default(false).describe("Preview only: return the diff and write nothing. Default false."),
  },
  annotations: { readOnlyHint: false, idempotentHint: false, destructiveHint: true, openWorldHint: false },
  advice: "the edit was still applied unless dryRun was set; read the file with read_text_file to see it",
  async handler({ path, edits, dryRun }, ctx) {
    const target = await validatePathIn(path, ctx.allowedDirs);
    return text(await editFileSafely(target, edits, dryRun, ctx.allowedDirs));
  },
});

export const createDirectory = defineTool({
  name: "create_directory",
  title: "Create Directory",
  description: () =>
    "Create a directory, with any missing parents; succeeds if it already exists. Returns a one-line confirmation. " +
    "Fails outside the allowed directories or when a path component is a file.",
  input: { path: z.string().describe("Directory path: absolute, or relative to an allowed directory.") },
  annotations: { readOnlyHint: false, idempotentHint: true, destructiveHint: false, openWorldHint: false },
  advice: "shorten the path",
  async handler({ path }, ctx) {
    // Missing parents are created, so only the lexical check applies here; makeDirectorySafely
    // checks the real path of every existing ancestor it walks through.
    const target = await resolveRequestedPath(path, ctx.allowedDirs);
    await makeDirectorySafely(target, ctx.allowedDirs);
    return text(`Successfully created directory ${path}`);
  },
});

export const moveFile = defineTool({
  name: "move_file",
  title: "Move File",
  description: () =>
    "Move or rename a file or directory. Never replaces anything: if the destination exists the call fails with " +
    "'Destination already exists' and both sides are left as they were. Both paths must be inside the allowed " +
    "directories and the destination's parent must exist. Returns a one-line confirmation.",
  input: {
    source: z.string().describe("Existing file or directory to move: absolute, or relative to an allowed directory."),
    destination: z.string().describe("New path; must not exist yet. Absolute, or relative to an allowed directory."),
  },
  annotations: { readOnlyHint: false, idempotentHint: false, destructiveHint: false, openWorldHint: false },
  advice: "shorten the paths",
  async handler({ source, destination }, ctx) {
    const from = await validatePathIn(source, ctx.allowedDirs);
    const to = await validatePathIn(destination, ctx.allowedDirs);
    await moveNoClobber(from, to, ctx.allowedDirs);
    return text(`Successfully moved ${source} to ${destination}`);
  },
});
