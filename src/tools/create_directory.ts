import { z } from "zod";
import { escapeControls, type Shown } from "../kernel/escape.js";
import { defineTool } from "./context.js";
import { DIR_DOC, text } from "./shared.js";

const createdDirectory = (path: Shown) => text(`Successfully created directory ${path}`);

/** create_directory: mkdir -p inside the allowed directories. */
export const createDirectory = defineTool({
  name: "create_directory",
  title: "Create Directory",
  description: () => "Create a directory and missing parents (mkdir -p); succeeds if it exists. Fails if part of the path is a file.",
  input: { path: z.string().describe(DIR_DOC) },
  annotations: { readOnlyHint: false, idempotentHint: true, destructiveHint: false, openWorldHint: false },
  advice: "shorten the path",
  async handler({ path }, ctx) {
    await ctx.sandbox.createDirectory(path);
    return createdDirectory(escapeControls(path));
  },
});
