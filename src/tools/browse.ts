/** The browsing tools: listings, tree, search, file info, allowed directories. */
import { z } from "zod";
import { escapeControls, type Shown } from "../kernel/escape.js";
import { looksBinary } from "../grep/index.js";
import { fileInfo, sampleEnds } from "../reading/index.js";
import { errnoCode, type Sandbox } from "../sandbox/index.js";
import { checkPatterns, listInto, listWithSizesInto, searchInto, treeInto } from "../walking/index.js";
import { defineTool, READ_ONLY, streamed, walkOptions } from "./context.js";

const DIR_DOC = "Directory path.";
const LIST_ADVICE = "list a subdirectory, or use search_files with a pattern";
const GITIGNORE_DOC = "true: skip .git and .gitignore'd paths.";
export const EXCLUDE_DOC = "Globs of paths to leave out.";
const NOT_A_DIR = "Fails on a non-directory.";

/**
 * Runs `list` on the validated directory opened once: on Linux it reads through
 * /proc/self/fd, so a directory swapped for a symlink after validation is not
 * followed out of the allowed directories.
 */
async function withDirectory(requested: string, sandbox: Sandbox, list: (dir: string) => Promise<void>): Promise<void> {
  const opened = await sandbox.openDirectory(requested);
  try {
    await list(opened.child(""));
  } finally {
    await opened.close();
  }
}

const excludeParams = (excludePatterns: readonly string[]) => excludePatterns.map((p, i) => [`excludePatterns[${i}]`, p] as const);

/** list_directory: one directory's entries. */
export const listDirectory = defineTool({
  name: "list_directory",
  title: "List Directory",
  description: () =>
    "List one directory, a line per entry: '[DIR] name' (a link to a directory too) or '[FILE] name'. Sizes: " +
    `list_directory_with_sizes; deeper: directory_tree; by name: search_files. ${NOT_A_DIR}`,
  input: { path: z.string().describe(DIR_DOC) },
  annotations: READ_ONLY,
  advice: LIST_ADVICE,
  async handler({ path }, ctx) {
    return streamed(ctx, (sink) => withDirectory(path, ctx.sandbox, (dir) => listInto(dir, sink, walkOptions(ctx))));
  },
});

/** list_directory_with_sizes: entries with sizes and totals. */
export const listDirectoryWithSizes = defineTool({
  name: "list_directory_with_sizes",
  title: "List Directory with Sizes",
  description: () =>
    "List one directory like list_directory with each file's size (1 KB = 1024 B), then total files, directories " +
    `and bytes. Names only: list_directory; deeper: directory_tree. ${NOT_A_DIR}`,
  input: {
    path: z.string().describe(DIR_DOC),
    sortBy: z.enum(["name", "size"]).default("name").describe("By name, or by size (largest first)."),
    limit: z.number().int().min(1).optional().describe("Only the first N after sorting; totals count all."),
  },
  annotations: READ_ONLY,
  advice: LIST_ADVICE,
  async handler({ path, sortBy, limit }, ctx) {
    return streamed(ctx, (sink) => withDirectory(path, ctx.sandbox, (dir) => listWithSizesInto(dir, sortBy, sink, walkOptions(ctx), limit)));
  },
});

/** directory_tree: the recursive JSON tree, streamed. */
export const directoryTree = defineTool({
  name: "directory_tree",
  title: "Directory Tree",
  description: () =>
    "Return the tree under a directory as indented JSON [{name, type: 'file'|'directory', children}]; links are " +
    "files. A tree soon passes the cap, and a cut one is invalid JSON: start with maxDepth 2. One level: " +
    `list_directory; sizes: list_directory_with_sizes; by name: search_files. ${NOT_A_DIR}`,
  input: {
    path: z.string().describe(DIR_DOC),
    excludePatterns: z.array(z.string()).default([]).describe("Globs to leave out; one without * also matches a name at any depth."),
    maxDepth: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe("Levels to list; a directory at the cut that has entries gets depthLimited: true, an empty one children: []."),
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

/** get_file_info: metadata lines for one path. */
export const getFileInfo = defineTool({
  name: "get_file_info",
  title: "Get File Info",
  description: () =>
    "Return one path's metadata as 'key: value' lines: size (bytes), created, modified, accessed, isDirectory, " +
    "isFile, permissions (octal); for a file also lineEndings (LF, CRLF, mixed, none), endsWithNewline, text.",
  input: { path: z.string().describe("File or directory path.") },
  annotations: READ_ONLY,
  advice: "shorten the path",
  async handler({ path }, ctx) {
    const stats = await ctx.sandbox.stat(path);
    const info: Record<string, unknown> = { ...fileInfo(stats) };
    if (stats.isFile()) {
      // A file the server may stat but not read keeps upstream's fields only.
      const opened = await ctx.sandbox.openFile(path).catch((error: unknown) => {
        if (errnoCode(error) === "EACCES") return undefined;
        throw error;
      });
      if (opened !== undefined) {
        try {
          const sample = await sampleEnds(opened.handle, (await opened.handle.stat()).size);
          Object.assign(info, { lineEndings: sample.lineEndings, endsWithNewline: sample.endsWithNewline, text: !looksBinary(sample.head) });
        } finally {
          await opened.handle.close();
        }
      }
    }
    const lines = Object.entries(info).map(([key, value]) => `${key}: ${String(value)}`);
    return { content: [{ type: "text", text: lines.join("\n") }] };
  },
});

/** list_allowed_directories' text: the heading, then one directory per line. */
const allowedList = (dirs: readonly Shown[]): string => `Allowed directories:\n${dirs.join("\n")}`;

/** list_allowed_directories: where the server may go. */
export const listAllowedDirectories = defineTool({
  name: "list_allowed_directories",
  title: "List Allowed Directories",
  description: () => "List the directories this server may access, one per line after 'Allowed directories:'.",
  input: {},
  annotations: READ_ONLY,
  advice: "use the directories shown",
  async handler(_args, ctx) {
    return { content: [{ type: "text", text: allowedList(ctx.sandbox.allowedDirs.map(escapeControls)) }] };
  },
});
