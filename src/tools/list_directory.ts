import { z } from "zod";
import { listInto } from "../walking/index.js";
import { READ_ONLY, defineTool, streamed, walkOptions } from "./context.js";
import { DIR_DOC, LIST_ADVICE, withDirectory } from "./shared.js";

/** list_directory: one directory's entries. */
export const listDirectory = defineTool({
  name: "list_directory",
  title: "List Directory",
  description: () =>
    "List one directory, a line per entry: '[DIR] name' (a link to a directory too) or '[FILE] name'. Sizes: " +
    `list_directory_with_sizes; deeper: directory_tree.`,
  input: { path: z.string().describe(DIR_DOC) },
  annotations: READ_ONLY,
  advice: LIST_ADVICE,
  async handler({ path }, ctx) {
    return streamed(ctx, (sink) => withDirectory(path, ctx.sandbox, (dir) => listInto(dir, sink, walkOptions(ctx))));
  },
});
