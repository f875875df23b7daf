/**
 * MediaSlots: how many media files the process reads into memory at once
 * (issue 28 row 4). A read_media_file answer is the whole file plus its
 * base64 text (up to about 17 MB at the default media bound, held for a
 * moment), so a thousand calls started together by clients of many HTTP
 * sessions would hold gigabytes before any answer is screened. Calls past the
 * slots wait in order; a call cancelled while it waits leaves the queue.
 */

/** The media reads one process runs at once; the rest wait. */
const MEDIA_READ_SLOTS = 4;

/** A small counting semaphore for media reads. */
export class MediaSlots {
  private busy = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly slots = MEDIA_READ_SLOTS) {}

  /** Reads running now. */
  get running(): number {
    return this.busy;
  }

  /** Runs `read` in a slot, once one is free; rejects with the signal's reason if cancelled while waiting. */
  async run<T>(signal: AbortSignal | undefined, read: () => Promise<T>): Promise<T> {
    await this.acquire(signal);
    try {
      return await read();
    } finally {
      this.busy--;
      this.waiting.shift()?.();
    }
  }

  private acquire(signal: AbortSignal | undefined): Promise<void> {
    signal?.throwIfAborted();
    if (this.busy < this.slots) {
      this.busy++;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const turn = () => {
        signal?.removeEventListener("abort", cancel);
        this.busy++;
        resolve();
      };
      const cancel = () => {
        const at = this.waiting.indexOf(turn);
        if (at !== -1) this.waiting.splice(at, 1);
        reject(signal?.reason);
      };
      this.waiting.push(turn);
      signal?.addEventListener("abort", cancel, { once: true });
    });
  }
}
