/**
 * A scan worker's stand-in on the calling thread: the same `serveScans` as the worker thread, behind
 * the face the pool uses. The pool starts it when loaded from the TypeScript sources (the unit tests),
 * since a worker thread cannot load those. Messages cross as between threads: cloned, the buffers
 * listed moved, and delivered on a later turn. A scan holds this thread while it runs, so a runaway
 * expression cannot be stopped here: the regex budget's tests run the built worker.
 */
import { EventEmitter } from "node:events";
import type { ScanJob, WorkerReply } from "./protocol.js";
import { serveScans } from "./scan-worker.js";

/** What the pool uses of a scan worker: a worker thread (node:worker_threads' Worker), or the stand-in below. */
export interface ScanThread {
  postMessage(job: ScanJob, transfer?: readonly ArrayBuffer[]): void;
  on(event: "message", listener: (reply: WorkerReply) => void): unknown;
  on(event: "error", listener: (err: Error) => void): unknown;
  on(event: "exit", listener: (code: number) => void): unknown;
  once(event: "error", listener: (err: Error) => void): unknown;
  off(event: "message", listener: (reply: WorkerReply) => void): unknown;
  off(event: "error", listener: (err: Error) => void): unknown;
  removeAllListeners(event: "message" | "error" | "exit"): unknown;
  /** Settles once the worker can no longer read a descriptor it was handed. */
  terminate(): Promise<number>;
  ref(): void;
  unref(): void;
}

/** Starts one scan worker. */
export type StartScanThread = () => ScanThread;

const isEnd = (reply: WorkerReply): boolean => reply.type !== "ready" && reply.type !== "progress" && reply.type !== "credit";

class InThread extends EventEmitter implements ScanThread {
  private readonly inbox = new EventEmitter();
  private ended = false;
  /** Jobs handed over and not yet answered: `terminate` waits for them, so no scan still reads a descriptor. */
  private running = 0;
  private readonly idle = new EventEmitter();

  constructor() {
    super();
    serveScans({
      postMessage: (reply, transfer) => {
        if (isEnd(reply) && --this.running === 0) this.idle.emit("idle");
        if (!this.ended) this.deliver(this, reply, transfer);
      },
      on: (_event, listener) => this.inbox.on("message", listener),
    });
  }

  private deliver(to: EventEmitter, message: ScanJob | WorkerReply, transfer: ArrayBuffer[] = []): void {
    const copy = structuredClone(message, { transfer });
    setImmediate(() => {
      if (!this.ended || to === this.inbox) to.emit("message", copy);
    });
  }

  postMessage(job: ScanJob, transfer?: readonly ArrayBuffer[]): void {
    if (this.ended) return;
    this.running++;
    this.deliver(this.inbox, job, [...(transfer ?? [])]);
  }

  async terminate(): Promise<number> {
    if (!this.ended) {
      this.ended = true;
      if (this.running > 0) await new Promise((resolve) => this.idle.once("idle", resolve));
      this.emit("exit", 1);
    }
    return 1;
  }

  ref(): void {}

  unref(): void {}
}

/** Starts a scan worker's stand-in on this thread. */
export function inThreadScans(): ScanThread {
  return new InThread();
}
