/**
 * Line windows of read_text_file (SPEC §11): lines are split on "\n" bytes, as
 * a grep-like search numbers them. One cached scan from the nearest checkpoint
 * by line counts line feeds (without decoding) up to the first line, then
 * keeps the text from there, so a deep line of a seen file is cheap and no
 * byte is read twice.
 */
import type { FileHandle } from "node:fs/promises";
import { isHigh, type ToolOutput } from "../kernel/bounded.js";
import { checkInteger } from "../kernel/integers.js";
import { COUNT_BUDGET_BYTES, ORIGIN, scanCached } from "./cached-scan.js";
import type { CheckpointCache } from "./checkpoints.js";
import type { ReadOptions, RestartPoint, TextConsumer } from "./scan.js";
import { utf16Units } from "./utf8-count.js";

const LF = 0x0a;

/**
 * The text of a line span as one scan passes it: where the line after `startFeeds` line feeds starts,
 * the characters from there (at most `want`), and where the line after `endFeeds` line feeds starts
 * when that lies among them.
 */
class LineSpan implements TextConsumer {
  /** Character offset of the span's first line; undefined until the scan reaches it. */
  start: number | undefined;
  /** Character offset just after the span's last line feed, once kept text holds it. */
  end: number | undefined;
  private seen = 0;
  private readonly pieces: string[] = [];
  private kept = 0;

  constructor(
    private readonly startFeeds: number,
    private readonly endFeeds: number | undefined,
    private readonly want: number,
  ) {
    if (startFeeds === 0) this.start = 0;
  }

  /** Starts counting at `from`, a restart point with fewer than `startFeeds` line feeds before it (or the origin). */
  begin(from: RestartPoint): void {
    this.seen = from.line;
  }

  /** True once nothing more of the file is needed. */
  get done(): boolean {
    return this.start !== undefined && (this.kept >= this.want || this.end !== undefined);
  }

  /** The text kept from `start`. */
  keptText(): string {
    return this.pieces.join("");
  }

  text(piece: string, at: number): void {
    if (this.done) return;
    let from = 0;
    if (this.start === undefined) {
      // Only invalid UTF-8 is decoded before the span; its "\n" characters are exactly its 0x0A bytes.
      let i = piece.indexOf("\n");
      while (i !== -1 && ++this.seen < this.startFeeds) i = piece.indexOf("\n", i + 1);
      if (i === -1) return;
      from = i + 1;
      this.start = at + from;
    }
    this.keep(from === 0 ? piece : piece.slice(from), at + from);
  }

  wants(): boolean {
    return this.start !== undefined && !this.done;
  }

  skipped(bytes: Buffer, at: number, _chars: number, lines: number): void {
    if (this.done) return;
    if (this.start !== undefined) {
      this.keep(bytes.toString("utf8"), at);
      return;
    }
    if (this.seen + lines < this.startFeeds) {
      this.seen += lines;
      return;
    }
    let i = -1;
    while (this.seen < this.startFeeds) {
      i = bytes.indexOf(LF, i + 1);
      this.seen++;
    }
    // The run is valid UTF-8 and the byte after a line feed starts a character, so its rest decodes exactly.
    this.start = at + utf16Units(bytes.subarray(0, i + 1));
    this.keep(bytes.toString("utf8", i + 1), this.start);
  }

  // Keeps `piece` (starting at character `at`) up to `want` characters, ending at the span's last line feed.
  private keep(piece: string, at: number): void {
    let part = piece.length <= this.want - this.kept ? piece : piece.slice(0, this.want - this.kept);
    if (this.endFeeds !== undefined) {
      for (let i = part.indexOf("\n"); i !== -1; i = part.indexOf("\n", i + 1)) {
        if (++this.seen < this.endFeeds) continue;
        this.end = at + i + 1;
        part = part.slice(0, i + 1);
        break;
      }
    }
    this.pieces.push(part);
    this.kept += part.length;
  }
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
  // One character past the cap tells whether the window's last one is the first half of a pair.
  const span = new LineSpan(startLine - 1, lineCount === undefined ? undefined : startLine - 1 + lineCount, cap + 1);
  const passed: RestartPoint[] = [];
  const { total, entry, countedBytes } = await scanCached(handle, key, cache, opts, (known) => {
    const from = known?.beforeLine(startLine - 1) ?? ORIGIN;
    span.begin(from);
    return {
      from,
      consumer: span,
      stop: () => span.done,
      countBytes: COUNT_BUDGET_BYTES,
      // The hint is the last of these not past the window's end: the one at or before the span's start, and those after it within the cap.
      onRestart(point) {
        if (span.start === undefined) passed.length = 0;
        if (span.start === undefined || point.char <= span.start + cap) passed.push(point);
      },
    };
  });
  const { start } = span;
  if (start === undefined || start >= total) return { window: { text: "", start: total, end: total, total } };
  const text = span.keptText();
  const spanEnd = lineCount === undefined ? undefined : (span.end ?? (span.done ? undefined : total));
  const whole = spanEnd !== undefined && spanEnd - start <= cap;
  // As readWindow: a window that would end between the halves of a pair ends before it, or after it when it would be empty.
  let end = whole ? spanEnd : Math.min(start + cap, total);
  if (!whole && end < total && isHigh(text.charCodeAt(end - 1 - start))) end = end - 1 > start ? end - 1 : start + 2;
  // As readWindow: the last restart point at most two characters short of the read's limit, so reading on from `end` starts there.
  const hintLimit = start + (whole ? spanEnd - start : cap) - 2;
  const hint = passed.filter((point) => point.char <= hintLimit).pop();
  if (hint !== undefined) entry.hint = hint;
  const shown = text.slice(0, end - start);
  if (whole) return { content: [{ type: "text", text: shown }] };
  return { window: { text: shown, start, end, total, ...(countedBytes !== undefined && { countedBytes }) } };
}
