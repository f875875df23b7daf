/**
 * The streaming walkers behind the listing tools (SPEC §3.3, §4, §6): each
 * writes its upstream-format text into a TextSink and never builds the whole
 * result, so trees of millions of entries run in flat memory.
 */
export type { WalkOptions } from "./walk-core.js";
export { treeInto } from "./tree-json.js";
export { searchInto } from "./search-walk.js";
export { listInto, listWithSizesInto } from "./listing.js";
