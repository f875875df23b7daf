/** The settings of one search_file_contents call's core (SPEC §10, §16), as content-search.ts takes them. */
import type { TextSink } from "../kernel/bounded.js";
import type { Shown } from "../kernel/escape.js";
import type { Query } from "./query.js";
import type { OutputMode } from "./region-search.js";
import type { Budget, ScanWorkers } from "./scan-pool.js";
import type { StartScanThread } from "./scan-thread.js";

/** Most context lines a search shows around a match (SPEC §10). */
export const MAX_CONTEXT_LINES = 10;

/** Settings of one search call. */
export interface ContentSearchOptions {
  query: Query;
  /** @default "lines" */
  mode?: OutputMode;
  /** 0-10. @default 0 */
  contextLines?: number;
  /** Matching lines (lines mode) or files (files mode) already shown by earlier pages. @default 0 */
  offset?: number;
  /** Receives the shown text; its `max` is the cap. */
  sink: TextSink;
  /** Characters kept free for the summary. @default 1000 */
  summaryReserve?: number;
  /** The regex budget of the call (see scan-pool.ts); parts not given take DEFAULT_BUDGET's. */
  budget?: Partial<Budget>;
  /** Cancels the call: its workers are ended. */
  signal?: AbortSignal;
  /** The runtime's idle scan workers, which the call takes its workers from and gives them back to. */
  workers: ScanWorkers;
  /** Descriptors one batch may hold (the walk's share of the process's). @default 256 */
  batchFds?: number;
  chunkSize?: number;
  /** The piece an over-long line is searched in. @default 16 MiB */
  maxLineBytes?: number;
  /** Starts the call's scan workers. @default DEFAULT_SCAN_THREADS (scan-pool.ts) */
  scanThreads?: StartScanThread;
  /** Hears every file recorded, in walk order, with its occurrences (0 when skipped; counted in count and files modes only). */
  onCounted?: (shown: Shown, occurrences: number) => void;
}

/** Control of one file's scan. */
export interface FileControl {
  signal?: AbortSignal;
  /** Bytes of this file read so far, of its size when the search began. */
  onProgress?: (bytesDone: number, bytesTotal: number) => void;
}
