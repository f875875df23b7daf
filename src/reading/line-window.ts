/**
 * Line windows of read_text_file (SPEC §11): lines are split on "\n" bytes, as
 * a grep-like search numbers them. The window's first and last line are
 * located from the nearest checkpoint by line (counting, not decoding), then
 * read as a character window, so a deep line of a seen file is cheap.
 */
import type { FileHandle } from "node:fs/promises";
import type { ToolOutput } from "../bounded.js";
import { checkInteger } from "../integers.js";
import type { CheckpointCache } from "./checkpoints.js";
import { plan, readWindow, scanFor, settle } from "./window.js";
import type { ReadOptions, TextConsumer } from "./scan.js";
import { utf16Units } from "./utf8-count.js";

const LF = 0x0a;

/** Character offsets just after the k-th "\n" for each k of `feeds` (ascending; 0 is the start), and the text's length. */
export interface LineOffsets {
  /** One per requested k; undefined when the file has fewer than k line feeds. */
  offsets: (number | undefined)[];
  total: number;
}

/**
 * Where the lines after given numbers of line feeds start, in characters;
 * a cold file is scanned to its end so its checkpoints (with lines) are kept.
 * @throws on abort
 */
export async function lineOffsets(
  handle: FileHandle,
  key: string,
  feeds: readonly number[],
  cache: CheckpointCache,
  opts: ReadOptions = {},
): Promise<LineOffsets> {
  const offsets: (number | undefined)[] = feeds.map((k) => (k === 0 ? 0 : undefined));
  let next = offsets.findIndex((o) => o === undefined);
  if (next === -1) next = feeds.length;
  const p = await plan(handle, key, cache, opts);
  const from = p.known?.beforeLine(feeds[next] ?? 0) ?? { byte: 0, char: 0, line: 0 };
  let seen = from.line;
  const passFeed = (charAfter: number): void => {
    seen++;
    while (next < feeds.length && feeds[next] === seen) offsets[next++] = charAfter;
  };
  const consumer: TextConsumer = {
    wants: () => false,
    // Only invalid UTF-8 is decoded here; its "\n" characters are exactly its 0x0A bytes.
    text(piece, at) {
      for (let i = piece.indexOf("\n"); i !== -1 && next < feeds.length; i = piece.indexOf("\n", i + 1)) passFeed(at + i + 1);
    },
    skipped(bytes, at, _chars, lines) {
      if (next >= feeds.length) return;
      if (seen + lines < (feeds[next] ?? 0)) {
        seen += lines;
        return;
      }
      let counted = 0;
      let char = at;
      for (let i = bytes.indexOf(LF); i !== -1 && next < feeds.length; i = bytes.indexOf(LF, i + 1)) {
        char += utf16Units(bytes.subarray(counted, i + 1));
        counted = i + 1;
        passFeed(char);
      }
    },
  };
  const scan = await scanFor(
    p,
    handle,
    {
      from,
      consumer,
      bytesTotal: Number(p.id.size),
      stop: p.known === undefined ? undefined : () => next >= feeds.length,
      onRestart: (point) => p.entry.add(point),
    },
    opts,
  );
  await settle(handle, key, cache, p, scan);
  return { offsets, total: p.known?.total ?? scan.char };
}

/**
 * Lines `startLine` to `startLine + lineCount - 1` (terminators included), or
 * from `startLine` up to `cap` characters when `lineCount` is absent. Lines
 * that fit come back whole without a notice; a longer span, or one without
 * `lineCount`, is a paged window whose notice continues it. Empty past the end.
 * @throws when startLine, lineCount or cap is not an integer >= 1, or on abort
 */
export async function readLineWindow(
  handle: FileHandle,
  key: string,
  startLine: number,
  lineCount: number | undefined,
  cap: number,
  cache: CheckpointCache,
  opts: ReadOptions = {},
): Promise<ToolOutput> {
  checkInteger("startLine", startLine, 1);
  if (lineCount !== undefined) checkInteger("lineCount", lineCount, 1);
  checkInteger("cap", cap, 1);
  const feeds = lineCount === undefined ? [startLine - 1] : [startLine - 1, startLine - 1 + lineCount];
  const { offsets, total } = await lineOffsets(handle, key, feeds, cache, opts);
  const start = offsets[0];
  if (start === undefined || start >= total) return { window: { text: "", start: total, end: total, total } };
  const end = lineCount === undefined ? total : (offsets[1] ?? total);
  if (lineCount !== undefined && end - start <= cap) {
    const whole = await readWindow(handle, key, start, end - start, cache, opts);
    return { content: [{ type: "text", text: whole.text }] };
  }
  return { window: await readWindow(handle, key, start, cap, cache, opts) };
}
