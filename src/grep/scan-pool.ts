/**
 * The scan workers of one search call (SPEC §10, §16): one or two worker threads (heap capped)
 * run its jobs, reused from the runtime's shelf of idle workers when one is there. A regex search has
 * a budget for the whole call — a base plus a share per KiB and per file handed over — and the
 * workers' busy time is charged against it (a finished job's time as its worker measured it, a running
 * one's since it was handed over); past it every worker of the call is ended and the call
 * fails saying the expression was too costly. Other calls have workers of their own, so they are
 * answered meanwhile. Cancelling ends the workers too; `close` settles only once none can still
 * read a descriptor, so its caller may then close them.
 */
import { availableParallelism } from "node:os";
import { Worker } from "node:worker_threads";
import { formatCount } from "../kernel/bounded.js";
import type { FileScan } from "./file-scan.js";
import {
  unpackOutcomes,
  type FileFailure,
  type FileOutcome,
  type JobFile,
  type JobSettings,
  type ShowAhead,
  type ScanJob,
  type ScanRequest,
  type WorkerReply,
} from "./protocol.js";
import type { FileRequest } from "./region-search.js";
import { inThreadScans, type ScanThread, type StartScanThread } from "./scan-thread.js";

/** How long a regex search may keep its workers busy: `baseMs` plus `perKiBMs` a KiB and `perFileMs` a file. */
export interface Budget {
  /** @default 2000 */
  baseMs: number;
  /** @default 0.1 */
  perKiBMs: number;
  /** @default 0.1 */
  perFileMs: number;
}

/** The budget of a regex search call when none is given. */
export const DEFAULT_BUDGET: Budget = { baseMs: 2000, perKiBMs: 0.1, perFileMs: 0.1 };

/** The budget's rule in words, e.g. "2,000 ms, plus 0.1 ms a KiB and 0.1 ms a file searched". */
const budgetRule = ({ baseMs, perKiBMs, perFileMs }: Budget): string =>
  `${formatCount(baseMs)} ms, plus ${perKiBMs} ms a KiB and ${perFileMs} ms a file searched`;

/** Thrown when a regex search used up its call's budget. */
export class RegexTooCostlyError extends Error {}

/**
 * Workers one call uses at most: the cores beside the main thread's, up to two. On two cores one
 * worker beside the walking main thread was 5-10% faster than two, and 11 MB smaller (the
 * repository-shaped tree of the bench, literal and regex, alternating runs).
 */
const WORKERS = Math.max(1, Math.min(2, availableParallelism() - 1));
/** A worker's V8 heap limit: lines are held as bytes, outside the heap; a piece's decoded text is the largest thing in it. */
const HEAP_MB = 64;
/** Its young generation: the default (up to 16 MiB a semi-space) kept each worker's memory 40 MB higher. */
const YOUNG_MB = 4;
/** Idle workers kept for the next call, and for how long. */
const IDLE_KEPT = 2;
const IDLE_MS = 30_000;
/** How often a regex call's budget is checked while its workers are busy. */
const CHECK_MS = 20;

/** Starts worker threads running the built scan worker at `url`. */
export function workerThreads(url: URL): StartScanThread {
  return () => new Worker(url, { resourceLimits: { maxOldGenerationSizeMb: HEAP_MB, maxYoungGenerationSizeMb: YOUNG_MB } });
}

/**
 * Where a call's scans run unless it says otherwise: worker threads from the built scan-worker.js beside
 * this module; loaded from the sources (the unit tests run src/*.ts), which a worker thread cannot load,
 * the stand-in on the calling thread (scan-thread.ts), running the same scan code.
 */
const DEFAULT_SCAN_THREADS: StartScanThread = import.meta.url.endsWith(".ts")
  ? inThreadScans
  : workerThreads(new URL("./scan-worker.js", import.meta.url));

/**
 * Worker threads kept idle for the next search call (at most IDLE_KEPT of a kind, each for IDLE_MS): one shelf
 * per runtime (server/runtime.ts), which every search of the process takes its workers from. A worker is
 * kept with the function that started it, and only handed to a call that starts its workers that way.
 */
export class ScanWorkers {
  private readonly idle: { worker: ScanThread; start: StartScanThread; timer: NodeJS.Timeout; onError: () => void }[] = [];

  private drop(worker: ScanThread): void {
    const at = this.idle.findIndex((e) => e.worker === worker);
    if (at >= 0) {
      const [entry] = this.idle.splice(at, 1);
      if (entry !== undefined) clearTimeout(entry.timer);
    }
    void worker.terminate();
  }

  /** A started worker: from the shelf, or new (resolved once it said it is ready, so its start is not charged). */
  take(start: StartScanThread): Promise<ScanThread> {
    const at = this.idle.map((e) => e.start).lastIndexOf(start);
    const [kept] = at >= 0 ? this.idle.splice(at, 1) : [];
    if (kept !== undefined) {
      clearTimeout(kept.timer);
      kept.worker.off("error", kept.onError);
      kept.worker.ref();
      return Promise.resolve(kept.worker);
    }
    const worker = start();
    return new Promise((resolve, reject) => {
      const onReady = (reply: WorkerReply): void => {
        if (reply.type !== "ready") return;
        worker.off("error", reject);
        worker.off("message", onReady);
        resolve(worker);
      };
      worker.on("message", onReady);
      worker.once("error", reject);
    });
  }

  /** Puts an idle worker on the shelf, or ends it when the shelf holds enough of its kind. */
  giveBack(worker: ScanThread, start: StartScanThread): void {
    if (this.idle.filter((e) => e.start === start).length >= IDLE_KEPT) {
      void worker.terminate();
      return;
    }
    worker.unref();
    const onError = (): void => this.drop(worker);
    worker.on("error", onError);
    this.idle.push({ worker, start, timer: setTimeout(() => this.drop(worker), IDLE_MS).unref(), onError });
  }
}

interface Pending {
  job: ScanJob;
  transfer: ArrayBuffer[];
  onProgress?: (bytes: number) => void;
  resolve: (reply: WorkerReply) => void;
  reject: (err: unknown) => void;
}

interface Slot {
  worker: ScanThread;
  job?: Pending;
  since: number;
}

/** The workers of one call. */
export class ScanPool {
  private readonly slots: Slot[] = [];
  private starting = 0;
  private readonly queue: Pending[] = [];
  private broken: unknown;
  private allowedMs = 0;
  private spentMs = 0;
  private checker: NodeJS.Timeout | undefined;
  private nextId = 1;

  /**
   * @param workers the runtime's shelf of idle workers
   * @param budget the call's budget; none for a literal query, whose scan cost is linear
   * @param startThread starts a worker when the shelf has none of this kind
   */
  constructor(
    private readonly workers: ScanWorkers,
    private readonly budget: Budget | undefined,
    private readonly what: string,
    private readonly startThread: StartScanThread = DEFAULT_SCAN_THREADS,
  ) {
    this.allowedMs = budget?.baseMs ?? 0;
  }

  /** Adds `bytes` of `files` files handed over to the call's budget. */
  charge(bytes: number, files: number): void {
    if (this.budget !== undefined) this.allowedMs += (bytes / 1024) * this.budget.perKiBMs + files * this.budget.perFileMs;
  }

  /**
   * Counts the files of a batch (packed by `packFiles`): one outcome per file, in order.
   * @throws as `run`
   */
  async count(settings: JobSettings, files: Float64Array, occurrences: boolean, show?: ShowAhead): Promise<FileOutcome[]> {
    const credit = this.budget !== undefined;
    const reply = await this.run({ ...settings, kind: "count", files, occurrences, credit, show }, [files.buffer as ArrayBuffer]);
    if (reply.type !== "counted") throw new Error(`a scan worker answered a count with ${reply.type}`);
    return unpackOutcomes(reply);
  }

  /**
   * Scans one file as `req` asks, ahead of the counts queued; a read that failed gives the failure.
   * @throws as `run`
   */
  async show(settings: JobSettings, file: JobFile, req: FileRequest, onProgress?: (bytes: number) => void): Promise<FileScan | FileFailure> {
    try {
      const reply = await this.run({ ...settings, kind: "show", file, req }, [], { first: true, onProgress });
      if (reply.type !== "shown") throw new Error(`a scan worker answered a scan with ${reply.type}`);
      return reply.scan;
    } catch (err) {
      // A file that fails mid-read is the file's outcome; an ended call (cancelled, too costly, a worker lost) is the call's.
      const code = (err as { code?: unknown }).code;
      if (code === undefined || this.broken !== undefined) throw err;
      return { error: err instanceof Error ? err.message : String(err), code: String(code) };
    }
  }

  /**
   * Runs `job` on the call's next free worker (`first` ahead of queued jobs); resolves with its result.
   * @throws RegexTooCostlyError past the budget, the reason given to `stop`, or the worker's error
   */
  private run(job: ScanRequest, transfer: ArrayBuffer[], opts: { first?: boolean; onProgress?: (bytes: number) => void } = {}): Promise<WorkerReply> {
    if (this.broken !== undefined) return Promise.reject(this.broken);
    return new Promise((resolve, reject) => {
      const pending: Pending = { job: { ...job, id: this.nextId++ } as ScanJob, transfer, onProgress: opts.onProgress, resolve, reject };
      if (opts.first) this.queue.unshift(pending);
      else this.queue.push(pending);
      this.dispatch();
    });
  }

  private dispatch(): void {
    for (const slot of this.slots) if (slot.job === undefined && this.queue.length > 0) this.start(slot, this.queue.shift() as Pending);
    if (this.queue.length > this.starting && this.slots.length + this.starting < WORKERS) {
      this.starting++;
      this.workers.take(this.startThread).then(
        (worker) => {
          this.starting--;
          if (this.broken !== undefined) {
            void worker.terminate();
            return;
          }
          const slot: Slot = { worker, since: 0 };
          worker.on("message", (reply: WorkerReply) => this.onReply(slot, reply));
          worker.on("error", (err) => this.fail(err));
          worker.on("exit", (code) => {
            if (slot.job !== undefined) this.fail(new Error(`a scan worker ended (exit code ${code}) while searching ${this.what}`));
          });
          this.slots.push(slot);
          this.dispatch();
        },
        (err: unknown) => {
          this.starting--;
          this.fail(err);
        },
      );
    }
  }

  private start(slot: Slot, pending: Pending): void {
    slot.job = pending;
    slot.since = performance.now();
    slot.worker.postMessage(pending.job, pending.transfer);
    if (this.budget !== undefined && this.checker === undefined) this.checker = setInterval(() => this.check(), CHECK_MS);
  }

  private onReply(slot: Slot, reply: WorkerReply): void {
    const pending = slot.job;
    if (pending === undefined || !("id" in reply) || reply.id !== pending.job.id) return;
    if (reply.type === "progress") {
      pending.onProgress?.(reply.bytes);
      return;
    }
    // The bytes of files handed over unchecked, as the worker found them before scanning them.
    if (reply.type === "credit") {
      this.charge(reply.bytes, 0);
      return;
    }
    // The worker's own time on the job: a reply that waited for this thread (busy walking) is not the expression's cost.
    this.spentMs += Math.min(reply.ms, performance.now() - slot.since);
    slot.job = undefined;
    if (this.slots.every((s) => s.job === undefined)) this.stopChecking();
    if (reply.type === "failed") pending.reject(Object.assign(new Error(reply.message), { code: reply.code }));
    else pending.resolve(reply);
    this.dispatch();
  }

  private check(): void {
    const now = performance.now();
    const busy = this.slots.reduce((sum, s) => sum + (s.job === undefined ? 0 : now - s.since), 0);
    if (this.spentMs + busy <= this.allowedMs) return;
    this.fail(
      new RegexTooCostlyError(
        `query is too costly as a regular expression: searching ${this.what} used up its ${formatCount(Math.round(this.allowedMs))} ms ` +
          `(${budgetRule(this.budget!)}), so the search was stopped. Simplify it, e.g. avoid nested quantifiers such as (a+)+ or (a|a)*.`,
      ),
    );
  }

  private stopChecking(): void {
    clearInterval(this.checker);
    this.checker = undefined;
  }

  /** Ends every worker of the call and fails what is queued or running with `err` (the first reason wins). */
  private fail(err: unknown): void {
    if (this.broken !== undefined) return;
    this.broken = err;
    this.stopChecking();
    const waiting = [...this.queue, ...this.slots.flatMap((s) => (s.job === undefined ? [] : [s.job]))];
    this.queue.length = 0;
    this.ending = Promise.all(this.slots.map((s) => s.worker.terminate())).then(() => undefined);
    this.slots.length = 0;
    for (const p of waiting) p.reject(err);
  }

  private ending: Promise<void> = Promise.resolve();

  /** Settles once every worker a failure ended has ended (at once when none failed). */
  ended(): Promise<void> {
    return this.ending;
  }

  /** Stops the call's work with `reason` (a cancellation); `close` then waits for the workers' end. */
  stop(reason: unknown): void {
    this.fail(reason);
  }

  /** Gives idle workers back to the process (ends them after a failure); settles once no worker of this call can read a descriptor. */
  async close(): Promise<void> {
    if (this.broken === undefined) {
      const busy = this.slots.some((s) => s.job !== undefined) || this.queue.length > 0;
      if (busy) this.fail(new Error("search closed while it was still scanning"));
      else {
        for (const s of this.slots) {
          s.worker.removeAllListeners("message");
          s.worker.removeAllListeners("error");
          s.worker.removeAllListeners("exit");
          this.workers.giveBack(s.worker, this.startThread);
        }
        this.slots.length = 0;
        this.broken = new Error("search closed");
      }
    }
    await this.ending;
  }
}
