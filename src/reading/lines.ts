/**
 * Streaming head/tail (SPEC §3.2, §7): the same text as upstream's headFile
 * and tailFile, written into a TextSink while holding one chunk at a time.
 */
import type { FileHandle } from "node:fs/promises";
import type { TextSink } from "../kernel/bounded.js";
import { checkInteger } from "../kernel/integers.js";
import { type ReadOptions, type TextConsumer, chunkSizeOf, progressReporter, scanText, utf16Length } from "./scan.js";
import { readAt } from "../kernel/read-at.js";

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
  await scanText(handle, { from: { byte: 0, char: 0, line: 0 }, consumer, stop: () => done, bytesTotal: size }, opts);
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
