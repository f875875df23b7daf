/** The registry of the tools, in the order tools/list reports them. */
import { directoryTree, getFileInfo, listAllowedDirectories, listDirectory, listDirectoryWithSizes, searchFiles } from "../tools/browse.js";
import { searchFileContents } from "../tools/contents.js";
import type { ToolDefinition } from "../tools/context.js";
import { appendFile, copyFile, deleteFile } from "../tools/manage.js";
import { readFile, readMediaFile, readMultipleFiles, readTextFile } from "../tools/read.js";
import { createDirectory, editFile, moveFile, writeFile } from "../tools/write.js";

export type { ToolDefinition } from "../tools/context.js";
export { instructions } from "./instructions.js";
export { listedTool } from "./listed.js";

/** All 18 tools, in the order tools/list reports them. */
const TOOLS: readonly ToolDefinition[] = [
  readFile,
  readTextFile,
  readMediaFile,
  readMultipleFiles,
  writeFile,
  appendFile,
  editFile,
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
