import { z } from "zod";
import { formatCount } from "../kernel/bounded.js";
import { checkPatterns, treeInto } from "../walking/index.js";
import { READ_ONLY, defineTool, streamed, walkOptions } from "./context.js";
import { DIR_DOC, GITIGNORE_DOC, excludeParams } from "./shared.js";

/** directory_tree: the recursive JSON tree, streamed. */
export const directoryTree = defineTool({
  name: "directory_tree",
  title: "Directory Tree",
  description: ({ maxResultChars }) =>
    "Return the tree under a directory as indented JSON [{name, type: 'file'|'directory', children}]; links are " +
    `files. Past ${formatCount(maxResultChars)} characters it is cut and invalid: start with maxDepth 2. One level: ` +
    `list_directory; sizes: list_directory_with_sizes.`,
  input: {
    path: z.string().describe(DIR_DOC),
    excludePatterns: z.array(z.string()).default([]).describe("Globs to leave out; one without * also matches a name at any depth."),
    maxDepth: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe("Levels to list, default all; a directory cut there gets depthLimited: true (if empty, children: [])."),
    respectGitignore: z.boolean().default(false).describe(GITIGNORE_DOC),
  },
  annotations: READ_ONLY,
  advice: "pass a deeper path, or add excludePatterns",
  async handler({ path, excludePatterns, maxDepth, respectGitignore }, ctx) {
    checkPatterns(excludeParams(excludePatterns));
    const dir = await ctx.sandbox.validate(path);
    return streamed(ctx, (sink) => treeInto(dir, excludePatterns, sink, walkOptions(ctx), { maxDepth, respectGitignore }));
  },
});
