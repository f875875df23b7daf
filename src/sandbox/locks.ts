/**
 * Per-file serialisation in one server (SPEC §12): every change a Sandbox makes
 * takes the lock of each file it names, so two calls on one file never
 * interleave their read, check and replace. One table per runtime: the servers
 * (HTTP sessions) of one process share it through their runtime.
 */

/** The in-process file locks: each key maps to the promise its next taker waits for. */
export class FileLocks {
  // Keys are real paths (validation resolves symlinks), so two spellings of one file share a lock. A key
  // is absent when nobody holds or waits for it.
  private readonly tails = new Map<string, Promise<void>>();

  /** How many locks are held or awaited (0 once every call has ended). */
  get size(): number {
    return this.tails.size;
  }

  /**
   * Runs `task` holding the locks of every path in `keys`, taken in sorted order so that two calls naming
   * the same files (a move and its reverse) cannot deadlock; releases them however `task` ends.
   */
  async serialised<T>(keys: readonly string[], task: () => Promise<T>): Promise<T> {
    const releases: Array<() => void> = [];
    try {
      for (const key of [...new Set(keys)].sort()) releases.push(await this.acquire(key));
      return await task();
    } finally {
      for (const release of releases.reverse()) release();
    }
  }

  /** Waits until `key` is free, takes it, and returns the function that frees it. */
  private async acquire(key: string): Promise<() => void> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    let free!: () => void;
    const mine = new Promise<void>((resolve) => (free = resolve));
    const tail = previous.then(() => mine);
    this.tails.set(key, tail);
    await previous;
    return () => {
      free();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    };
  }
}
