/** The browsing tools: listings, tree, search, file info, allowed directories. */
import { z } from "zod";
import { formatCount, TextSink } from "../bounded.js";
import { getFileStats, validatePathIn } from "../lib.js";
import { listInto, listWithSizesInto, searchInto, treeInto } from "../walk.js";
import { defineTool, READ_ONLY, walkOptions } from "./context.js";

const DIR_DOC = "Directory path: absolute, or relative to an allowed directory.";
const LIST_ADVICE = "list a subdirectory, or use search_files with a pattern";
const EXCLUDE_DOC =
  "Glob patterns (minimatch, dotfiles included) of entries to leave out, matched against the path relative to the " +
  "requested directory; a pattern without * also matches that name at any depth. Excluded directories are not entered.";

const capNote = (max: number) => `Capped at ${formatCount(max)} characters; the notice says how many there were.`;

export const listDirectory = defineTool({
  name: "list_directory",
  title: "List Directory",
  description: ({ maxResultChars }) =>
    "List the entries of one directory, one per line as '[DIR] name' or '[FILE] name', in directory order. " +
    `${capNote(maxResultChars)} Use list_directory_with_sizes for sizes, directory_tree for nested contents, ` +
    "search_files to find names by pattern. Fails if the path is not a directory inside the allowed directories.",
  input: { path: z.string().describe(DIR_DOC) },
  annotations: READ_ONLY,
  advice: LIST_ADVICE,
  async handler({ path }, ctx) {
    const dir = await validatePathIn(path, ctx.allowedDirs);
    const sink = new TextSink(ctx.limits.maxResultChars);
    await listInto(dir, sink, walkOptions(ctx));
    return { sink };
  },
});

export const listDirectoryWithSizes = defineTool({
  name: "list_directory_with_sizes",
  title: "List Directory with Sizes",
  description: ({ maxResultChars }) =>
    "List the entries of one directory with file sizes, sorted by name or by size, followed by totals of files, " +
    `directories and bytes. ${capNote(maxResultChars)} Use list_directory when sizes are not needed. ` +
    "Fails if the path is not a directory inside the allowed directories.",
  input: {
    path: z.string().describe(DIR_DOC),
    sortBy: z
      .enum(["name", "size"])
      .default("name")
      .describe("'name' (alphabetical, the default) or 'size' (largest first)."),
  },
  annotations: READ_ONLY,
  advice: LIST_ADVICE,
  async handler({ path, sortBy }, ctx) {
    const dir = await validatePathIn(path, ctx.allowedDirs);
    const sink = new TextSink(ctx.limits.maxResultChars);
    await listWithSizesInto(dir, sortBy, sink, walkOptions(ctx));
    return { sink };
  },
});

export const directoryTree = defineTool({
  name: "directory_tree",
  title: "Directory Tree",
  description: ({ maxResultChars }) =>
    "Return the recursive tree under a directory as indented JSON: [{name, type: 'file'|'directory', children}]. " +
    "Symlinks appear as files and are not followed. " +
    `${capNote(maxResultChars)} On big trees pass a deeper path or excludePatterns (e.g. node_modules, .git); ` +
    "to find files by name use search_files.",
  input: {
    path: z.string().describe(DIR_DOC),
    excludePatterns: z.array(z.string()).default([]).describe(EXCLUDE_DOC),
  },
  annotations: READ_ONLY,
  advice: "pass a deeper path, or add excludePatterns",
  async handler({ path, excludePatterns }, ctx) {
    const dir = await validatePathIn(path, ctx.allowedDirs);
    const sink = new TextSink(ctx.limits.maxResultChars);
    await treeInto(dir, excludePatterns, sink, walkOptions(ctx));
    return { sink };
  },
});

export const searchFiles = defineTool({
  name: "search_files",
  title: "Search Files",
  description: ({ maxResultChars }) =>
    "Find files and directories under a directory whose relative path matches a glob pattern; returns matching " +
    "absolute paths, one per line, or 'No matches found'. Searches names, not contents. " +
    `${capNote(maxResultChars)} Use list_directory for one level, directory_tree for structure.`,
  input: {
    path: z.string().describe("Directory to search under: absolute, or relative to an allowed directory."),
    pattern: z
      .string()
      .describe("Glob matched against each path relative to the search directory, e.g. '**/*.ts' or '*.md' (top level only)."),
    excludePatterns: z.array(z.string()).default([]).describe(EXCLUDE_DOC),
  },
  annotations: READ_ONLY,
  advice: "pass a deeper path, a narrower pattern, or add excludePatterns",
  async handler({ path, pattern, excludePatterns }, ctx) {
    const dir = await validatePathIn(path, ctx.allowedDirs);
    const sink = new TextSink(ctx.limits.maxResultChars);
    await searchInto(dir, pattern, excludePatterns, sink, walkOptions(ctx));
    return { sink };
  },
});

export const getFileInfo = defineTool({
  name: "get_file_info",
  title: "Get File Info",
  description: () =>
    "Return metadata of a file or directory as 'key: value' lines: size in bytes, created, modified and accessed " +
    "times, isDirectory, isFile and permissions (octal). Reads no content. Fails outside the allowed directories.",
  input: { path: z.string().describe("File or directory path: absolute, or relative to an allowed directory.") },
  annotations: READ_ONLY,
  advice: "shorten the path",
  async handler({ path }, ctx) {
    const info = await getFileStats(await validatePathIn(path, ctx.allowedDirs));
    const lines = Object.entries(info).map(([key, value]) => `${key}: ${String(value)}`);
    return { content: [{ type: "text", text: lines.join("\n") }] };
  },
});

export const listAllowedDirectories = defineTool({
  name: "list_allowed_directories",
  title: "List Allowed Directories",
  description: () =>
    "List the directories this server may access; every path given to the other tools must lie inside one of them. " +
    "Call this first when unsure where files can be read or written.",
  input: {},
  annotations: READ_ONLY,
  advice: "use the directories shown",
  async handler(_args, ctx) {
    return { content: [{ type: "text", text: `Allowed directories:\n${ctx.allowedDirs.join("\n")}` }] };
  },
});
