/**
 * The worker thread that runs regex scans for `RegexIsolate`, so a
 * catastrophically backtracking expression blocks this thread, not the
 * server's event loop. It reads the file through the descriptor it is given.
 */
import { readSync } from "node:fs";
import { parentPort } from "node:worker_threads";
import { scanFile, type ScanOptions } from "./file-scan.js";
import type { FileRequest } from "./region-search.js";
import { compileQuery, type QuerySpec } from "./query.js";

/** A scan job posted to the worker. */
export interface WorkerJob {
  fd: number;
  spec: QuerySpec;
  req: FileRequest;
  chunkSize?: number;
  maxLineBytes?: number;
}

/** What the worker posts back: started, progress after each chunk, then a result or an error. */
export type WorkerReply =
  | { type: "started" }
  | { type: "progress"; bytes: number }
  | { type: "done"; scan: Awaited<ReturnType<typeof scanFile>> }
  | { type: "error"; message: string; code?: string };

const port = parentPort;
if (port !== null) {
  port.on("message", (job: WorkerJob) => {
    const post = (reply: WorkerReply): void => port.postMessage(reply);
    post({ type: "started" });
    const opts: ScanOptions = { chunkSize: job.chunkSize, maxLineBytes: job.maxLineBytes, onProgress: (bytes) => post({ type: "progress", bytes }) };
    scanFile((buf, offset, length, position) => readSync(job.fd, buf, offset, length, position), compileQuery(job.spec), job.req, opts).then(
      (scan) => post({ type: "done", scan }),
      (err: unknown) => post({ type: "error", message: err instanceof Error ? err.message : String(err), code: (err as { code?: string }).code }),
    );
  });
}
