/**
 * Per-file serialisation in one server (SPEC §12): every change a Sandbox makes
 * takes the lock of each file it names, so two calls on one file never
 * interleave their read, check and replace. One table per runtime: the servers
 * (HTTP sessions) of one process share it through their runtime.
 */
import { isSystemError, refused, wrapError } from "./errors.js";

/** How a change is serialised and named: the call's cancellation, and the path as given for its messages. */
export interface Serial {
  signal?: AbortSignal;
  shown: string;
  /** `Cannot <action> <shown>`: the context of a failure that no layer below worded. */
  action: string;
}

/** Resolves when `turn` does, or rejects with the cancellation refusal (naming `shown`) once `signal` aborts. */
function untilAborted(turn: Promise<void>, signal: AbortSignal, shown: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const cancelled = (): void => reject(refused({ kind: "lockCancelled", path: shown }));
    if (signal.aborted) return cancelled();
    signal.addEventListener("abort", cancelled, { once: true });
    void turn.then(() => {
      signal.removeEventListener("abort", cancelled);
      resolve();
    });
  });
}

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
   * the same files (a move and its reverse) cannot deadlock; releases them however `task` ends. A failure
   * nobody worded is worded here, naming the path as given, never an internal path (`/proc/self/fd/…`).
   */
  async serialised<T>(keys: readonly string[], how: Serial, task: () => Promise<T>): Promise<T> {
    const releases: Array<() => void> = [];
    try {
      for (const key of [...new Set(keys)].sort()) releases.push(await this.acquire(key, how.signal, how.shown));
      return await task();
    } catch (err) {
      throw isSystemError(err) ? wrapError(err, `Cannot ${how.action} ${how.shown}`) : err;
    } finally {
      for (const release of releases.reverse()) release();
    }
  }

  /** Waits until `key` is free, takes it, and returns the function that frees it; a cancelled wait leaves the queue. */
  private async acquire(key: string, signal: AbortSignal | undefined, shown: string): Promise<() => void> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    let free!: () => void;
    const mine = new Promise<void>((resolve) => (free = resolve));
    const tail = previous.then(() => mine);
    this.tails.set(key, tail);
    const release = (): void => {
      free();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    };
    if (signal === undefined) await previous;
    else {
      try {
        await untilAborted(previous, signal, shown);
      } catch (err) {
        // Its turn, when it comes, passes straight on to the next waiter.
        void previous.then(release);
        throw err;
      }
    }
    return release;
  }
}

/**
 * How long a change waits for a server lock file whose holder lives (`waitMs`), and the waits in progress:
 * one per runtime, so a test shortens the wait and counts the waits and their timers of its own runtime.
 */
export class LockWaits {
  waitMs = 60_000;
  /** Lock waits in progress. */
  waiting = 0;
  /** Timers of lock waits not yet fired or cleared. */
  timers = 0;
}
