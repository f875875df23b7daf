/** replace_in_files (SPEC §22): one text or regex replaced in every matching text file under a path. */
import { z } from "zod";
import { MAX_FILE_REPLACEMENTS, replaceInFiles } from "../editing/index.js";
import { formatCount } from "../kernel/bounded.js";
import { defineTool, walkOptions } from "./context.js";
import { EXCLUDE_DOC, FILES_GLOB_DOC, GITIGNORE_ON_DOC, REGEX_DOC, searchDescriptors } from "./shared.js";

/** replace_in_files: count, refuse past the limit, then rewrite file by file. */
export const replaceInFilesTool = defineTool({
  name: "replace_in_files",
  title: "Replace In Files",
  description: () =>
    "Replace a text or regex in every text file under a directory, or in one file; a match never spans lines. " +
    "Returns totals, skips, then '<path>: N replacements' per file; on a failure, says which files changed. " +
    `Refused past ${formatCount(MAX_FILE_REPLACEMENTS)} replacements, writing nothing. One place or ` +
    "across lines: edit_file; find: search_file_contents; names: search_files.",
  input: {
    path: z.string().describe("Directory or file."),
    query: z.string().min(1).describe("Text to replace; literal unless regex."),
    replacement: z.string().describe("New text; with regex, $1 or $<name> insert groups."),
    pattern: z.string().optional().describe(FILES_GLOB_DOC),
    excludePatterns: z.array(z.string()).default([]).describe(EXCLUDE_DOC),
    respectGitignore: z.boolean().default(true).describe(GITIGNORE_ON_DOC),
    regex: z.boolean().default(false).describe(REGEX_DOC),
    caseSensitive: z.boolean().default(true).describe("false: ignore case."),
    wholeWord: z.boolean().default(false).describe("true: only whole words."),
    dryRun: z.boolean().default(false).describe("true: write nothing, only report."),
  },
  annotations: { readOnlyHint: false, idempotentHint: false, destructiveHint: true, openWorldHint: false },
  advice: "the replacements were still made unless dryRun was set; pass a narrower path or pattern to see one part",
  async handler(args, ctx) {
    const opts = { ...walkOptions(ctx), workers: ctx.runtime.scanWorkers, ...searchDescriptors(ctx.walks.descriptorLimit()) };
    await replaceInFiles(ctx.sandbox, args, ctx.bounds.sink, opts);
    return { streamed: true };
  },
});
