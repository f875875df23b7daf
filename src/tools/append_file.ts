import { z } from "zod";
import { endsWithNotice } from "../kernel/bounded.js";
import { escapeControls, type Shown } from "../kernel/escape.js";
import type { Ending } from "../sandbox/index.js";
import { defineTool } from "./context.js";
import { PATH_DOC, counted, text, writingBackCappedRead } from "./shared.js";

const BEFORE: Record<Ending, string> = {
  new: "new file",
  empty: "it was empty",
  lf: "it ended with a line break",
  crlf: "it ended with a CRLF line break",
  none: "it did not end with a line break; the text was added directly after its last character",
};

const appended = (path: Shown, bytes: number, ending: Ending) =>
  text(`Successfully appended ${counted(bytes, "byte", "bytes")} to ${path} (${BEFORE[ending]})`);

/** append_file: text added at the end of a file as one indivisible change. */
export const appendFile = defineTool({
  name: "append_file",
  title: "Append to File",
  description: () =>
    "Add UTF-8 text at the end of a file (created if missing); says whether it ended with a line break. Whole " +
    "file: write_file; inside: edit_file. Refuses text ending in a '[Result truncated: …]' notice. Fails on a " +
    "missing parent directory (create_directory) or a read-only file.",
  input: {
    path: z.string().describe(PATH_DOC),
    content: z.string().describe("Text to add, as is."),
  },
  annotations: { readOnlyHint: false, idempotentHint: false, destructiveHint: false, openWorldHint: false },
  advice: "shorten the path",
  async handler({ path, content }, ctx) {
    if (endsWithNotice(content)) throw writingBackCappedRead(escapeControls(path));
    const ending = await ctx.sandbox.appendFile(path, content, ctx.signal);
    return appended(escapeControls(path), Buffer.byteLength(content, "utf8"), ending);
  },
});
