/**
 * The walking package's public face: streaming walkers behind the listing
 * tools (SPEC §3.3, §4, §6). Each writes its upstream-format text into a
 * TextSink and never builds the whole result, so trees of millions of entries
 * run in flat memory.
 */
export { listInto, listWithSizesInto } from "./listing.js";
export { checkPatterns } from "./patterns.js";
export { searchInto } from "./glob-search.js";
export { formatSize } from "./sizes.js";
export { treeInto } from "./tree.js";
export { DescriptorBudget } from "./descriptors.js";
export type { WalkOptions } from "./walker.js";
export { walkFiles, type OpenedFile } from "./file-walk.js";
