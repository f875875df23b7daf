/** The content-search core of search_file_contents (SPEC §10); the tool's walk feeds it opened files. */
export { compileQuery, type Query, type QuerySpec } from "./query.js";
export { scanFile, looksBinary, type FileScan, type ReadAt, type ScanOptions } from "./file-scan.js";
export type { FileRequest, OutputMode } from "./region-search.js";
export { clipLine, MAX_LINE_CHARS, CLIP_MARK } from "./format.js";
export { RegexTooCostlyError, DEFAULT_DEADLINE_MS } from "./isolate.js";
export { SearchTotals, summaryText, nextOffset, type Page, type SkipReason } from "./totals.js";
export { ContentSearch, MAX_CONTEXT_LINES, type ContentSearchOptions, type FileControl, type FileCounts } from "./content-search.js";
