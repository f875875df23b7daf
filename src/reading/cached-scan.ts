/**
 * The cached-scan protocol, written once (SPEC §6, §11, §13): how a reader
 * asks the checkpoint cache about a file, claims the one cold pass over it or
 * waits for the pass another reader is making, records the checkpoints its
 * scan passes, and stores what a complete cold pass learnt. Every reader of
 * a file's text (windows, line windows, counts, whole-file streaming) scans
 * through here and only says what it wants decoded.
 */
import type { FileHandle } from "node:fs/promises";
import { type CheckpointCache, type FileCheckpoints, type FileIdentity, identify, sameIdentity } from "./checkpoints.js";
import { type ReadOptions, type RestartPoint, type ScanResult, type TextConsumer, scanText } from "./scan.js";

/** The start of a file: no byte, no character, no line feed before it. */
export const ORIGIN: RestartPoint = Object.freeze({ byte: 0, char: 0, line: 0 });

/** What one reader scans, once it knows whether the file is warm. */
export interface ScanPlan {
  /** Where decoding starts: the origin, or a checkpoint of the known entry. */
  from: RestartPoint;
  consumer?: TextConsumer;
  /**
   * Ends a warm scan early, checked after each chunk. A cold pass runs on to the end so that what it stores is
   * complete, unless `countBytes` is set: then it ends once `stop` holds, and the count goes on for that many bytes
   * past the furthest point counted so far (by this pass or an earlier answer's, whose checkpoints are kept).
   */
  stop?: (char: number) => boolean;
  /** How far a cold pass counts on for the total once the reader has what it needs (COUNT_BUDGET_BYTES for a first answer). */
  countBytes?: number;
  /** Told each restart point the scan passes, after the cache's entry recorded it. */
  onRestart?: (point: RestartPoint) => void;
}

/** What a reader learns from one cached scan. */
export interface CachedScan {
  /** The cache's complete entry for this version of the file, or undefined when the pass was cold. */
  known: FileCheckpoints | undefined;
  /** The entry the scan's checkpoints went into: `known`, or the fresh one a complete cold pass stored. */
  entry: FileCheckpoints;
  /** Where the scan stopped; undefined when a warm reader needed no scan. */
  scan: ScanResult | undefined;
  /** The length of the file's decoded text: the known total, or where the cold pass ended. */
  total: number;
  /** Present when a cold pass stopped counting before the end (`countBytes`): `total` is then a lower bound. */
  countedBytes?: number;
}

/**
 * Bytes a first answer reads past what it needs to count the file's total (issue 28 row 10): a window of an
 * arbitrarily large file must not wait for its exact total, so past this the notice says the total is not known.
 * At the counting speed of SPEC §11 (about a GiB a second) this is a wait of well under a second.
 */
export const COUNT_BUDGET_BYTES = 64 * 1024 * 1024;

/** A reader's hold on the file's entry: a warm one, or the claim on the cold pass (released once). */
interface Hold {
  id: FileIdentity;
  known: FileCheckpoints | undefined;
  entry: FileCheckpoints;
  release: () => void;
}

const warm = (): void => {};

/**
 * Scans the text of the file behind `handle` (cached under `key`) as `planFor` asks, given the known entry
 * (complete), or the partial one an earlier first answer left (no `total`: its checkpoints only), or none.
 * `planFor` returns undefined when the known entry already answers the reader; a cold pass then still
 * counts the file to its end, so the cache learns it. A warm scan costs one fstat, a cold pass two (the
 * second tells a file that changed during the pass, whose entry is then neither stored nor kept). A stale
 * entry is found and dropped by the next reader's fstat.
 * @throws the signal's reason when aborted (also while waiting for another reader's pass), or a read error
 */
export async function scanCached(
  handle: FileHandle,
  key: string,
  cache: CheckpointCache,
  opts: ReadOptions,
  planFor: (known: FileCheckpoints | undefined) => ScanPlan | undefined,
): Promise<CachedScan> {
  const hold = await holdEntry(handle, key, cache, opts.signal);
  try {
    const { known, entry } = hold;
    // What an earlier answer counted of a large file (a partial entry): its checkpoints start this pass near the reader's
    // offset, and the count goes on from where it stopped, instead of from the start again.
    const partial = known === undefined && entry.count > 1 ? entry : undefined;
    const plan = planFor(known ?? partial) ?? (known === undefined ? { from: partial?.furthest() ?? ORIGIN } : undefined);
    if (plan === undefined) return { known, entry, scan: undefined, total: known?.total ?? 0 };
    const bytesTotal = Number(hold.id.size);
    const onRestart = (point: RestartPoint): void => {
      entry.add(point);
      plan.onRestart?.(point);
    };
    if (known !== undefined) {
      const scan = await scanText(handle, { from: plan.from, consumer: plan.consumer, bytesTotal, stop: plan.stop, onRestart }, opts);
      return { known, entry, scan, total: known.total ?? scan.char };
    }
    // A cold pass runs to the end, unless the reader has a count budget: then, once the reader has what it needs, it
    // counts `countBytes` past the furthest point counted so far, jumping there when the reader's need ends before it.
    const { stop: need, countBytes } = plan;
    const counted = entry.furthest();
    const until = Math.max(counted.byte, plan.from.byte) + (countBytes ?? 0);
    const budgeted = need !== undefined && countBytes !== undefined;
    const stop = budgeted ? (char: number, byte: number) => need(char) && (byte < counted.byte || byte >= until) : undefined;
    let scan = await scanText(handle, { from: plan.from, consumer: plan.consumer, bytesTotal, stop, onRestart }, opts);
    if (budgeted && !scan.complete && scan.byte < counted.byte) {
      scan = await scanText(handle, { from: counted, bytesTotal, stop: (_char, byte) => byte >= until, onRestart }, opts);
    }
    const unchanged = sameIdentity(await identify(handle), hold.id);
    if (!scan.complete) {
      // Kept for the next reader to count on from, unless the file changed meanwhile.
      if (unchanged) cache.store(key, entry);
      return { known, entry, scan, total: scan.char, countedBytes: scan.byte };
    }
    if (unchanged) {
      entry.total = scan.char;
      entry.totalLines = scan.line;
      cache.store(key, entry);
    }
    return { known, entry, scan, total: scan.char };
  } finally {
    hold.release();
  }
}

/** The cached entry for the file, or a claim on its one cold pass: a reader arriving while another scans it cold waits for that pass. */
async function holdEntry(handle: FileHandle, key: string, cache: CheckpointCache, signal: AbortSignal | undefined): Promise<Hold> {
  for (;;) {
    signal?.throwIfAborted();
    const id = await identify(handle);
    const cached = cache.get(key, id);
    if (cached?.total !== undefined) return { id, known: cached, entry: cached, release: warm };
    // No entry, or a partial one: the pass that counts on is claimed as a cold pass is, one at a time.
    const claim = cache.claimPass(key, id);
    if ("release" in claim) return { id, known: undefined, entry: cached ?? cache.create(id), release: claim.release };
    await untilAborted(claim.running, signal);
  }
}

function untilAborted(done: Promise<void>, signal: AbortSignal | undefined): Promise<void> {
  if (signal === undefined) return done;
  return new Promise<void>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    void done.then(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    });
  });
}
