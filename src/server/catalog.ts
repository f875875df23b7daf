/** The registry of the tools, in the order tools/list reports them. */
import { appendFile } from "../tools/append_file.js";
import { copyFile } from "../tools/copy_file.js";
import { createDirectory } from "../tools/create_directory.js";
import { deleteFile } from "../tools/delete_file.js";
import { directoryTree } from "../tools/directory_tree.js";
import { editFile } from "../tools/edit_file.js";
import { getFileInfo } from "../tools/get_file_info.js";
import { listAllowedDirectories } from "../tools/list_allowed_directories.js";
import { listDirectory } from "../tools/list_directory.js";
import { listDirectoryWithSizes } from "../tools/list_directory_with_sizes.js";
import { moveFile } from "../tools/move_file.js";
import { readFile } from "../tools/read_file.js";
import { readMediaFile } from "../tools/read_media_file.js";
import { readMultipleFiles } from "../tools/read_multiple_files.js";
import { readTextFile } from "../tools/read_text_file.js";
import { replaceInFilesTool } from "../tools/replace_in_files.js";
import { searchFileContents } from "../tools/search_file_contents.js";
import { searchFiles } from "../tools/search_files.js";
import { writeFile } from "../tools/write_file.js";
import type { Tool } from "@modelcontextprotocol/server";
import type { z } from "zod";
import type { Limits } from "../kernel/bounded.js";
import type { ToolDefinition } from "../tools/context.js";

export type { ToolDefinition } from "../tools/context.js";
export { instructions } from "./instructions.js";
export { listedTool } from "./listed.js";

/** All 19 tools, in the order tools/list reports them. */
const TOOLS: readonly ToolDefinition[] = [
  readFile,
  readTextFile,
  readMediaFile,
  readMultipleFiles,
  writeFile,
  appendFile,
  editFile,
  replaceInFilesTool,
  createDirectory,
  listDirectory,
  listDirectoryWithSizes,
  directoryTree,
  moveFile,
  copyFile,
  deleteFile,
  searchFiles,
  searchFileContents,
  getFileInfo,
  listAllowedDirectories,
];

/** Every tool's name, in tools/list order; with `writing`, only the tools that change files. */
export function toolNames(writing = false): string[] {
  return TOOLS.filter((tool) => !writing || tool.annotations.readOnlyHint !== true).map((tool) => tool.name);
}

/**
 * The tools to register: those `chosen` names (all when absent, SPEC §19), and with `readOnly` only those of
 * them that change nothing (SPEC §14), in tools/list order.
 */
export function toolsFor(readOnly: boolean, chosen?: readonly string[]): readonly ToolDefinition[] {
  return TOOLS.filter((tool) => (chosen === undefined || chosen.includes(tool.name)) && (!readOnly || tool.annotations.readOnlyHint === true));
}

/** What a server offers for one set of limits and tools: the tools with their schemas, listed and described. */
export interface Catalog {
  readonly tools: ReadonlyMap<string, { tool: ToolDefinition; schema: z.ZodObject }>;
  readonly listed: readonly Tool[];
  readonly listedReading: readonly Tool[];
  readonly instructions: string;
  readonly readingInstructions: string;
}

/**
 * The catalogs a runtime made, by limits and by mode: every HTTP session builds a server with the same
 * limits and tools, so its schemas and listings are made once.
 */
export type Catalogs = WeakMap<Limits, Map<string, Catalog>>;
