import { z } from "zod";
import { checkPatterns, searchInto } from "../walking/index.js";
import { READ_ONLY, defineTool, streamed, walkOptions } from "./context.js";
import { DIR_DOC, EXCLUDE_DOC, GITIGNORE_DOC, NOT_A_DIR, excludeParams } from "./shared.js";

/** search_files: paths matching a glob, streamed. */
export const searchFiles = defineTool({
  name: "search_files",
  title: "Search Files",
  description: () =>
    "Find files and directories whose path relative to the directory matches a glob; returns absolute paths, a line " +
    `each, or 'No matches found'. Text in files: search_file_contents; one level: list_directory. ${NOT_A_DIR}`,
  input: {
    path: z.string().describe(DIR_DOC),
    pattern: z.string().describe("Glob of the paths, e.g. '**/*.ts'."),
    excludePatterns: z.array(z.string()).default([]).describe(EXCLUDE_DOC),
    respectGitignore: z.boolean().default(false).describe(GITIGNORE_DOC),
    outputMode: z.enum(["paths", "count"]).optional().describe("'count': only the number of matches."),
  },
  annotations: READ_ONLY,
  advice: "pass a deeper path, a narrower pattern, or add excludePatterns",
  async handler({ path, pattern, excludePatterns, respectGitignore, outputMode }, ctx) {
    checkPatterns([["pattern", pattern], ...excludeParams(excludePatterns)]);
    const dir = await ctx.sandbox.validate(path);
    const countOnly = outputMode === "count";
    return streamed(ctx, (sink) => searchInto(dir, pattern, excludePatterns, sink, walkOptions(ctx), { respectGitignore, countOnly }));
  },
});
