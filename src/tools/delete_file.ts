import { z } from "zod";
import { escapeControls, type Shown } from "../kernel/escape.js";
import type { Deleted } from "../sandbox/index.js";
import { defineTool } from "./context.js";
import { PROGRESS_EVERY, counted, text } from "./shared.js";

const deleted = (path: Shown, what: Deleted) =>
  text(`Successfully deleted ${path}${what.kind === "directory" && what.entries > 0 ? ` (${counted(what.entries, "entry", "entries")})` : ""}`);

/** delete_file: a file, a link, an empty directory or (recursive) a tree removed. */
export const deleteFile = defineTool({
  name: "delete_file",
  title: "Delete File",
  description: () =>
    "Delete a file, a link (not its target) or an empty directory; with recursive, a tree (links not " + "followed). Refuses an allowed directory.",
  input: {
    path: z.string().describe("What to delete."),
    recursive: z.boolean().default(false).describe("true: also a non-empty directory."),
  },
  annotations: { readOnlyHint: false, idempotentHint: true, destructiveHint: true, openWorldHint: false },
  advice: "shorten the path",
  async handler({ path, recursive }, ctx) {
    const what = await ctx.sandbox.delete(path, { recursive, signal: ctx.signal, onProgress: (n) => n % PROGRESS_EVERY === 0 && ctx.progress(n) });
    return deleted(escapeControls(path), what);
  },
});
