/**
 * Runs regex scans in a worker thread under a watchdog (SPEC §10, hostile
 * queries): the worker reports after every chunk; when it stays silent past
 * the deadline it is terminated and the call fails saying the expression was
 * too costly. The event loop keeps serving other calls meanwhile.
 */
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { formatCount } from "../bounded.js";
import type { FileScan } from "./file-scan.js";
import type { FileRequest } from "./region-search.js";
import type { QuerySpec } from "./query.js";
import type { WorkerJob, WorkerReply } from "./regex-worker.js";

/** Longest silence, per chunk, before a regex scan is judged too costly. @default 2000 */
const DEFAULT_DEADLINE_MS = 2000;

// A worker's start is not the expression's fault: on a loaded machine loading
// it has taken over a second, so the deadline only runs once the job started.
const START_ALLOWANCE_MS = 30_000;

/** Thrown when a regex scan exceeded its deadline. */
export class RegexTooCostlyError extends Error {}

// From sources (tests run src/*.ts) the worker is taken from the build, as a
// worker thread cannot load TypeScript.
function workerUrl(): URL {
  const here = new URL("./regex-worker.js", import.meta.url);
  if (!import.meta.url.endsWith(".ts")) return here;
  const built = fileURLToPath(here).replace(/([\\/])src([\\/]grep[\\/]regex-worker\.js)$/, "$1dist$2");
  return new URL(`file://${built}`);
}

/** One worker reused for the files of one search; `close` ends it. */
export class RegexIsolate {
  private worker: Worker | undefined;

  constructor(private readonly deadlineMs = DEFAULT_DEADLINE_MS) {}

  /**
   * Scans the open file `fd` in the worker.
   * @throws RegexTooCostlyError past the deadline; the signal's reason when aborted
   */
  scan(
    fd: number,
    spec: QuerySpec,
    req: FileRequest,
    opts: { signal?: AbortSignal; onProgress?: (bytes: number) => void; chunkSize?: number; maxLineBytes?: number },
  ): Promise<FileScan> {
    opts.signal?.throwIfAborted();
    const worker = (this.worker ??= new Worker(workerUrl()));
    return new Promise<FileScan>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const finish = (fn: () => void): void => {
        clearTimeout(timer);
        worker.off("message", onMessage);
        worker.off("error", onError);
        opts.signal?.removeEventListener("abort", onAbort);
        fn();
      };
      const kill = (err: unknown): void => {
        this.worker = undefined;
        void worker.terminate();
        finish(() => reject(err));
      };
      const arm = (ms = this.deadlineMs): void => {
        clearTimeout(timer);
        timer = setTimeout(
          () =>
            kill(
              new RegexTooCostlyError(
                `query is too costly as a regular expression: scanning ${req.displayPath} made no progress for ${formatCount(this.deadlineMs)} ms (the limit), so the search was stopped. Simplify it, e.g. avoid nested quantifiers such as (a+)+.`,
              ),
            ),
          ms,
        );
      };
      const onMessage = (reply: WorkerReply): void => {
        if (reply.type === "started") arm();
        else if (reply.type === "progress") {
          arm();
          opts.onProgress?.(reply.bytes);
        } else if (reply.type === "done") finish(() => resolve(reply.scan));
        else finish(() => reject(Object.assign(new Error(reply.message), { code: reply.code })));
      };
      const onError = (err: unknown): void => kill(err);
      const onAbort = (): void => kill(opts.signal?.reason);
      worker.on("message", onMessage);
      worker.on("error", onError);
      opts.signal?.addEventListener("abort", onAbort, { once: true });
      arm(START_ALLOWANCE_MS);
      const job: WorkerJob = { fd, spec, req, chunkSize: opts.chunkSize, maxLineBytes: opts.maxLineBytes };
      worker.postMessage(job);
    });
  }

  /** Ends the worker, if one was started. */
  async close(): Promise<void> {
    const w = this.worker;
    this.worker = undefined;
    if (w !== undefined) await w.terminate();
  }
}
