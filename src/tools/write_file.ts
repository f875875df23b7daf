import { z } from "zod";
import { endsWithNotice } from "../kernel/bounded.js";
import { escapeControls, type Shown } from "../kernel/escape.js";
import { otherNamesNote } from "../sandbox/index.js";
import { defineTool } from "./context.js";
import { PATH_DOC, text, writingBackCappedRead } from "./shared.js";

const wrote = (path: Shown, otherNames: number) => text(`Successfully wrote to ${path}${otherNamesNote(path, otherNames)}`);

/** write_file: create or atomically replace a file. */
export const writeFile = defineTool({
  name: "write_file",
  title: "Write File",
  description: () =>
    "Create or replace a file with UTF-8 text. Part of a file: edit_file; at the end: append_file. " +
    "Refuses text ending in a '[Result truncated: …]' notice. Fails on a missing parent directory " +
    "(create_directory) or a read-only file.",
  input: {
    path: z.string().describe(PATH_DOC),
    content: z.string().describe("The whole new text."),
  },
  annotations: { readOnlyHint: false, idempotentHint: true, destructiveHint: true, openWorldHint: false },
  advice: "shorten the path",
  // Dropped silently, `append: true` from a client of the second round would replace the file it meant to extend.
  retired: { append: "write_file no longer appends (it would replace the whole file); use append_file to add text at the end" },
  async handler({ path, content }, ctx) {
    if (endsWithNotice(content)) throw writingBackCappedRead(escapeControls(path));
    const { otherNames } = await ctx.sandbox.writeFile(path, content, ctx.signal);
    return wrote(escapeControls(path), otherNames);
  },
});
