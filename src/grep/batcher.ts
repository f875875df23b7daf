/**
 * The opened files a walk hands to a search, gathered into batches (SPEC §10, §16): a batch is
 * sent to be counted once it holds enough descriptors or bytes, counts run ahead while their
 * merges run one after another in walk order, and past MAX_PENDING batches sent the walk is told
 * to wait. Every file handed over is this batcher's to close: once its batch is merged, or by
 * `closeAll` once no worker can read it.
 */
import type { Shown } from "../kernel/escape.js";
import type { OpenedFile } from "../walking/index.js";

/** A batch holds at most this many files (each an open descriptor). */
const BATCH_FDS = 256;
/** A batch is sent once its open files hold this much, so both workers get a share of a tree of big files. */
export const BATCH_BIG_BYTES = 8 * 1024 * 1024;
/** Batches sent and not yet merged; the walk waits past this. */
export const MAX_PENDING = 3;

/** One file of a batch, with the path shown for it. */
export interface BatchFile {
  shown: Shown;
  opened: OpenedFile;
}

/** How a batch is handled: counted as soon as it is sent, merged once the batches before it are. */
export interface BatchHandler<R> {
  count(files: readonly BatchFile[]): Promise<R>;
  merge(files: readonly BatchFile[], counted: R): Promise<void>;
}

/** Gathers one call's files; `add` each, `flush` and `settled` at the end, `closeAll` in a finally. */
export class Batcher<R> {
  private files: BatchFile[] = [];
  private bigBytes = 0;
  private chain: Promise<void> = Promise.resolve();
  private readonly pending: Promise<void>[] = [];
  // The batches sent and not yet closed (a set per file cost a twentieth of the walk's thread).
  private readonly sent = new Set<readonly BatchFile[]>();
  /** What ended the call, once a count or merge failed. */
  failure: { err: unknown } | undefined;

  /** @param maxFds descriptors one batch may hold (1 to 256) */
  constructor(
    private readonly handler: BatchHandler<R>,
    maxFds: number,
  ) {
    this.maxFds = Math.max(1, Math.min(BATCH_FDS, maxFds));
  }

  private readonly maxFds: number;

  /** Takes `opened` (now this batcher's to close), of `bytes` (its size, or a guess); a promise when the walk should wait before the next. */
  add(opened: OpenedFile, shown: Shown, bytes = opened.size): Promise<void> | undefined {
    this.files.push({ shown, opened });
    this.bigBytes += bytes;
    if (this.files.length < this.maxFds && this.bigBytes < BATCH_BIG_BYTES) return undefined;
    this.flush();
    return this.pending.length >= MAX_PENDING ? (this.pending[0] as Promise<void>) : undefined;
  }

  /** Sends the batch being filled (if it holds any file); its merge is chained after the batches before it. */
  flush(): void {
    const files = this.files;
    this.files = [];
    this.bigBytes = 0;
    if (files.length === 0) return;
    this.sent.add(files);
    const counted = this.handler.count(files);
    counted.catch(() => undefined);
    // Closed once merged; a batch whose count failed stays open for `closeAll`, as a worker may still read it.
    // A loop turn before each merge: with many searches at once, their merges (and the walks they
    // release) take turns with other calls' input instead of running back to back (issue 28 row 13).
    const merged = this.chain
      .then(() => counted)
      .then((r) => new Promise<R>((resolve) => setImmediate(resolve, r)))
      .then((r) =>
        this.handler.merge(files, r).finally(() => {
          if (this.sent.delete(files)) for (const f of files) f.opened.close();
        }),
      );
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

  /**
   * Settles once every batch sent is merged.
   * @throws the first failure of a count or merge
   */
  settled(): Promise<void> {
    return this.chain;
  }

  /** Closes every file still held, sent or not; only once no worker can read them any more. */
  closeAll(): void {
    this.sent.add(this.files);
    this.files = [];
    this.bigBytes = 0;
    for (const files of this.sent) {
      for (const f of files) {
        try {
          f.opened.close();
        } catch {
          // Closing is all that is left to do; a descriptor that will not close is not this call's to report.
        }
      }
    }
    this.sent.clear();
  }
}
