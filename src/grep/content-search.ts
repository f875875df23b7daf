/**
 * One search_file_contents call (SPEC §10, §16), cut as ripgrep cuts it: the walk's opened files go
 * to a batcher (batcher.ts) whose batches the call's scan workers count (scan-pool.ts, protocol.ts);
 * merged back in walk order, each file's figures go to the totals and to the pager (pager.ts), which
 * says what this page shows, and the text goes to the printer (printer.ts). In lines mode a file
 * with matches to show is scanned again, alone, as the page so far asks. A walk may hand its regular
 * files over unopened (`addUnopened`): the worker that counts one opens it through the walk's checks
 * (SPEC §23), and a file object met twice is then left out here, in walk order, as the walk would.
 */
import type { FileHandle } from "node:fs/promises";
import type { Shown } from "../kernel/escape.js";
import { checkInteger } from "../kernel/integers.js";
import type { WalkedDirRef } from "../sandbox/index.js";
import { adoptDescriptor, SeenFiles, type OpenedFile, type UnopenedFile } from "../walking/index.js";
import { Batcher, type BatchFile } from "./batcher.js";
import type { FileScan } from "./file-scan.js";
import { Pager } from "./pager.js";
import { Printer, type FileCounts } from "./printer.js";
import { limitOf, packFiles, type FileOutcome, type JobFile, type JobSettings, type WalkedNames } from "./protocol.js";
import { type Counted, DEFAULT_BUDGET, OPENING_WORKERS, ScanPool } from "./scan-pool.js";
import { MAX_CONTEXT_LINES, type ContentSearchOptions, type FileControl } from "./search-options.js";
import { nextOffset, type SearchTotals, type SkipReason } from "./totals.js";

export { BATCH_BIG_BYTES, MAX_PENDING } from "./batcher.js";

// A file the worker opens itself, in a job's descriptor list.
const NOT_OPENED = { fd: -1, size: 0 };
/** With a regex budget, a worker opening files reports their bytes once this many gathered (the budget's lag is then 0.1 s at most). */
const CHARGE_EVERY = 1024 * 1024;

/** Accumulates one search call; `drain` then `finish` once, and `close` in a finally. */
export class ContentSearch {
  private readonly ctx: number;
  private readonly pager: Pager;
  private readonly printer: Printer;
  private readonly pool: ScanPool;
  private readonly batcher: Batcher<Counted>;
  private readonly settings: JobSettings;
  // With files handed over unopened: the file objects merged so far, and each batch's slots (walked names).
  private readonly seen: SeenFiles | undefined;
  private readonly slotsOf = new Map<readonly BatchFile[], Int32Array>();

  constructor(private readonly opts: ContentSearchOptions) {
    this.ctx = checkInteger("contextLines", opts.contextLines ?? 0, 0, MAX_CONTEXT_LINES);
    this.pager = new Pager(opts.mode ?? "lines", opts.offset ?? 0);
    this.printer = new Printer(opts.sink, this.pager, opts.summaryReserve ?? 1000, opts.onCounted);
    this.settings = { spec: opts.query.spec, chunkSize: opts.chunkSize, maxLineBytes: opts.maxLineBytes };
    this.seen = opts.opensInWorkers ? new SeenFiles() : undefined;
    this.pool = new ScanPool(
      opts.workers,
      opts.query.mayBacktrack ? { ...DEFAULT_BUDGET, ...opts.budget } : undefined,
      "the files",
      opts.scanThreads,
      opts.opensInWorkers ? OPENING_WORKERS : undefined,
    );
    const count = (files: readonly BatchFile[]): Promise<Counted> =>
      this.pool.count(this.settings, packFiles(files.map((f) => f.opened ?? NOT_OPENED)), this.pager.mode !== "lines", this.walkedOf(files));
    this.batcher = new Batcher(
      { count, merge: (files, counted) => this.merge(files, counted), release: (files) => this.release(files) },
      opts.batchFds ?? 256,
    );
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
    this.pool.charge(opened.size, 1);
    return this.batcher.add({ shown, opened });
  }

  /**
   * Adds a walked file handed over unopened (with `opensInWorkers`), which the search now holds; its bytes join
   * the budget once its worker opened it. A promise when the walk should wait.
   * @throws what ended the call (the hold is ended first)
   */
  addUnopened(unopened: UnopenedFile, shown: Shown): Promise<void> | undefined {
    if (this.batcher.failure !== undefined || this.opts.signal?.aborted) {
      unopened.held.done();
      this.throwIfFailed();
    }
    this.pool.charge(0, 1);
    return this.batcher.add({ shown, unopened });
  }

  // The names a batch's worker opens itself, or undefined when the walk opened all of them.
  private walkedOf(files: readonly BatchFile[]): WalkedNames | undefined {
    const port = this.opts.opensInWorkers;
    if (port === undefined || files.every((f) => f.unopened === undefined)) return undefined;
    const dirOf = new Int32Array(files.length).fill(-1);
    const names: string[] = [];
    const dirs: WalkedDirRef[] = [];
    const dirAt = new Map<WalkedDirRef, number>();
    for (const [i, f] of files.entries()) {
      names.push(f.unopened?.name ?? "");
      if (f.unopened === undefined) continue;
      const ref = f.unopened.held.ref;
      let at = dirAt.get(ref);
      if (at === undefined) dirAt.set(ref, (at = dirs.push(ref) - 1));
      dirOf[i] = at;
    }
    const slots = new SharedArrayBuffer(4 * files.length);
    this.slotsOf.set(files, new Int32Array(slots));
    const chargeEvery = this.opts.query.mayBacktrack ? CHARGE_EVERY : 0;
    return { walked: port.walkedDirs(dirs), dirOf, names, keepMatched: this.pager.mode === "lines", chargeEvery, slots };
  }

  private async merge(files: readonly BatchFile[], counted: Counted): Promise<void> {
    const slots = this.slotsOf.get(files);
    for (const [i, f] of files.entries()) {
      const o = counted.outcomes[i] ?? { error: "a scan worker gave no reason" };
      if ("error" in o && o.atOpen) {
        // Not opened: counted as the walk counts a file it cannot open.
        this.printer.skip(o.code === "ENAMETOOLONG" ? "pathLimit" : "unreadable", 1);
        continue;
      }
      const opened = f.opened ?? counted.opened(i);
      // A file object met before (another name, a hard link): left out, as the walk leaves it out when it opens.
      if (this.seen !== undefined && opened?.id !== undefined && !this.seen.firstSight(opened.id)) continue;
      if ("error" in o || o.binary || !this.pager.wantsLines(o.matchingLines)) {
        this.printer.record(o, f.shown);
        continue;
      }
      const fd = f.opened?.fd ?? (slots?.[i] ?? 0) - 1;
      if (opened === undefined || fd < 0) throw new Error(`a scan worker kept no descriptor of ${f.shown} to show its lines`);
      // Scanned again for its lines, ending where the page or the lines the count found end (a big file with its
      // matches near the start was read twice whole): the totals are the count's.
      const scan = await this.scanAlone({ fd, limit: limitOf(opened.size) }, f.shown, undefined, o.matchingLines);
      this.printer.record(
        "error" in scan || scan.binary ? scan : { ...scan, matchingLines: o.matchingLines, occurrences: o.occurrences, bytes: o.bytes },
        f.shown,
      );
    }
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

  // Closes a batch's files (those the walk opened, and those its worker left open) and ends its directories' holds.
  private release(files: readonly BatchFile[]): void {
    const slots = this.slotsOf.get(files);
    this.slotsOf.delete(files);
    for (const [i, f] of files.entries()) {
      try {
        if (f.opened !== undefined) f.opened.close();
        else {
          f.unopened.held.done();
          const held = slots?.[i] ?? 0;
          if (held > 0) {
            (slots as Int32Array)[i] = 0;
            adoptDescriptor(held - 1, 0).close();
          }
        }
      } catch {
        // Closing is all that is left to do; a descriptor that will not close is not this call's to report.
      }
    }
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
