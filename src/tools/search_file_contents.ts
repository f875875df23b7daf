/** search_file_contents (SPEC §10): find the lines that contain a text or match a regex, in a file or a tree. */
import type { FileHandle } from "node:fs/promises";
import { z } from "zod";
import { escapeControls } from "../kernel/escape.js";
import { CHECKED_FIRST, compileQuery, ContentSearch, literalNote, MAX_CONTEXT_LINES, RegexTooCostlyError, type OutputMode } from "../grep/index.js";
import { checkPatterns, walkFiles } from "../walking/index.js";
import { defineTool, READ_ONLY, walkOptions, type ToolContext } from "./context.js";
import { EXCLUDE_DOC, FILES_GLOB_DOC, GITIGNORE_ON_DOC, REGEX_DOC, searchDescriptors } from "./shared.js";

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
  const descriptors = searchDescriptors(ctx.walks.descriptorLimit());
  const search = new ContentSearch({
    query,
    sink: ctx.bounds.sink,
    mode: args.outputMode,
    contextLines: args.contextLines,
    offset: args.offset,
    signal: ctx.signal,
    workers: ctx.runtime.scanWorkers,
    batchFds: descriptors.batchFds,
  });
  let notes = "";
  let file: { handle: FileHandle } | undefined;
  try {
    // One resolution: a file is opened and searched, a directory walked.
    const target = await ctx.sandbox.openFileOrDirectory(args.path);
    if (target.kind === "file") {
      file = target;
      // The search's own signal (given above) stops it on cancellation.
      await search.searchFile(target.handle, escapeControls(target.path), { onProgress: (done, size) => ctx.progress(done, size) });
    } else {
      const selection = {
        pattern: args.pattern,
        excludePatterns: args.excludePatterns,
        respectGitignore: args.respectGitignore,
        openAhead: descriptors.openAhead,
        // The search's workers read or check what the walk hands over unchecked (SPEC §16); each name is searched, and a
        // link followed only to a file outside the path (file-walk.ts), as grep -r and rg choose.
        // Each file checked on the walking thread, which every call's walk shares, a search of installed packages was
        // 20-30% slower; under 50 HTTP sessions at once, unchecked walks whose first files are checked (for their sizes)
        // made as many calls as checked ones (3,578 against 3,444 on average, three runs alternated).
        unchecked: true,
        checkedFirst: CHECKED_FIRST,
      };
      notes = await walkFiles(
        target.path,
        selection,
        (file, shown) => search.addFile(file, shown),
        (reason, count) => search.skip(reason, count),
        walkOptions(ctx),
      );
      await search.drain();
    }
    search.finish();
    if (!args.regex && search.totals.matchingLines === 0) notes += literalNote(args.query);
    // What no .gitignore rule could say (a file unread, a rule too costly) follows the totals.
    if (notes !== "") ctx.bounds.sink.append(notes);
  } catch (error) {
    // What was searched before the budget ran out is said, not dropped: the error is not an empty result.
    if (error instanceof RegexTooCostlyError) throw new RegexTooCostlyError(`${error.message}\nSo far: ${search.soFar()}`, { cause: error });
    throw error;
  } finally {
    // Closed once the workers are done with it: a descriptor number reused while one still read it would read another file.
    await search.close();
    await file?.handle.close();
  }
}

/** search_file_contents: matching lines, files or counts, with exact totals and continuation by offset. */
export const searchFileContents = defineTool({
  name: "search_file_contents",
  title: "Search File Contents",
  description: () =>
    "Find lines holding a text or regex in a file or tree; ends with exact totals and skips. Names: " +
    "search_files; to replace: replace_in_files. Fails on an invalid or too costly regex.",
  input: {
    path: z.string().describe("File or directory."),
    query: z.string().min(1).describe("Text to find; literal unless regex."),
    regex: z.boolean().default(false).describe(REGEX_DOC),
    caseSensitive: z.boolean().default(false).describe("true: match case. Unlike grep, off by default."),
    pattern: z.string().optional().describe(FILES_GLOB_DOC),
    excludePatterns: z.array(z.string()).default([]).describe(EXCLUDE_DOC),
    respectGitignore: z.boolean().default(true).describe(GITIGNORE_ON_DOC),
    contextLines: z.number().int().min(0).max(MAX_CONTEXT_LINES).default(0).describe("Lines before and after each match; default 0."),
    outputMode: z
      .enum(["lines", "files", "count"])
      .default("lines")
      .describe(
        "'lines': '<path>', then '<n>:<line>' per match, '<n>-<line>' per context line (n: read_text_file's startLine); " +
          "'files': '<path>: N matching lines, M occurrences'; 'count': totals only.",
      ),
    offset: z.number().int().min(0).default(0).describe("Matches (files mode: files) to skip; default 0."),
  },
  annotations: READ_ONLY,
  advice: "pass a deeper path, a narrower pattern or query, or continue with the offset given above",
  async handler(args, ctx) {
    await searchContents(args, ctx);
    return { streamed: true };
  },
});
