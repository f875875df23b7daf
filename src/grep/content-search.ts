/**
 * One search_file_contents call over the files its caller walks (SPEC §10):
 * scans each opened file (regexes in a watched worker, literals here), feeds
 * the shown text into the result's sink within the cap, keeps the totals and
 * the offset continuation, and writes the closing summary.
 */
import type { FileHandle } from "node:fs/promises";
import type { TextSink } from "../bounded.js";
import type { Shown } from "../escape.js";
import { checkInteger } from "../integers.js";
import { fileEntry } from "./format.js";
import { BINARY_PROBE_BYTES, scanFile, type FileScan, type ReadAt } from "./file-scan.js";
import { LineFinder } from "./line-finder.js";
import { RegexIsolate } from "./isolate.js";
import type { Query } from "./query.js";
import type { FileRequest, OutputMode } from "./region-search.js";
import { countWholeLines } from "./whole-count.js";
import { nextOffset, SearchTotals, summaryText, type Page, type SkipReason } from "./totals.js";

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
  /** Watchdog of regex scans. @default 1000 */
  deadlineMs?: number;
  chunkSize?: number;
  maxLineBytes?: number;
}

/** Control of one file's scan. */
export interface FileControl {
  signal?: AbortSignal;
  /** Bytes of this file read so far. */
  onProgress?: (bytesDone: number) => void;
}

/** What one file contributed. */
export interface FileCounts {
  binary: boolean;
  matchingLines: number;
  bytes: number;
}

/** Accumulates one search call; call `finish` once, and `close` in a finally. */
export class ContentSearch {
  /** Exact totals so far. */
  readonly totals = new SearchTotals();
  private readonly mode: OutputMode;
  private readonly ctx: number;
  private readonly offset: number;
  private skipLeft: number;
  private shown = 0;
  private cut = false;
  private readonly isolate: RegexIsolate | undefined;
  private finder: LineFinder | undefined;

  constructor(private readonly opts: ContentSearchOptions) {
    this.mode = opts.mode ?? "lines";
    this.ctx = checkInteger("contextLines", opts.contextLines ?? 0, 0, MAX_CONTEXT_LINES);
    this.offset = checkInteger("offset", opts.offset ?? 0, 0);
    this.skipLeft = this.offset;
    this.isolate = opts.query.mayBacktrack ? new RegexIsolate(opts.deadlineMs) : undefined;
  }

  private room(): number {
    const sink = this.opts.sink;
    return Math.max(0, sink.max - sink.total - (this.opts.summaryReserve ?? 1000));
  }

  /**
   * Searches one opened, already verified file and records it.
   * @throws RegexTooCostlyError, the signal's reason, or a read error (the caller may count it unreadable)
   */
  async searchFile(fh: FileHandle, displayPath: Shown, ctl: FileControl = {}): Promise<FileCounts> {
    return this.search(fh, (buf, offset, length, position) => fh.read(buf, offset, length, position).then((r) => r.bytesRead), displayPath, ctl);
  }

  /** True when files are scanned in this thread (literal queries), so `searchBytes` may be used. */
  get scansInThread(): boolean {
    return this.isolate === undefined;
  }

  /**
   * Searches a whole file already read into `bytes` (needed only until the promise settles) and records it.
   * @throws when the query needs the regex worker (see `scansInThread`), or the signal's reason
   */
  searchBytes(bytes: Buffer, displayPath: Shown, ctl: FileControl = {}): Promise<FileCounts> {
    if (this.isolate !== undefined) throw new Error(`searchBytes needs a literal query; ${displayPath} must be searched with searchFile`);
    const read: ReadAt = (buf, offset, length, position) => bytes.copy(buf, offset, position, Math.min(bytes.length, position + length));
    return this.search(undefined, read, displayPath, ctl, bytes);
  }

  /**
   * Like `searchBytes`, but synchronous (no promise) when the file is shorter than the binary probe and
   * no lines are to be shown: count and files modes, and lines mode once the result is cut.
   * @throws when the query needs the regex worker (see `scansInThread`), or the signal's reason
   */
  searchSmall(bytes: Buffer, displayPath: Shown, ctl: FileControl = {}): FileCounts | Promise<FileCounts> {
    if (this.isolate !== undefined || bytes.length >= BINARY_PROBE_BYTES || (!this.cut && this.mode === "lines")) {
      return this.searchBytes(bytes, displayPath, ctl);
    }
    ctl.signal?.throwIfAborted();
    const matchingLines = countWholeLines((this.finder ??= new LineFinder(this.opts.query)), bytes);
    if (matchingLines < 0) {
      this.totals.skip("binary");
      // As scanFile reports a binary file: nothing of it scanned.
      return { binary: true, matchingLines: 0, bytes: 0 };
    }
    this.totals.addFile(matchingLines);
    if (this.mode === "files" && matchingLines > 0) this.recordFile(displayPath, matchingLines);
    return { binary: false, matchingLines, bytes: bytes.length };
  }

  private async search(fh: FileHandle | undefined, read: ReadAt, displayPath: Shown, ctl: FileControl, whole?: Buffer): Promise<FileCounts> {
    const showing = !this.cut && this.mode === "lines";
    const req: FileRequest = {
      mode: showing ? "lines" : "count",
      contextLines: this.ctx,
      skip: this.skipLeft,
      room: this.room(),
      displayPath,
      blankFirst: this.opts.sink.total > 0,
      forceFirst: this.shown === 0,
    };
    const opts = { signal: ctl.signal, onProgress: ctl.onProgress, chunkSize: this.opts.chunkSize, maxLineBytes: this.opts.maxLineBytes };
    const scan: FileScan =
      this.isolate !== undefined && fh !== undefined
        ? await this.isolate.scan(fh.fd, this.opts.query.spec, req, opts)
        : await scanFile(read, this.opts.query, req, { ...opts, whole });
    if (scan.binary) {
      this.totals.skip("binary");
      return { binary: true, matchingLines: 0, bytes: scan.bytes };
    }
    this.totals.addFile(scan.matchingLines);
    if (showing) this.recordLines(scan);
    else if (this.mode === "files" && scan.matchingLines > 0) this.recordFile(displayPath, scan.matchingLines);
    return { binary: false, matchingLines: scan.matchingLines, bytes: scan.bytes };
  }

  private recordLines(scan: FileScan): void {
    this.skipLeft -= scan.skipped;
    this.shown += scan.shown;
    this.opts.sink.append(scan.text);
    if (scan.exhausted) this.cut = true;
  }

  private recordFile(displayPath: Shown, matchingLines: number): void {
    if (this.skipLeft > 0) {
      this.skipLeft--;
      return;
    }
    if (this.cut) return;
    const line = `${fileEntry(displayPath, matchingLines)}\n`;
    if (line.length > this.room() && this.shown > 0) {
      this.cut = true;
      return;
    }
    this.opts.sink.append(line);
    this.shown++;
  }

  /** Records `count` files not searched for `reason`. */
  skip(reason: SkipReason, count = 1): void {
    this.totals.skip(reason, count);
  }

  /** Where this result stands: what it showed, and whether it was cut. */
  page(): Page {
    const total = this.mode === "files" ? this.totals.matchingFiles : this.totals.matchingLines;
    // A cut that only lost trailing context leaves no match to continue with.
    return { mode: this.mode, offset: this.offset, shown: this.shown, cut: this.cut && this.offset + this.shown < total };
  }

  /** The offset continuing this result, or undefined when it shows everything left. */
  nextOffset(): number | undefined {
    return nextOffset(this.page());
  }

  /** Appends the summary (after a blank line when text precedes it) and returns it. */
  finish(): string {
    const summary = summaryText(this.totals, this.page());
    this.opts.sink.append(this.opts.sink.total > 0 ? `\n${summary}` : summary);
    return summary;
  }

  /** Ends the regex worker, if any. */
  async close(): Promise<void> {
    await this.isolate?.close();
  }
}
