import { z } from "zod";
import { checkPatterns, searchInto } from "../walking/index.js";
import { READ_ONLY, defineTool, streamed, walkOptions } from "./context.js";
import { DIR_DOC, EXCLUDE_DOC, GITIGNORE_DOC, excludeParams } from "./shared.js";

/** search_files: paths matching a glob, streamed. */
export const searchFiles = defineTool({
  name: "search_files",
  title: "Search Files",
  description: () =>
    "Find files and directories whose path matches a glob; returns absolute paths, one a line. " +
    `Text in files: search_file_contents, replace_in_files; one level: list_directory.`,
  input: {
    path: z.string().describe(DIR_DOC),
    pattern: z.string().describe("Glob to match."),
    excludePatterns: z.array(z.string()).default([]).describe(EXCLUDE_DOC),
    respectGitignore: z.boolean().default(false).describe(GITIGNORE_DOC),
    type: z.enum(["file", "directory"]).optional().describe("Default both; a link counts as its target."),
    sortBy: z
      .enum(["name", "size", "modified"])
      .optional()
      .describe(
        "Default unsorted. 'name': by path; 'size': largest first, lines '<path>\\t<bytes>'; 'modified': newest first, '<path>\\t<ISO time>'.",
      ),
    limit: z.number().int().min(1).optional().describe("Only the first N after sorting; totals count all."),
    outputMode: z.enum(["paths", "count"]).default("paths").describe("'count': only the number of matches."),
  },
  annotations: READ_ONLY,
  advice: "pass a deeper path, a narrower pattern, or add excludePatterns",
  async handler({ path, pattern, excludePatterns, respectGitignore, outputMode, type, sortBy, limit }, ctx) {
    checkPatterns([["pattern", pattern], ...excludeParams(excludePatterns)]);
    const dir = await ctx.sandbox.validate(path);
    const countOnly = outputMode === "count";
    return streamed(ctx, (sink) =>
      searchInto(dir, pattern, excludePatterns, sink, walkOptions(ctx), { respectGitignore, countOnly, type, sortBy, limit }),
    );
  },
});
