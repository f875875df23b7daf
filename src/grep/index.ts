/** The content-search core of search_file_contents (SPEC §10); the tool's walk feeds it opened files. */
export { literalNote } from "./dialects.js";
export { compileQuery, type Query, type QuerySpec } from "./query.js";
export type { OutputMode } from "./region-search.js";
export { RegexTooCostlyError, ScanWorkers } from "./scan-pool.js";
export { CHECKED_FIRST, ContentSearch } from "./content-search.js";
export { MAX_CONTEXT_LINES } from "./search-options.js";
