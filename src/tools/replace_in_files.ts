/** replace_in_files (SPEC §22): one text or regex replaced in every matching text file under a path. */
import { z } from "zod";
import { MAX_FILE_REPLACEMENTS, replaceInFiles } from "../editing/index.js";
import { formatCount } from "../kernel/bounded.js";
import { defineTool, walkOptions } from "./context.js";
import { EXCLUDE_DOC } from "./shared.js";

// A batch's descriptors, for each of the batches a count holds at once: a small share of the process's.
const batchDescriptors = (limit: number): number => (Number.isFinite(limit) ? Math.max(4, Math.floor(limit / 32)) : 256);

/** replace_in_files: count, refuse past the limit, then rewrite file by file. */
export const replaceInFilesTool = defineTool({
  name: "replace_in_files",
  title: "Replace In Files",
  description: () =>
    `Replace a text or regex in every text file under a path (or in one file), within lines; returns totals, what was skipped and why, then '<path>: N replacements' per file. ` +
    `Each file is replaced atomically, line endings kept; a file that fails is listed as not changed. Refuses, writing nothing, past ${formatCount(MAX_FILE_REPLACEMENTS)} replacements. ` +
    "One place, or text across lines: edit_file; only find: search_file_contents; files by name: search_files.",
  input: {
    path: z.string().describe("A directory (searched recursively) or one file."),
    query: z.string().min(1).describe("Text to replace, within one line; literal unless regex."),
    replacement: z.string().describe("Replacement; with regex, $1 or $<name> insert groups, $$ a '$'."),
    pattern: z.string().optional().describe("Glob of the files, e.g. '**/*.ts'; default every file."),
    excludePatterns: z.array(z.string()).default([]).describe(EXCLUDE_DOC),
    respectGitignore: z.boolean().default(true).describe("Skip .git and .gitignore'd paths; default true."),
    regex: z.boolean().default(false).describe("true: query is a JavaScript regex, without slashes or flags."),
    caseSensitive: z.boolean().default(true).describe("false: ignore case."),
    wholeWord: z.boolean().default(false).describe("true: not inside a longer word (letters, digits, _)."),
    dryRun: z.boolean().default(false).describe("true: write nothing, list what would change."),
  },
  annotations: { readOnlyHint: false, idempotentHint: false, destructiveHint: true, openWorldHint: false },
  advice: "the replacements were still made unless dryRun was set; pass a narrower path or pattern to see one part",
  async handler(args, ctx) {
    const opts = { ...walkOptions(ctx), batchFds: batchDescriptors(ctx.sandbox.descriptorLimit()) };
    await replaceInFiles(ctx.sandbox, args, ctx.bounds.sink, opts);
    return { streamed: true };
  },
});
