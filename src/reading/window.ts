/**
 * Windowed reads of a file's decoded text by UTF-16 offset (SPEC §3.2), exact
 * character counts, and whole-file streaming into a TextSink, all in bounded
 * memory. The first pass over a file records checkpoints in the cache so later
 * windows decode only from the nearest one.
 */
import type { FileHandle } from "node:fs/promises";
import { isHigh, isLow, type TextSink, type TextWindow } from "../bounded.js";
import { checkInteger } from "../integers.js";
import { type CheckpointCache, type FileCheckpoints, type FileIdentity, identify, sameIdentity } from "./checkpoints.js";
import { type ReadOptions, type RestartPoint, type ScanParams, type ScanResult, type TextConsumer, scanText } from "./scan.js";


/** A cached entry (or a fresh one that a complete scan may store) and where to start decoding. */
export interface Plan {
  id: FileIdentity;
  known: FileCheckpoints | undefined;
  entry: FileCheckpoints;
  /** Ends this reader's claim on the cold pass (no-op when warm); `settle` calls it. */
  release: () => void;
}

const warm = (): void => {};

/**
 * The cached entry for the file, or a claim on its one cold pass: a reader
 * arriving while another scans the same file cold waits for that pass.
 * @throws the signal's reason when aborted while waiting
 */
export async function plan(handle: FileHandle, key: string, cache: CheckpointCache, opts: ReadOptions = {}): Promise<Plan> {
  for (;;) {
    opts.signal?.throwIfAborted();
    const id = await identify(handle);
    const known = cache.get(key, id);
    if (known !== undefined) return { id, known, entry: known, release: warm };
    const claim = cache.claimPass(key, id);
    if ("release" in claim) return { id, known: undefined, entry: cache.create(id), release: claim.release };
    await untilAborted(claim.running, opts.signal);
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

/**
 * Stores a fresh entry only if the file did not change while it was scanned;
 * drops a known one that turned stale meanwhile. Releases the plan's claim.
 */
export async function settle(handle: FileHandle, key: string, cache: CheckpointCache, p: Plan, scan: ScanResult): Promise<void> {
  try {
    const unchanged = sameIdentity(await identify(handle), p.id);
    if (p.known !== undefined) {
      if (!unchanged) cache.delete(key);
      return;
    }
    if (!scan.complete || !unchanged) return;
    p.entry.total = scan.char;
    p.entry.totalLines = scan.line;
    cache.store(key, p.entry);
  } finally {
    p.release();
  }
}

/** `scanText` for a plan: a failed scan releases the plan's claim. */
export function scanFor(p: Plan, handle: FileHandle, params: ScanParams, opts: ReadOptions): Promise<ScanResult> {
  return scanText(handle, params, opts).catch((error: unknown) => {
    p.release();
    throw error;
  });
}

/**
 * The window `[offset, offset+limit)` of the file's decoded text, never split
 * inside a surrogate pair, with the exact total length.
 * @throws when offset or limit is not a non-negative/positive integer, or on abort
 */
export async function readWindow(
  handle: FileHandle,
  key: string,
  offset: number,
  limit: number,
  cache: CheckpointCache,
  opts: ReadOptions = {},
): Promise<TextWindow> {
  checkInteger("offset", offset, 0);
  checkInteger("limit", limit, 1);
  const p = await plan(handle, key, cache, opts);
  const knownTotal = p.known?.total;
  if (knownTotal !== undefined && offset >= knownTotal) return { text: "", start: offset, end: offset, total: knownTotal };
  const from = p.known?.nearest(offset) ?? { byte: 0, char: 0, line: 0 };
  // One character before the window tells whether offset is a low surrogate
  // (a restart point never is); one past limit+1 covers every end adjustment.
  const first = Math.max(from.char, offset - 1);
  const stopAt = offset + limit + 1;
  const hintLimit = offset + limit - 2;
  const pieces: string[] = [];
  let hint: RestartPoint | undefined;
  const consumer: TextConsumer = {
    wants: (a, b) => b > first && a < stopAt,
    text(piece, at) {
      const a = Math.max(first, at) - at;
      const b = Math.min(stopAt, at + piece.length) - at;
      if (b > a) pieces.push(piece.slice(a, b));
    },
  };
  const scan = await scanFor(
    p,
    handle,
    {
      from,
      consumer,
      bytesTotal: Number(p.id.size),
      stop: p.known === undefined ? undefined : (char) => char >= stopAt,
      onRestart(point) {
        p.entry.add(point);
        if (point.char <= hintLimit) hint = point;
      },
    },
    opts,
  );
  await settle(handle, key, cache, p, scan);
  const total = knownTotal ?? scan.char;
  if (offset >= total) return { text: "", start: offset, end: offset, total };
  const text = pieces.join("");
  const at = (i: number): number => text.charCodeAt(i - first);
  let start = offset;
  if (start > first && isLow(at(start))) start -= 1;
  let end = Math.min(start + limit, total);
  if (end < total && isHigh(at(end - 1))) end = end - 1 > start ? end - 1 : start + 2;
  // The hint is at most limit-2 characters past offset, so it never passes end.
  if (hint !== undefined) p.entry.hint = hint;
  return { text: text.slice(start - first, end - first), start, end, total };
}

/**
 * The exact length in UTF-16 code units of the file's decoded text.
 * @throws on abort
 */
export async function countChars(handle: FileHandle, key: string, cache: CheckpointCache, opts: ReadOptions = {}): Promise<number> {
  const p = await plan(handle, key, cache, opts);
  if (p.known?.total !== undefined) return p.known.total;
  const scan = await scanFor(
    p,
    handle,
    { from: { byte: 0, char: 0, line: 0 }, bytesTotal: Number(p.id.size), onRestart: (point) => p.entry.add(point) },
    opts,
  );
  await settle(handle, key, cache, p, scan);
  return scan.char;
}

/**
 * Appends the file's whole decoded text to `sink`: decoded while the sink
 * keeps text, then only counted (from the cached total when there is one).
 * @throws on abort
 */
export async function streamInto(
  handle: FileHandle,
  key: string,
  cache: CheckpointCache,
  sink: TextSink,
  opts: ReadOptions = {},
): Promise<void> {
  const p = await plan(handle, key, cache, opts);
  const knownTotal = p.known?.total;
  if (knownTotal !== undefined && sink.full) {
    sink.appendCount(knownTotal);
    return;
  }
  const consumer: TextConsumer = {
    wants: () => !sink.full,
    text: (piece) => sink.append(piece),
    skipped: (_bytes, _at, chars) => sink.appendCount(chars),
  };
  const scan = await scanFor(
    p,
    handle,
    {
      from: { byte: 0, char: 0, line: 0 },
      consumer,
      bytesTotal: Number(p.id.size),
      stop: knownTotal === undefined ? undefined : () => sink.full,
      onRestart: (point) => p.entry.add(point),
    },
    opts,
  );
  if (knownTotal !== undefined && !scan.complete) sink.appendCount(Math.max(0, knownTotal - scan.char));
  await settle(handle, key, cache, p, scan);
}
