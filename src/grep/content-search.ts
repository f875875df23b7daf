/**
 * One search_file_contents call over the files its caller walks (SPEC §10, §16): files come
 * opened (descriptors, with their sizes), are gathered into batches that the call's
 * scan workers count, and are merged back in walk order, so the shown text, the totals and the
 * `offset` continuation are the same however the workers' replies interleave. In lines mode a
 * file with matches to show is scanned again, alone, as the page so far asks. Batches bound the
 * descriptors held; they are closed once merged, or by `close` once no worker can read them.
 */
import type { FileHandle } from "node:fs/promises";
import type { TextSink } from "../kernel/bounded.js";
import type { Shown } from "../kernel/escape.js";
import { checkInteger } from "../kernel/integers.js";
import { fileEntry } from "./format.js";
import { type FileScan, pieceSizeOf } from "./file-scan.js";
import type { Query } from "./query.js";
import type { FileRequest, OutputMode } from "./region-search.js";
import { DEFAULT_BUDGET, ScanPool, type Budget, type ScanWorkers } from "./scan-pool.js";
import type { StartScanThread } from "./scan-thread.js";
import { BINARY, FAILED, FIGURES, LONG_LINE, type FileOutcome, type JobFile, type ScanRequest, type WorkerReply } from "./scan-worker.js";
import { nextOffset, SearchTotals, summaryText, type Page, type SkipReason } from "./totals.js";

/** Most context lines a search shows around a match (SPEC §10). */
export const MAX_CONTEXT_LINES = 10;

/** The piece an over-long line is searched in (SPEC §16): 16 MiB. */
/** A batch holds at most this many files (each an open descriptor). */
const BATCH_FDS = 256;
/** A batch is sent once its open files hold this much, so both workers get a share of a tree of big files. */
export const BATCH_BIG_BYTES = 8 * 1024 * 1024;
/** Batches sent and not yet merged; the walk waits past this. */
export const MAX_PENDING = 3;

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
  /** Hears every file added, in the order added, with its occurrences (0 when skipped; counted in count and files modes only). */
  onCounted?: (shown: Shown, occurrences: number) => void;
}

/** A file opened through the sandbox, handed over with its size when opened; the search closes it. */
export interface OpenedFile {
  fd: number;
  size: number;
  close(): unknown;
}

/** Control of one file's scan. */
export interface FileControl {
  signal?: AbortSignal;
  /** Bytes of this file read so far, of its size when the search began. */
  onProgress?: (bytesDone: number, bytesTotal: number) => void;
}

/** What one file contributed. */
export interface FileCounts {
  binary: boolean;
  matchingLines: number;
  bytes: number;
}

interface BatchFile {
  shown: Shown;
  opened: OpenedFile;
}

// How far a worker reads a file: its size when opened (a size of 0 may still hide content: read to the end).
/** How far a file is read: its size when opened, or to its end when that said 0 (pseudo files). */
const limitOf = ({ size }: Pick<OpenedFile, "size">): number => (size > 0 ? size : Number.MAX_SAFE_INTEGER);

interface Batch {
  files: BatchFile[];
  bigBytes: number;
}

const newBatch = (): Batch => ({ files: [], bigBytes: 0 });

/** Accumulates one search call; `drain` then `finish` once, and `close` in a finally. */
export class ContentSearch {
  /** Exact totals so far. */
  readonly totals = new SearchTotals();
  private readonly mode: OutputMode;
  private readonly ctx: number;
  private readonly offset: number;
  private readonly pool: ScanPool;
  private readonly batchFds: number;
  private skipLeft: number;
  private shown = 0;
  private cut = false;
  private batch = newBatch();
  private chain: Promise<void> = Promise.resolve();
  private readonly pending: Promise<void>[] = [];
  private readonly open = new Set<OpenedFile>();
  private failure: { err: unknown } | undefined;

  constructor(private readonly opts: ContentSearchOptions) {
    this.mode = opts.mode ?? "lines";
    this.ctx = checkInteger("contextLines", opts.contextLines ?? 0, 0, MAX_CONTEXT_LINES);
    this.offset = checkInteger("offset", opts.offset ?? 0, 0);
    this.skipLeft = this.offset;
    this.batchFds = Math.max(1, Math.min(BATCH_FDS, opts.batchFds ?? BATCH_FDS));
    const budget = opts.query.mayBacktrack ? { ...DEFAULT_BUDGET, ...opts.budget } : undefined;
    this.pool = new ScanPool(opts.workers, budget, "the files", opts.scanThreads);
    const signal = opts.signal;
    if (signal !== undefined) {
      if (signal.aborted) this.pool.stop(signal.reason);
      else signal.addEventListener("abort", () => this.pool.stop(signal.reason), { once: true });
    }
  }

  private get showing(): boolean {
    return this.mode === "lines" && !this.cut;
  }

  private room(): number {
    const sink = this.opts.sink;
    return Math.max(0, sink.max - sink.total - (this.opts.summaryReserve ?? 1000));
  }

  private throwIfFailed(): void {
    if (this.failure !== undefined) throw this.failure.err;
    this.opts.signal?.throwIfAborted();
  }

  /**
   * Adds an opened file, which the search now owns and closes; a promise when the walk should wait.
   * @throws what ended the call (the file is closed first)
   */
  addFile(opened: OpenedFile, shown: Shown): Promise<void> | undefined {
    if (this.failure !== undefined || this.opts.signal?.aborted) {
      opened.close();
      this.throwIfFailed();
    }
    this.open.add(opened);
    const b = this.batch;
    b.files.push({ shown, opened });
    b.bigBytes += opened.size;
    this.pool.charge(opened.size, 1);
    return this.sendIfFull();
  }

  private sendIfFull(): Promise<void> | undefined {
    const b = this.batch;
    if (b.files.length < this.batchFds && b.bigBytes < BATCH_BIG_BYTES) return undefined;
    this.send();
    return this.pending.length >= MAX_PENDING ? (this.pending[0] as Promise<void>) : undefined;
  }

  // Sends the batch being filled to the workers; its merge is chained after the batches before it.
  private send(): void {
    const b = this.batch;
    this.batch = newBatch();
    if (b.files.length === 0) return;
    const files = new Float64Array(2 * b.files.length);
    for (const [i, f] of b.files.entries()) {
      files[2 * i] = f.opened.fd;
      files[2 * i + 1] = limitOf(f.opened);
    }
    const job: ScanRequest = { ...this.jobBase(), kind: "count", files, occurrences: this.mode !== "lines" };
    const counted = this.pool.run(job, [files.buffer]);
    counted.catch(() => undefined);
    const merged = this.chain.then(() => counted).then((reply) => this.merge(b, reply));
    this.chain = merged.catch((err: unknown) => {
      this.failure ??= { err };
      throw err;
    });
    this.chain.catch(() => undefined);
    const tracked = merged.finally(() => {
      this.pending.shift();
    });
    tracked.catch(() => undefined);
    this.pending.push(tracked);
  }

  private jobBase(): { spec: Query["spec"]; chunkSize?: number; maxLineBytes?: number } {
    return { spec: this.opts.query.spec, chunkSize: this.opts.chunkSize, maxLineBytes: this.opts.maxLineBytes };
  }

  private async merge(b: Batch, reply: WorkerReply): Promise<void> {
    if (reply.type !== "counted") throw new Error(`a scan worker answered a count with ${reply.type}`);
    const errors = new Map(reply.errors.map((e) => [e.at, e]));
    const fig = reply.figures;
    try {
      for (const [i, f] of b.files.entries()) {
        const at = FIGURES * i;
        const flags = fig[at] as number;
        const outcome: FileOutcome =
          flags & FAILED
            ? (errors.get(i) ?? { error: "a scan worker gave no reason" })
            : {
                binary: (flags & BINARY) !== 0,
                longLine: (flags & LONG_LINE) !== 0,
                matchingLines: fig[at + 1] as number,
                occurrences: fig[at + 2] as number,
                bytes: fig[at + 3] as number,
              };
        if (this.showing && !("error" in outcome) && !outcome.binary && !outcome.longLine && outcome.matchingLines > this.skipLeft) {
          this.record(await this.scanAlone({ fd: f.opened.fd, limit: limitOf(f.opened) }, f.shown, {}), f.shown);
        } else this.record(outcome, f.shown);
      }
    } finally {
      for (const f of b.files) this.closeOne(f.opened);
    }
  }

  private closeOne(opened: OpenedFile): void {
    if (this.open.delete(opened)) opened.close();
  }

  // One file scanned as the page so far asks: its lines shown (lines mode, before the cut), or counted.
  private async scanAlone(
    file: JobFile,
    shown: Shown,
    ctl: { signal?: AbortSignal; onProgress?: (bytesDone: number) => void },
  ): Promise<FileScan | FileOutcome> {
    const req: FileRequest = {
      mode: this.showing ? "lines" : "count",
      contextLines: this.ctx,
      skip: this.skipLeft,
      room: this.room(),
      displayPath: shown,
      blankFirst: this.opts.sink.total > 0,
      forceFirst: this.shown === 0,
      occurrences: this.mode !== "lines",
    };
    try {
      const reply = await this.pool.run({ ...this.jobBase(), kind: "show", file, req }, [], { first: true, onProgress: ctl.onProgress });
      if (reply.type !== "shown") throw new Error(`a scan worker answered a scan with ${reply.type}`);
      return reply.scan;
    } catch (err) {
      if ((err as { code?: unknown }).code === undefined || this.opts.signal?.aborted) throw err;
      return { error: err instanceof Error ? err.message : String(err), code: String((err as { code?: unknown }).code) };
    }
  }

  // Adds one file's figures to the totals and its text (lines or files mode) to the result.
  private record(r: FileScan | FileOutcome, shown: Shown): FileCounts {
    this.opts.onCounted?.(shown, "error" in r || r.binary || r.longLine ? 0 : r.occurrences);
    if ("error" in r) {
      // A file that fails mid-read is counted, not fatal.
      if (r.code === undefined) throw new Error(r.error);
      this.totals.skip("unreadable");
      return { binary: false, matchingLines: 0, bytes: 0 };
    }
    if (r.binary || r.longLine) {
      this.totals.skip(r.binary ? "binary" : "longLine");
      return { binary: r.binary, matchingLines: 0, bytes: r.bytes };
    }
    this.totals.addFile(r.matchingLines, r.occurrences);
    if ("text" in r && this.showing) {
      this.skipLeft -= r.skipped;
      this.shown += r.shown;
      this.opts.sink.append(r.text);
      if (r.exhausted) this.cut = true;
    } else if (this.showing) this.skipLeft -= r.matchingLines;
    else if (this.mode === "files" && r.matchingLines > 0) this.recordFile(shown, r.matchingLines, r.occurrences);
    return { binary: false, matchingLines: r.matchingLines, bytes: r.bytes };
  }

  private recordFile(displayPath: Shown, matchingLines: number, occurrences: number): void {
    if (this.skipLeft > 0) {
      this.skipLeft--;
      return;
    }
    if (this.cut) return;
    const line = `${fileEntry(displayPath, matchingLines, occurrences)}\n`;
    if (line.length > this.room() && this.shown > 0) {
      this.cut = true;
      return;
    }
    this.opts.sink.append(line);
    this.shown++;
  }

  /**
   * Waits until every file added so far is merged.
   * @throws what ended the call: a too costly regex, the signal's reason, a worker's failure
   */
  async drain(): Promise<void> {
    this.throwIfFailed();
    this.send();
    await this.chain;
    this.throwIfFailed();
  }

  /**
   * Searches one opened file (after the files added before it), as the page so far asks; the caller keeps and closes `fh`.
   * @throws as `drain`
   */
  async searchFile(fh: FileHandle, displayPath: Shown, ctl: FileControl = {}): Promise<FileCounts> {
    await this.drain();
    ctl.signal?.throwIfAborted();
    const size = Number((await fh.stat()).size);
    this.pool.charge(size, 1);
    const onAbort = (): void => this.pool.stop(ctl.signal?.reason);
    ctl.signal?.addEventListener("abort", onAbort, { once: true });
    try {
      const report = ctl.onProgress;
      const scan = await this.scanAlone({ fd: fh.fd, limit: limitOf({ size }) }, displayPath, {
        signal: ctl.signal,
        onProgress: report && ((done) => report(done, size)),
      });
      return this.record(scan, displayPath);
    } catch (err) {
      // The caller closes `fh` once this settles: by then no worker may still read it.
      await this.pool.ended();
      throw err;
    } finally {
      ctl.signal?.removeEventListener("abort", onAbort);
    }
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

  /** The totals and skips of the files merged so far, for an error that ends the call early. */
  soFar(): string {
    return summaryText(this.totals, { mode: "count", offset: 0, shown: 0, cut: false }, pieceSizeOf(this.opts));
  }

  /** Appends the summary (after a blank line when text precedes it) and returns it; call after `drain`. */
  finish(): string {
    const summary = summaryText(this.totals, this.page(), pieceSizeOf(this.opts));
    this.opts.sink.append(this.opts.sink.total > 0 ? `\n${summary}` : summary);
    return summary;
  }

  /** Ends or gives back the workers, then closes every file still held (no worker can read them by then). */
  async close(): Promise<void> {
    try {
      await this.pool.close();
    } finally {
      for (const f of this.batch.files) this.open.add(f.opened);
      this.batch = newBatch();
      for (const opened of this.open) {
        try {
          opened.close();
        } catch {
          // Closing is all that is left to do; a descriptor that will not close is not this call's to report.
        }
      }
      this.open.clear();
    }
  }
}
