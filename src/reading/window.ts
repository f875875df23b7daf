/**
 * Windowed reads of a file's decoded text by UTF-16 offset (SPEC §3.2), exact
 * character counts, and whole-file streaming into a TextSink, all in bounded
 * memory. The first pass over a file records checkpoints in the cache so later
 * windows decode only from the nearest one.
 */
import type { FileHandle } from "node:fs/promises";
import { isHigh, isLow, type TextSink, type TextWindow } from "../kernel/bounded.js";
import { checkInteger } from "../kernel/integers.js";
import { COUNT_BUDGET_BYTES, ORIGIN, scanCached } from "./cached-scan.js";
import type { CheckpointCache } from "./checkpoints.js";
import type { ReadOptions, RestartPoint, TextConsumer } from "./scan.js";

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
  // One character before the window tells whether offset is a low surrogate
  // (a restart point never is); one past limit+1 covers every end adjustment.
  const stopAt = offset + limit + 1;
  const hintLimit = offset + limit - 2;
  const pieces: string[] = [];
  let first = 0;
  let hint: RestartPoint | undefined;
  const pass = await scanCached(handle, key, cache, opts, (known) => {
    if (known?.total !== undefined && offset >= known.total) return undefined;
    const from = known?.nearest(offset) ?? ORIGIN;
    first = Math.max(from.char, offset - 1);
    const consumer: TextConsumer = {
      wants: (a, b) => b > first && a < stopAt,
      text(piece, at) {
        const a = Math.max(first, at) - at;
        const b = Math.min(stopAt, at + piece.length) - at;
        if (b > a) pieces.push(piece.slice(a, b));
      },
    };
    return {
      from,
      consumer,
      stop: (char) => char >= stopAt,
      countBytes: COUNT_BUDGET_BYTES,
      onRestart(point) {
        if (point.char <= hintLimit) hint = point;
      },
    };
  });
  const { total, countedBytes } = pass;
  // Counting stopped early only once the window was read (char >= stopAt > offset), so this is past the end.
  if (offset >= total) return { text: "", start: offset, end: offset, total };
  const text = pieces.join("");
  const at = (i: number): number => text.charCodeAt(i - first);
  let start = offset;
  if (start > first && isLow(at(start))) start -= 1;
  let end = Math.min(start + limit, total);
  if (end < total && isHigh(at(end - 1))) end = end - 1 > start ? end - 1 : start + 2;
  // The hint is at most limit-2 characters past offset, so it never passes end.
  if (hint !== undefined) pass.entry.hint = hint;
  return { text: text.slice(start - first, end - first), start, end, total, ...(countedBytes !== undefined && { countedBytes }) };
}

/**
 * The exact length in UTF-16 code units of the file's decoded text.
 * @throws on abort
 */
export async function countChars(handle: FileHandle, key: string, cache: CheckpointCache, opts: ReadOptions = {}): Promise<number> {
  return (await scanCached(handle, key, cache, opts, () => undefined)).total;
}

/**
 * Appends the file's whole decoded text to `sink`: decoded while the sink
 * keeps text, then only counted (from the cached total when there is one).
 * @throws on abort
 */
export async function streamInto(handle: FileHandle, key: string, cache: CheckpointCache, sink: TextSink, opts: ReadOptions = {}): Promise<void> {
  const consumer: TextConsumer = {
    wants: () => !sink.full,
    text: (piece) => sink.append(piece),
    skipped: (_bytes, _at, chars) => sink.appendCount(chars),
  };
  const pass = await scanCached(handle, key, cache, opts, (known) =>
    known !== undefined && sink.full ? undefined : { from: ORIGIN, consumer, stop: () => sink.full },
  );
  // A warm scan stops once the sink is full: the known total counts the rest.
  if (pass.known !== undefined && pass.scan?.complete !== true) sink.appendCount(Math.max(0, pass.total - (pass.scan?.char ?? 0)));
}
