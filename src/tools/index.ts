/** The registry of the tools, in the order tools/list reports them. */
import { directoryTree, getFileInfo, listAllowedDirectories, listDirectory, listDirectoryWithSizes, searchFiles } from "./browse.js";
import { searchFileContents } from "./contents.js";
import type { ToolDefinition } from "./context.js";
import { appendFile, copyFile, deleteFile } from "./manage.js";
import { readFile, readMediaFile, readMultipleFiles, readTextFile } from "./read.js";
import { createDirectory, editFile, moveFile, writeFile } from "./write.js";

export type { ToolDefinition } from "./context.js";
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

/** The tools to register: all of them, or with `readOnly` only those that change nothing (SPEC §14). */
export function toolsFor(readOnly: boolean): readonly ToolDefinition[] {
  return readOnly ? TOOLS.filter((tool) => tool.annotations.readOnlyHint === true) : TOOLS;
}
