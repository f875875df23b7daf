import { z } from "zod";
import { escapeControls, type Shown } from "../kernel/escape.js";
import type { Copied } from "../sandbox/index.js";
import { defineTool } from "./context.js";
import { PROGRESS_EVERY, counted, text } from "./shared.js";

function copied(source: Shown, destination: Shown, what: Copied): ReturnType<typeof text> {
  const parts = [
    what.directories > 0 ? counted(what.directories, "directory", "directories") : "",
    what.files > 0 || what.directories > 0 ? counted(what.files, "file", "files") : "",
    what.links > 0 && what.directories > 0 ? counted(what.links, "link", "links") : "",
  ].filter((part) => part !== "");
  const bytes = what.directories > 0 ? `; ${counted(what.bytes, "byte", "bytes")}` : "";
  const special = what.special > 0 ? `; ${counted(what.special, "special file", "special files")} (FIFO, socket, device) not copied` : "";
  const badNames =
    what.badNames > 0
      ? `; ${counted(what.badNames, "entry", "entries")} whose name is not valid UTF-8 not copied (this server cannot open such a name)`
      : "";
  const detail = what.directories > 0 ? ` (${parts.join(", ")}${bytes}${special}${badNames})` : "";
  return text(`Successfully copied ${source} to ${destination}${detail}`);
}

/** copy_file: a file, a link or (recursive) a tree copied, never replacing anything. */
export const copyFile = defineTool({
  name: "copy_file",
  title: "Copy File",
  description: () => "Copy a file, a link as a link, or with recursive a tree. Renaming: move_file. Fails if the destination exists.",
  input: {
    source: z.string().describe("What to copy."),
    destination: z.string().describe("New path, name included."),
    recursive: z.boolean().default(false).describe("true: copy a directory tree."),
  },
  annotations: { readOnlyHint: false, idempotentHint: true, destructiveHint: false, openWorldHint: false },
  advice: "shorten the paths",
  async handler({ source, destination, recursive }, ctx) {
    const what = await ctx.sandbox.copy(source, destination, {
      recursive,
      signal: ctx.signal,
      onProgress: (n) => n % PROGRESS_EVERY === 0 && ctx.progress(n),
    });
    return copied(escapeControls(source), escapeControls(destination), what);
  },
});
