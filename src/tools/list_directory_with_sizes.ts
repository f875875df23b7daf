import { z } from "zod";
import { listWithSizesInto } from "../walking/index.js";
import { READ_ONLY, defineTool, streamed, walkOptions } from "./context.js";
import { DIR_DOC, LIST_ADVICE, withDirectory } from "./shared.js";

/** list_directory_with_sizes: entries with sizes and totals. */
export const listDirectoryWithSizes = defineTool({
  name: "list_directory_with_sizes",
  title: "List Directory with Sizes",
  description: () =>
    "List one directory like list_directory with each file's size rounded, then total files, directories and bytes. " +
    "Deeper: directory_tree; exact sizes in a tree: search_files.",
  input: {
    path: z.string().describe(DIR_DOC),
    sortBy: z.enum(["name", "size"]).default("name").describe("'size': largest first."),
    limit: z.number().int().min(1).optional().describe("Only the first N after sorting; totals count all."),
  },
  annotations: READ_ONLY,
  advice: LIST_ADVICE,
  async handler({ path, sortBy, limit }, ctx) {
    return streamed(ctx, (sink) => withDirectory(path, ctx.sandbox, (dir) => listWithSizesInto(dir, sortBy, sink, walkOptions(ctx), limit)));
  },
});
