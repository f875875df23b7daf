/**
 * One search_file_contents call (SPEC §10, §16), cut as ripgrep cuts it: the walk's opened files go
 * to a batcher (batcher.ts) whose batches the call's scan workers count (scan-pool.ts, protocol.ts);
 * merged back in walk order, each file's figures go to the totals and to the pager (pager.ts), which
 * says what this page shows, and the text goes to the printer (printer.ts). In lines mode a file
 * with matches to show is scanned again, alone, as the page so far asks, unless the count job that
 * found them took its lines ahead.
 */
import type { FileHandle } from "node:fs/promises";
import type { Shown } from "../kernel/escape.js";
import { checkInteger } from "../kernel/integers.js";
import type { OpenedFile } from "../walking/index.js";
import { BATCH_BIG_BYTES, Batcher, type BatchFile } from "./batcher.js";
import type { FileScan } from "./file-scan.js";
import { Pager } from "./pager.js";
import { Printer, type FileCounts } from "./printer.js";
import { named } from "./format.js";
import { limitOf, packFiles, type FileOutcome, type JobFile, type JobSettings, type ShowAhead } from "./protocol.js";
import { DEFAULT_BUDGET, ScanPool } from "./scan-pool.js";
import { MAX_CONTEXT_LINES, type ContentSearchOptions, type FileControl } from "./search-options.js";
import { nextOffset, type SearchTotals, type SkipReason } from "./totals.js";

export { BATCH_BIG_BYTES, MAX_PENDING } from "./batcher.js";

/**
 * Files a search's walk checks itself before it hands the rest over unchecked (the walk's `checkedFirst`), so that its
 * first batches are cut by real sizes: a guess before any size was known cut a tree of 400 small files into 7 batches
 * of 64 where their sizes make 2 of 256, and 200 files of 2 MiB into a first batch of 64 where 4 make 8 MiB.
 */
export const CHECKED_FIRST = 64;

/**
 * The size of a file handed over unchecked, for its batch's bytes (batcher.ts): the mean of the sizes known so far
 * (the files the walk checked, and those their workers checked), or a 64th of a batch's bytes before any. Batched by
 * descriptors alone, a tree of big files went to one worker in one batch. Guessed at an eighth, a tree of 400 small
 * files went in 50 batches instead of 2: under 50 HTTP sessions at once, searches took twice as long and the server's
 * peak RSS grew from 430-540 MB to 550-615 (each batch waits its turns through every other session's work).
 */
class SizeGuess {
  private files = 0;
  private bytes = 0;

  met(size: number): void {
    this.files++;
    this.bytes += size;
  }

  guess(): number {
    return this.files === 0 ? BATCH_BIG_BYTES / 64 : this.bytes / this.files;
  }
}

/**
 * Accumulates one search call; `drain` then `finish` once, and `close` in a finally. A file may come unchecked (size -1,
 * no identity; see the walk's `unchecked`): its worker reads or checks it, crediting a regex call's budget with its bytes
 * before scanning it. Every file handed over is recorded, in walk order: which names a file is searched under is the
 * walk's choice (file-walk.ts).
 */
export class ContentSearch {
  private readonly ctx: number;
  private readonly pager: Pager;
  private readonly printer: Printer;
  private readonly pool: ScanPool;
  private readonly batcher: Batcher<FileOutcome[]>;
  private readonly settings: JobSettings;
  private readonly sizes = new SizeGuess();

  constructor(private readonly opts: ContentSearchOptions) {
    this.ctx = checkInteger("contextLines", opts.contextLines ?? 0, 0, MAX_CONTEXT_LINES);
    this.pager = new Pager(opts.mode ?? "lines", opts.offset ?? 0);
    this.printer = new Printer(opts.sink, this.pager, opts.summaryReserve ?? 1000, opts.onCounted);
    this.settings = { spec: opts.query.spec, chunkSize: opts.chunkSize, maxLineBytes: opts.maxLineBytes };
    this.pool = new ScanPool(
      opts.workers,
      opts.query.mayBacktrack ? { ...DEFAULT_BUDGET, ...opts.budget } : undefined,
      "the files",
      opts.scanThreads,
    );
    const count = (files: readonly BatchFile[]): Promise<FileOutcome[]> =>
      this.pool.count(this.settings, packFiles(files.map((f) => f.opened)), this.pager.mode !== "lines", this.showAhead());
    this.batcher = new Batcher({ count, merge: (files, outcomes) => this.merge(files, outcomes) }, opts.batchFds ?? 256);
    const signal = opts.signal;
    if (signal?.aborted) this.pool.stop(signal.reason);
    else signal?.addEventListener("abort", () => this.pool.stop(signal.reason), { once: true });
  }

  private throwIfFailed(): void {
    if (this.batcher.failure !== undefined) throw this.batcher.failure.err;
    this.opts.signal?.throwIfAborted();
  }

  /**
   * Adds an opened file, which the search now owns and closes; a promise when the walk should wait.
   * @throws what ended the call (the file is closed first)
   */
  addFile(opened: OpenedFile, shown: Shown): Promise<void> | undefined {
    if (this.batcher.failure !== undefined || this.opts.signal?.aborted) {
      opened.close();
      this.throwIfFailed();
    }
    this.pool.charge(Math.max(0, opened.size), 1);
    if (opened.size < 0) return this.batcher.add(opened, shown, this.sizes.guess());
    this.sizes.met(opened.size);
    return this.batcher.add(opened, shown, opened.size);
  }

  private async merge(files: readonly BatchFile[], outcomes: FileOutcome[]): Promise<void> {
    for (const [i, f] of files.entries()) {
      const o = outcomes[i] ?? { error: "a scan worker gave no reason" };
      if (!("error" in o) && o.checked !== undefined) this.sizes.met(o.checked.size);
      if ("error" in o || o.binary || !this.pager.wantsLines(o.matchingLines)) {
        this.printer.record(o, f.shown);
        continue;
      }
      const ahead = this.shownAhead(o, f.shown);
      if (ahead !== undefined) {
        this.printer.record(ahead, f.shown);
        continue;
      }
      // Scanned again for its lines, ending where the page or the lines the count found end (a big file with its
      // matches near the start was read twice whole): the totals are the count's. Up to the size the count read it to.
      const size = o.checked?.size ?? f.opened.size;
      const scan = await this.scanAlone({ fd: f.opened.fd, limit: limitOf(size) }, f.shown, undefined, o.matchingLines);
      this.printer.record(
        "error" in scan || scan.binary ? scan : { ...scan, matchingLines: o.matchingLines, occurrences: o.occurrences, bytes: o.bytes },
        f.shown,
      );
    }
  }

  // What a count job is to show ahead (protocol.ts `ShowAhead`): while this page shows lines and has none left to skip.
  // Scanned again alone at the merge, each file with matches waited behind its worker's next batch: 2-11 ms a file,
  // a tenth of a lines search of installed packages.
  private showAhead(): ShowAhead | undefined {
    const room = this.linesRoom();
    return room === undefined ? undefined : { room, contextLines: this.ctx };
  }

  // The room this page has for lines, while it shows lines and has none left to skip: where lines are shown ahead.
  private linesRoom(): number | undefined {
    const page = this.pager.request(this.printer.room());
    return page.mode === "lines" && page.skip === 0 ? page.room : undefined;
  }

  // A file's lines as its count job showed them ahead, when this page shows them all where the file falls: the text a
  // scan of its own would give (format.ts `named`), as every piece of it fits the room.
  private shownAhead(o: FileOutcome, shown: Shown): FileScan | undefined {
    if ("error" in o || o.lines === undefined) return undefined;
    const room = this.linesRoom();
    if (room === undefined) return undefined;
    const text = named(o.lines, shown, this.printer.wroteAny);
    if (text.length > room) return undefined;
    const { binary, matchingLines, occurrences, bytes } = o;
    return { binary, matchingLines, occurrences, bytes, text, skipped: 0, shown: matchingLines, exhausted: false };
  }

  // One file scanned as the page so far asks: its lines shown (lines mode, before the cut), or counted.
  private scanAlone(file: JobFile, shown: Shown, onProgress?: (bytesDone: number) => void, knownLines?: number): Promise<FileScan | FileOutcome> {
    const page = this.pager.request(this.printer.room());
    const req = {
      ...page,
      contextLines: this.ctx,
      displayPath: shown,
      blankFirst: this.printer.wroteAny,
      occurrences: this.pager.mode !== "lines",
      knownLines,
    };
    return this.pool.show(this.settings, file, req, onProgress);
  }

  /**
   * Waits until every file added so far is merged.
   * @throws what ended the call: a too costly regex, the signal's reason, a worker's failure
   */
  async drain(): Promise<void> {
    this.throwIfFailed();
    this.batcher.flush();
    await this.batcher.settled();
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
      return this.printer.record(
        await this.scanAlone({ fd: fh.fd, limit: limitOf(size) }, displayPath, report && ((done) => report(done, size))),
        displayPath,
      );
    } catch (err) {
      // The caller closes `fh` once this settles: by then no worker may still read it.
      await this.pool.ended();
      throw err;
    } finally {
      ctl.signal?.removeEventListener("abort", onAbort);
    }
  }

  /** Exact totals so far. */
  get totals(): SearchTotals {
    return this.printer.totals;
  }

  /** Records `count` files not searched for `reason`. */
  skip(reason: SkipReason, count = 1): void {
    this.printer.skip(reason, count);
  }

  /** The offset continuing this result, or undefined when it shows everything left. */
  nextOffset(): number | undefined {
    return nextOffset(this.printer.page());
  }

  /** The totals and skips of the files merged so far, for an error that ends the call early. */
  soFar(): string {
    return this.printer.soFar();
  }

  /** Appends the summary (after a blank line when text precedes it) and returns it; call after `drain`. */
  finish(): string {
    return this.printer.finish();
  }

  /** Ends or gives back the workers, then closes every file still held (no worker can read them by then). */
  async close(): Promise<void> {
    try {
      await this.pool.close();
    } finally {
      this.batcher.closeAll();
    }
  }
}
