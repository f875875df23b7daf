import { z } from "zod";
import { editFileThrough } from "../editing/index.js";
import { defineTool } from "./context.js";
import { PATH_DOC, text } from "./shared.js";

/** edit_file: exact-text edits returning a unified diff. */
export const editFile = defineTool({
  name: "edit_file",
  title: "Edit File",
  description: () =>
    "Replace text in a file; returns a unified diff (diff: false: one line). Edits apply in order; each oldText must " +
    "occur once, else lines differing only in leading or trailing whitespace match (newText takes their indentation). " +
    "Several matches are refused, naming lines, unless replaceAll. Line endings kept; all or nothing. Whole file: " +
    "write_file; at the end: append_file; many files: replace_in_files.",
  input: {
    path: z.string().describe(PATH_DOC),
    edits: z
      .array(
        z.object({
          oldText: z.string().describe("Text to replace, enough to be unique."),
          newText: z.string().describe("Its replacement, literal ($ is not special)."),
          replaceAll: z.boolean().default(false).describe("true: every exact occurrence (none: error)."),
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
