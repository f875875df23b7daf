/** search_file_contents (SPEC §10): find the lines that contain a text or match a regex, in a file or a tree. */
import { z } from "zod";
import { formatCount } from "../bounded.js";
import { compileQuery, ContentSearch, type OutputMode } from "../grep/index.js";
import { checkPatterns, walkFiles } from "../walking/index.js";
import { defineTool, READ_ONLY, walkOptions, type ToolContext } from "./context.js";

type Args = {
  path: string;
  query: string;
  regex: boolean;
  caseSensitive: boolean;
  pattern?: string;
  excludePatterns: string[];
  respectGitignore: boolean;
  contextLines: number;
  outputMode: OutputMode;
  offset: number;
};

async function searchContents(args: Args, ctx: ToolContext): Promise<void> {
  checkPatterns([
    ...(args.pattern === undefined ? [] : [["pattern", args.pattern] as const]),
    ...args.excludePatterns.map((p, i) => [`excludePatterns[${i}]`, p] as const),
  ]);
  const query = compileQuery({ query: args.query, regex: args.regex, caseSensitive: args.caseSensitive });
  const search = new ContentSearch({
    query,
    sink: ctx.bounds.sink,
    mode: args.outputMode,
    contextLines: args.contextLines,
    offset: args.offset,
  });
  try {
    const target = await ctx.sandbox.validate(args.path);
    const info = await ctx.sandbox.stat(target);
    if (info.isFile()) {
      const { handle } = await ctx.sandbox.openFile(target);
      try {
        await search.searchFile(handle, target, {
          signal: ctx.signal,
          onProgress: (done) => ctx.progress(done, info.size),
        });
      } finally {
        await handle.close();
      }
    } else {
      const selection = { pattern: args.pattern, excludePatterns: args.excludePatterns, respectGitignore: args.respectGitignore };
      await walkFiles(
        target,
        selection,
        async (handle, shown) => {
          try {
            await search.searchFile(handle, shown, { signal: ctx.signal });
          } catch (error) {
            // A file that fails mid-read is counted, not fatal; a costly regex or a cancel ends the call.
            if (ctx.signal.aborted || (error as { code?: unknown }).code === undefined) throw error;
            search.skip("unreadable");
          }
        },
        (reason, count) => search.skip(reason, count),
        walkOptions(ctx),
      );
    }
    search.finish();
  } finally {
    await search.close();
  }
}

/** search_file_contents: matching lines, files or counts, with exact totals and continuation by offset. */
export const searchFileContents = defineTool({
  name: "search_file_contents",
  title: "Search File Contents",
  description: ({ maxResultChars }) =>
    "Find lines containing a text (or matching a regex) inside a file or every file of a directory tree; use " +
    "search_files to find files by name. lines mode: each matching file's path, then its matching lines as " +
    "'<line>:<text>' (context lines '<line>-<text>', groups split by '--'); files mode: path and match count; count " +
    "mode: totals only. Line numbers are read_text_file's startLine, so read around a hit with startLine/lineCount. " +
    "Every result ends with exact totals and what was not searched (binary, .gitignore, unreadable, links leading " +
    `outside). At most ${formatCount(maxResultChars)} characters; a cut result says which offset continues it. ` +
    "Files of any size are streamed. Fails on an invalid or too costly regex, and outside the allowed directories.",
  input: {
    path: z.string().describe("A file, or a directory searched recursively."),
    query: z.string().min(1).describe("The text to find; literal unless regex is true."),
    regex: z.boolean().default(false).describe("Treat query as a JavaScript regular expression source (no slashes or flags)."),
    caseSensitive: z.boolean().default(false).describe("Match case exactly."),
    pattern: z.string().optional().describe("Glob of the files to search, relative to path (e.g. '**/*.ts'); default all files."),
    excludePatterns: z.array(z.string()).default([]).describe("Globs of entries to skip; excluded directories are not entered."),
    respectGitignore: z.boolean().default(true).describe("Skip .git and what .gitignore files inside the tree ignore."),
    contextLines: z.number().int().min(0).max(10).default(0).describe("Lines shown before and after each match (0-10)."),
    outputMode: z.enum(["lines", "files", "count"]).default("lines").describe("'lines', 'files' (with counts) or 'count' (totals only)."),
    offset: z.number().int().min(0).default(0).describe("Matching lines (lines mode) or files (files mode) to skip: the offset a cut result names."),
  },
  annotations: READ_ONLY,
  advice: "pass a deeper path, a narrower pattern or query, or continue with the offset given above",
  async handler(args, ctx) {
    await searchContents(args, ctx);
    return { streamed: true };
  },
});
