/**
 * Streaming head/tail (SPEC §3.2, §7): the same text as upstream's headFile
 * and tailFile, written into a TextSink while holding one chunk at a time.
 */
import type { FileHandle } from "node:fs/promises";
import { formatCount, type TextSink } from "../kernel/bounded.js";
import { checkInteger } from "../kernel/integers.js";
import { type ReadOptions, type TextConsumer, chunkSizeOf, progressReporter, scanText, utf16Length } from "./scan.js";
import { readAt } from "../kernel/read-at.js";
import { COUNT_BUDGET_BYTES } from "./cached-scan.js";

const LF = 0x0a;
const CR = 0x0d;

/**
 * Appends the first `lines` lines of the file (split on "\n", "\r" kept,
 * joined with "\n", a final newline adding no empty line), as upstream headFile.
 * @throws when lines is not a non-negative integer, or on abort
 */
export async function headInto(handle: FileHandle, lines: number, sink: TextSink, opts: ReadOptions = {}): Promise<void> {
  checkInteger("lines", lines, 0);
  if (lines === 0) return;
  let remaining = lines;
  let done = false;
  // A newline is held back until more text follows, because a file's final
  // newline ends the last line rather than starting an empty one.
  let heldNewline = false;
  const finish = (before: string | number): void => {
    const held = heldNewline ? 1 : 0;
    heldNewline = false;
    done = true;
    if (typeof before === "number") sink.appendCount(held + before);
    else sink.append(held === 1 ? `\n${before}` : before);
  };
  const consumer: TextConsumer = {
    wants: () => !done && !sink.full,
    text(piece) {
      if (done) return;
      for (let i = piece.indexOf("\n"); i !== -1; i = piece.indexOf("\n", i + 1)) {
        if (--remaining === 0) return finish(piece.slice(0, i));
      }
      const held = heldNewline ? "\n" : "";
      heldNewline = piece.endsWith("\n");
      sink.append(held + (heldNewline ? piece.slice(0, -1) : piece));
    },
    skipped(bytes, _at, chars) {
      if (done) return;
      for (let i = bytes.indexOf(LF); i !== -1; i = bytes.indexOf(LF, i + 1)) {
        if (--remaining === 0) return finish(utf16Length(bytes.subarray(0, i)));
      }
      const held = heldNewline ? 1 : 0;
      heldNewline = bytes[bytes.length - 1] === LF;
      sink.appendCount(held + chars - (heldNewline ? 1 : 0));
    },
  };
  const size = Number((await handle.stat()).size);
  // Once the cap is full, the rest of the lines is only counted for the total, and only up to the budget (issue 28 row 10).
  let countedBytes: number | undefined;
  const stop = (_char: number, byte: number): boolean => {
    if (done) return true;
    if (!sink.full || byte < COUNT_BUDGET_BYTES) return false;
    countedBytes = byte;
    return true;
  };
  await scanText(handle, { from: { byte: 0, char: 0, line: 0 }, consumer, stop, bytesTotal: size }, opts);
  if (countedBytes !== undefined) sink.stoppedCounting(countedBytes);
}

/** A tail the server will not look for, as a value; `tailRefusalMessage` words it. */
interface TailRefusal {
  kind: "tailTooLong";
  lines: number;
  /** Line feeds found in the bytes read back from the end. */
  found: number;
  readBytes: number;
}

function tailRefusalMessage(r: TailRefusal): string {
  return (
    `tail=${r.lines}: the last ${formatCount(r.lines)} lines of this file are longer than the ${formatCount(r.readBytes / 2 ** 20)} MiB ` +
    `read back from its end (${formatCount(r.found)} line break${r.found === 1 ? "" : "s"} found there); nothing is returned. ` +
    "Ask for fewer lines, or read by startLine and lineCount, or by offset and limit."
  );
}

/** The error carrying a TailRefusal. */
class TailRefusalError extends Error {
  constructor(readonly refusal: TailRefusal) {
    super(tailRefusalMessage(refusal));
  }
}

/** Byte position just after the `lines`-th newline from the end, or 0; reads backwards one chunk at a time. */
async function tailStart(handle: FileHandle, size: number, lines: number, opts: ReadOptions, report: (bytesDone: number) => void): Promise<number> {
  const chunkSize = chunkSizeOf(opts);
  const buffer = Buffer.allocUnsafe(chunkSize);
  let found = 0;
  let pos = size;
  while (pos > 0) {
    opts.signal?.throwIfAborted();
    const want = Math.min(chunkSize, pos);
    pos -= want;
    const got = (await readAt(handle, pos, want, buffer)).length;
    // 0x0A is never part of a multi-byte sequence, so each one is a "\n" of the text.
    for (let i = got - 1; i >= 0; i--) {
      i = buffer.lastIndexOf(LF, i);
      if (i === -1 || i >= got) break;
      if (++found === lines) return pos + i + 1;
    }
    report(size - pos);
    // The lines' start is not looked for past the budget: a file of any size answers (or refuses) at once.
    if (pos > 0 && size - pos >= COUNT_BUDGET_BYTES) throw new TailRefusalError({ kind: "tailTooLong", lines, found, readBytes: size - pos });
  }
  return 0;
}

/**
 * Appends the last `lines` lines of the file with CRLF normalized to LF, a
 * trailing newline counting as an empty last line, as upstream tailFile;
 * nothing for an empty file.
 * @throws when lines is not a non-negative integer, or on abort
 */
export async function tailInto(handle: FileHandle, lines: number, sink: TextSink, opts: ReadOptions = {}): Promise<void> {
  checkInteger("lines", lines, 0);
  const size = Number((await handle.stat()).size);
  if (lines === 0 || size === 0) return;
  const report = progressReporter(opts, size);
  const start = await tailStart(handle, size, lines, opts, report);
  const scanned = size - start;
  // A "\r" at the end of a piece is held until the next piece shows whether a "\n" follows.
  let heldCR = false;
  const consumer: TextConsumer = {
    wants: () => !sink.full,
    text(piece) {
      let text = heldCR ? `\r${piece}` : piece;
      heldCR = text.endsWith("\r");
      if (heldCR) text = text.slice(0, -1);
      sink.append(text.replaceAll("\r\n", "\n"));
    },
    skipped(bytes, _at, chars) {
      let count = chars + (heldCR ? 1 : 0);
      for (let i = bytes.indexOf(LF); i !== -1; i = bytes.indexOf(LF, i + 1)) {
        if (i > 0 ? bytes[i - 1] === CR : heldCR) count--;
      }
      heldCR = bytes[bytes.length - 1] === CR;
      sink.appendCount(heldCR ? count - 1 : count);
    },
  };
  const forward: ReadOptions = {
    ...opts,
    onProgress: opts.onProgress && ((done: number) => opts.onProgress?.(scanned + done - start, 2 * scanned)),
  };
  await scanText(handle, { from: { byte: start, char: 0, line: 0 }, consumer, bytesTotal: size }, forward);
  if (heldCR) sink.append("\r");
}
