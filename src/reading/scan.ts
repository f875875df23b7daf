/**
 * The one streaming UTF-8 decode loop behind paged reads, counts, head and
 * tail (SPEC §3.2): it yields exactly the text `fs.readFile(path, "utf8")`
 * gives, one read chunk at a time, and reports the restart points it passes.
 */
import { isUtf8 } from "node:buffer";
import type { FileHandle } from "node:fs/promises";
import { TextDecoder } from "node:util";
import { checkInteger } from "../kernel/integers.js";
import { acquireCountingBuffer, type CountingBuffer, releaseCountingBuffer, utf16Units } from "./utf8-count.js";

/** Options every streaming reader takes. */
export interface ReadOptions {
  /** Checked between chunks; an aborted signal throws its reason. */
  signal?: AbortSignal;
  /** Called every few MiB with the byte position reached and the file's size in bytes. */
  onProgress?: (bytesDone: number, bytesTotal: number) => void;
  /** Bytes per read. @default 262144 */
  chunkSize?: number;
}

/** Bytes per read when `ReadOptions.chunkSize` is not given. */
const DEFAULT_CHUNK_SIZE = 256 * 1024;

const PROGRESS_EVERY_BYTES = 4 * 1024 * 1024;

/**
 * A byte position whose byte is not a UTF-8 continuation byte, with the number
 * of characters the bytes before it decode to and of line feeds among them. A
 * fresh decoder started there produces the same text as one that decoded
 * everything before: the byte ends any pending sequence as end-of-input would.
 */
export interface RestartPoint {
  byte: number;
  char: number;
  line: number;
}

/** Receives the decoded text of a scan. */
export interface TextConsumer {
  /** Whether characters `[from, to)` are needed as text; when not, valid UTF-8 is counted, not decoded. */
  wants(from: number, to: number): boolean;
  /** Decoded text starting at character `at`; may also be called for text not wanted. */
  text(piece: string, at: number): void;
  /** An undecoded run of valid UTF-8 starting at character `at`: `chars` characters, `lines` of them "\n". */
  skipped?(bytes: Buffer, at: number, chars: number, lines: number): void;
}

/** What to scan and whom to tell. */
export interface ScanParams {
  /** Where decoding starts. */
  from: RestartPoint;
  consumer?: TextConsumer;
  /** Checked after each chunk with the characters emitted and the bytes read so far; true ends the scan early. */
  stop?: (char: number, byte: number) => boolean;
  /** Told about each chunk's first restart point. */
  onRestart?: (point: RestartPoint) => void;
  /** The file's size, passed to `onProgress`. */
  bytesTotal: number;
}

/** Where a scan stopped (with the line feeds passed); `complete` when it reached the end of the file. */
export interface ScanResult {
  byte: number;
  char: number;
  line: number;
  complete: boolean;
}

const isContinuation = (b: number): boolean => b >= 0x80 && b <= 0xbf;

/** The UTF-16 length of valid UTF-8 `bytes`: one unit per sequence, two for 4-byte ones. */
export function utf16Length(bytes: Buffer): number {
  return utf16Units(bytes);
}

// Length of the longest prefix of `bytes` (which starts at a restart point)
// that is complete valid UTF-8 ending at a restart point or at the end; 0 if
// none is found cheaply. A sequence is at most 4 bytes, hence the short look back.
function validPrefix(bytes: Buffer): number {
  if (isUtf8(bytes)) return bytes.length;
  for (let i = bytes.length - 1; i >= Math.max(1, bytes.length - 4); i--) {
    if (!isContinuation(bytes[i] ?? 0)) return isUtf8(bytes.subarray(0, i)) ? i : 0;
  }
  return 0;
}

/** A decoder that keeps a BOM and replaces invalid bytes as `Buffer#toString("utf8")` does. */
function newDecoder(): TextDecoder {
  return new TextDecoder("utf-8", { ignoreBOM: true });
}

/**
 * `opts.chunkSize` or the default.
 * @throws when chunkSize is not a positive integer
 */
export function chunkSizeOf(opts: ReadOptions): number {
  return checkInteger("chunkSize", opts.chunkSize ?? DEFAULT_CHUNK_SIZE, 1);
}

/** Calls `onProgress` each time another few MiB have been read. */
export function progressReporter(opts: ReadOptions, bytesTotal: number): (bytesDone: number) => void {
  let next = PROGRESS_EVERY_BYTES;
  return (bytesDone) => {
    if (opts.onProgress === undefined || bytesDone < next) return;
    opts.onProgress(bytesDone, bytesTotal);
    next = bytesDone + PROGRESS_EVERY_BYTES;
  };
}

/**
 * Decodes the file from `params.from` to its end (or until `params.stop` says so),
 * holding one chunk at a time.
 * @throws the signal's reason when aborted
 */
export async function scanText(handle: FileHandle, params: ScanParams, opts: ReadOptions = {}): Promise<ScanResult> {
  const counter = acquireCountingBuffer(chunkSizeOf(opts));
  try {
    return await scanWith(counter, handle, params, opts);
  } finally {
    releaseCountingBuffer(counter);
  }
}

async function scanWith(counter: CountingBuffer, handle: FileHandle, params: ScanParams, opts: ReadOptions): Promise<ScanResult> {
  const chunkSize = counter.bytes.length;
  const buffer = counter.bytes;
  const decoder = newDecoder();
  const { consumer } = params;
  const report = progressReporter(opts, params.bytesTotal);
  let { byte, char, line } = params.from;
  const emit = (piece: string): void => {
    if (piece.length === 0) return;
    consumer?.text(piece, char);
    char += piece.length;
  };
  for (;;) {
    opts.signal?.throwIfAborted();
    const { bytesRead } = await handle.read(buffer, 0, chunkSize, byte);
    if (bytesRead === 0) break;
    const chunk = buffer.subarray(0, bytesRead);
    let first = 0;
    while (first < chunk.length && isContinuation(chunk[first] ?? 0)) first++;
    if (first > 0) emit(decoder.decode(chunk.subarray(0, first), { stream: true }));
    if (first < chunk.length) {
      // Flushing here is output-neutral (see RestartPoint) and leaves a fresh
      // decoder, so the position is a restart point and valid text after it
      // can be counted instead of decoded.
      emit(decoder.decode());
      params.onRestart?.({ byte: byte + first, char, line });
      let rest = chunk.subarray(first);
      if (!(consumer?.wants(char, char + rest.length) ?? false)) {
        const valid = rest.subarray(0, validPrefix(rest));
        if (valid.length > 0) {
          const counts = counter.count(first, first + valid.length);
          consumer?.skipped?.(valid, char, counts.units, counts.lines);
          char += counts.units;
          line += counts.lines;
          rest = rest.subarray(valid.length);
        }
      }
      // Continuation bytes before `first` are never 0x0A, so only `rest` can hold line feeds.
      line += counter.count(chunk.length - rest.length, chunk.length).lines;
      emit(decoder.decode(rest, { stream: true }));
    }
    byte += bytesRead;
    report(byte);
    if (params.stop?.(char, byte) === true) return { byte, char, line, complete: false };
  }
  emit(decoder.decode());
  return { byte, char, line, complete: true };
}
