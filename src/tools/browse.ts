/** The browsing tools: listings, tree, search, file info, allowed directories. */
import { z } from "zod";
import { formatCount } from "../bounded.js";
import { fileInfo } from "../lib.js";
import type { Sandbox } from "../sandbox/index.js";
import { checkPatterns, listInto, listWithSizesInto, searchInto, treeInto } from "../walking/index.js";
import { defineTool, READ_ONLY, streamed, walkOptions } from "./context.js";

const DIR_DOC = "Directory path: absolute, or relative to an allowed directory.";
const LIST_ADVICE = "list a subdirectory, or use search_files with a pattern";
const EXCLUDE_DOC =
  "Glob patterns (minimatch, dotfiles included) of entries to skip, matched against the path relative to the " +
  "requested directory, e.g. '**/*.log'; a pattern without * also matches that name at any depth, e.g. " +
  "'node_modules'. Excluded directories are not entered. Default: none.";
// search_files matches exclusions as plain globs (upstream), so a bare name only excludes the top level.
const SEARCH_EXCLUDE_DOC =
  "Glob patterns (minimatch, dotfiles included) of entries to skip, matched against the path relative to the " +
  "search directory; use '**/node_modules' to skip that name at any depth. Excluded directories are not entered. " +
  "Default: none.";
const GITIGNORE_DOC =
  "true: skip .git and what the .gitignore files in the tree ignore (git's rules); ignored directories are not " +
  "entered, and a note counts them. Default false.";
const NOT_A_DIR = "Fails if the path is missing, not a directory, or outside the allowed directories.";

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

const excludeParams = (excludePatterns: readonly string[]) =>
  excludePatterns.map((p, i) => [`excludePatterns[${i}]`, p] as const);

const capNote = (max: number) =>
  `Output is capped at ${formatCount(max)} characters; a cut result ends with a notice giving the full length.`;

/** list_directory: one directory's entries. */
export const listDirectory = defineTool({
  name: "list_directory",
  title: "List Directory",
  description: ({ maxResultChars }) =>
    "List the entries of one directory (not recursive), one per line as '[DIR] name' or '[FILE] name', in directory " +
    `order. ${capNote(maxResultChars)} Use list_directory_with_sizes for sizes and totals, directory_tree for nested ` +
    `contents, search_files to find names by pattern. ${NOT_A_DIR}`,
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
  description: ({ maxResultChars }) =>
    "List the entries of one directory (not recursive) with sizes: one line per entry, '[DIR]' or '[FILE]', name " +
    "and human-readable size (files only), sorted by name or largest first, then the totals of files, directories " +
    `and bytes. ${capNote(maxResultChars)} Use list_directory when sizes are not needed, directory_tree for nested ` +
    `contents. ${NOT_A_DIR}`,
  input: {
    path: z.string().describe(DIR_DOC),
    sortBy: z
      .enum(["name", "size"])
      .default("name")
      .describe("'name' (alphabetical; the default) or 'size' (largest first)."),
  },
  annotations: READ_ONLY,
  advice: LIST_ADVICE,
  async handler({ path, sortBy }, ctx) {
    return streamed(ctx, (sink) =>
      withDirectory(path, ctx.sandbox, (dir) => listWithSizesInto(dir, sortBy, sink, walkOptions(ctx))),
    );
  },
});

/** directory_tree: the recursive JSON tree, streamed. */
export const directoryTree = defineTool({
  name: "directory_tree",
  title: "Directory Tree",
  description: ({ maxResultChars }) =>
    "Return the recursive tree under a directory as indented JSON: [{name, type: 'file'|'directory', children}], " +
    "directories with children. Symlinks appear as files and are not followed. " +
    `${capNote(maxResultChars)} On big trees pass a deeper path or excludePatterns (e.g. node_modules, .git). ` +
    `Use list_directory for one level, search_files to find files by name. ${NOT_A_DIR}`,
  input: {
    path: z.string().describe(DIR_DOC),
    excludePatterns: z.array(z.string()).default([]).describe(EXCLUDE_DOC),
    maxDepth: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe(
        "Deepest level listed, 1 = this directory's entries. A directory at that level is not read: it has " +
          "depthLimited: true and no children (an empty one has children: []). Default: no limit.",
      ),
    respectGitignore: z.boolean().default(false).describe(GITIGNORE_DOC),
  },
  annotations: READ_ONLY,
  advice: "pass a deeper path, or add excludePatterns",
  async handler({ path, excludePatterns, maxDepth, respectGitignore }, ctx) {
    checkPatterns(excludeParams(excludePatterns));
    const dir = await ctx.sandbox.validate(path);
    return streamed(ctx, (sink) =>
      treeInto(dir, excludePatterns, sink, walkOptions(ctx), { maxDepth, respectGitignore }),
    );
  },
});

/** search_files: paths matching a glob, streamed. */
export const searchFiles = defineTool({
  name: "search_files",
  title: "Search Files",
  description: ({ maxResultChars }) =>
    "Find files and directories under a directory, at any depth, whose path relative to it matches a glob; returns " +
    "the matching absolute paths, one per line, or 'No matches found'. Matches names, not file contents. " +
    `${capNote(maxResultChars)} Use list_directory for one level, directory_tree for the structure. ${NOT_A_DIR}`,
  input: {
    path: z.string().describe("Directory to search under: absolute, or relative to an allowed directory."),
    pattern: z
      .string()
      .describe(
        "Glob (minimatch, dotfiles included) matched against each path relative to the search directory: " +
          "'**/*.ts' at any depth, '*.md' in the top level only, 'src/**' everything under src.",
      ),
    excludePatterns: z.array(z.string()).default([]).describe(SEARCH_EXCLUDE_DOC),
    respectGitignore: z.boolean().default(false).describe(GITIGNORE_DOC),
  },
  annotations: READ_ONLY,
  advice: "pass a deeper path, a narrower pattern, or add excludePatterns",
  async handler({ path, pattern, excludePatterns, respectGitignore }, ctx) {
    checkPatterns([["pattern", pattern], ...excludeParams(excludePatterns)]);
    const dir = await ctx.sandbox.validate(path);
    return streamed(ctx, (sink) =>
      searchInto(dir, pattern, excludePatterns, sink, walkOptions(ctx), { respectGitignore }),
    );
  },
});

/** get_file_info: metadata lines for one path. */
export const getFileInfo = defineTool({
  name: "get_file_info",
  title: "Get File Info",
  description: () =>
    "Return metadata of one file or directory as 'key: value' lines: size (bytes), created, modified, accessed, " +
    "isDirectory, isFile, permissions (octal, e.g. 644). Reads no content, so it is cheap on huge files; use it to " +
    "check a size before read_media_file. For many entries at once use list_directory_with_sizes. " +
    "Fails if the path is missing or outside the allowed directories.",
  input: { path: z.string().describe("File or directory path: absolute, or relative to an allowed directory.") },
  annotations: READ_ONLY,
  advice: "shorten the path",
  async handler({ path }, ctx) {
    const info = fileInfo(await ctx.sandbox.stat(path));
    const lines = Object.entries(info).map(([key, value]) => `${key}: ${String(value)}`);
    return { content: [{ type: "text", text: lines.join("\n") }] };
  },
});

/** list_allowed_directories: where the server may go. */
export const listAllowedDirectories = defineTool({
  name: "list_allowed_directories",
  title: "List Allowed Directories",
  description: () =>
    "List the directories this server may access, one absolute path per line after 'Allowed directories:'. Every " +
    "path given to the other tools must lie inside one of them; relative paths are resolved against them. Call this " +
    "first when unsure where files are, or after an 'Access denied' error. Takes no parameters.",
  input: {},
  annotations: READ_ONLY,
  advice: "use the directories shown",
  async handler(_args, ctx) {
    return { content: [{ type: "text", text: `Allowed directories:\n${ctx.sandbox.allowedDirs.join("\n")}` }] };
  },
});
