/** The editing package's public face: the pure edit algorithm, unified diffs and their fence. */
export { applyEdits, coarseUnifiedDiff, createUnifiedDiff, fenceDiff, normalizeLineEndings } from "./edits.js";
export type { EditOperation } from "./edits.js";
export { editFileThrough } from "./edit-file.js";
export { MAX_FILE_REPLACEMENTS, replaceInFiles } from "./replace-files.js";
export { EditRefused, type EditRefusal } from "./refusals.js";
