import { z } from "zod";
import { editFileThrough } from "../editing/index.js";
import { defineTool } from "./context.js";
import { PATH_DOC, text } from "./shared.js";

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
