import { z } from "zod";
import { escapeControls, type Shown } from "../kernel/escape.js";
import { defineTool } from "./context.js";
import { text } from "./shared.js";

const moved = (source: Shown, destination: Shown) => text(`Successfully moved ${source} to ${destination}`);

/** move_file: move or rename, never replacing an existing destination. */
export const moveFile = defineTool({
  name: "move_file",
  title: "Move File",
  description: () =>
    "Move or rename a file, directory or symlink (the link itself). To keep the source: copy_file. Fails if the " +
    "destination exists or is on another file system.",
  input: {
    source: z.string().describe("What to move."),
    destination: z.string().describe("New path, name included."),
  },
  annotations: { readOnlyHint: false, idempotentHint: false, destructiveHint: false, openWorldHint: false },
  advice: "shorten the paths",
  async handler({ source, destination }, ctx) {
    await ctx.sandbox.move(source, destination, ctx.signal);
    return moved(escapeControls(source), escapeControls(destination));
  },
});
