import { z } from "zod";
import { editFileThrough } from "../editing/index.js";
import { defineTool } from "./context.js";
import { PATH_DOC, text } from "./shared.js";

/** edit_file: exact-text edits returning a unified diff. */
export const editFile = defineTool({
  name: "edit_file",
  title: "Edit File",
  description: () =>
    "Replace text in a file, all or nothing, keeping line endings; returns a unified diff. Each oldText must occur " +
    "exactly once; if it occurs nowhere, lines equal to it but for leading and trailing whitespace match (newText " +
    "is re-indented to fit). No match, or several without replaceAll: refused, naming the lines. Whole " +
    "file: write_file; at the end: append_file; many files: replace_in_files.",
  input: {
    path: z.string().describe(PATH_DOC),
    edits: z
      .array(
        z.object({
          oldText: z.string().describe("Text to replace; add context to make it unique."),
          newText: z.string().describe("Replacement, literal ($ is not special)."),
          replaceAll: z.boolean().default(false).describe("true: replace every exact occurrence; fails if none."),
        }),
      )
      .min(1)
      .describe("Replacements, applied in order."),
    dryRun: z.boolean().default(false).describe("true: write nothing, only report."),
    diff: z.boolean().default(true).describe("false: a summary line, not the diff."),
  },
  annotations: { readOnlyHint: false, idempotentHint: false, destructiveHint: true, openWorldHint: false },
  advice: "the edit was still applied unless dryRun was set; read the file with read_text_file to see it",
  async handler({ path, edits, dryRun, diff }, ctx) {
    return text(await editFileThrough(ctx.sandbox, path, edits, dryRun, ctx.signal, diff));
  },
});
