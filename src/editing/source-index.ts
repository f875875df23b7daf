/**
 * The edited file seen as its CRLF→LF-normalized UTF-8 bytes, read in blocks on demand: one
 * validating pass records where each block starts (raw offset, normalized offset, line), so any
 * normalized range, raw offset or line number is found later by re-reading one or two blocks.
 */
import { isUtf8 } from "node:buffer";
import { utf16Order, utf16Text } from "../kernel/binary.js";
import { formatCount } from "../kernel/bounded.js";
import { escapeControls, type Shown } from "../kernel/escape.js";
import { countLineFeeds } from "../reading/index.js";
import { completePrefix, firstInvalidUtf8 } from "../kernel/utf8.js";
import { countLines, normalizeInto } from "./bytes.js";

/** A file that can be read again at any position (the engine never holds it whole). */
export interface ByteSource {
  readonly size: number;
  /** `into`: a buffer the source may read into and return a view of (valid until the caller reuses it). */
  read(position: number, length: number, into?: Buffer): Promise<Buffer>;
}

/** One block of the file: its raw bytes normalized, and where its CRLFs were. */
export interface NormBlock {
  readonly index: number;
  readonly rawStart: number;
  readonly normStart: number;
  readonly lineStart: number;
  readonly norm: Buffer;
  /** Block-local normalized offsets of the "\n"s that were "\r\n". */
  readonly crlf: ArrayLike<number>;
}

const CR = 0x0d;
const LF = 0x0a;

/** Options of SourceIndex.build. */
export interface IndexOptions {
  /** Raw bytes per block. @default 65536 */
  blockBytes?: number;
  /** Bytes of normalized blocks kept for random access. @default 2 MiB */
  cacheBytes?: number;
  signal?: AbortSignal;
  /** Names the file in errors, as shown. */
  path?: Shown;
}

/** The number of the sorted block-local CRLF offsets below `local` (a replaceAll asks per range). */
function crlfBefore(crlf: ArrayLike<number>, local: number): number {
  let lo = 0;
  let hi = crlf.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((crlf[mid] ?? 0) < local) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Throws the signal's reason when it has aborted. */
export function checkAbort(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw signal.reason instanceof Error ? signal.reason : new Error("Edit cancelled");
}

// The first pass reads this many blocks at a time (2 MiB at the default block size), the next piece
// while the one before is worked on: a read per 64 KiB block cost a thread-pool round trip each, with
// the engine idle meanwhile.
const BLOCKS_PER_READ = 32;

/**
 * Views of the source's bytes at increasing positions, read in large pieces with the next one read ahead.
 * One read is in flight at a time, so the reads reach the source in order (a rewrite's digest follows it).
 */
class AheadReader {
  private readonly buffers: [Buffer, Buffer];
  private readonly reserve: number;
  private readonly pieceBytes: number;
  private cur: Buffer = Buffer.alloc(0);
  private curStart = 0;
  private turn = 0;
  private ahead: { start: number; read: Promise<Buffer> } | undefined;

  constructor(
    private readonly source: ByteSource,
    blockBytes: number,
    private readonly changed: () => Error,
  ) {
    // Room before each piece for the part of a block the piece before ended in.
    this.reserve = 2 * blockBytes + 2;
    this.pieceBytes = BLOCKS_PER_READ * blockBytes;
    this.buffers = [Buffer.allocUnsafe(this.reserve + this.pieceBytes), Buffer.allocUnsafe(this.reserve + this.pieceBytes)];
  }

  /** Source bytes [from, from + length), `from` never below an earlier call's; valid until the next call. */
  async view(from: number, length: number): Promise<Buffer> {
    while (this.curStart + this.cur.length < from + length) {
      const end = this.curStart + this.cur.length;
      const keep = this.cur.subarray(from - this.curStart);
      const target = this.buffers[this.turn] as Buffer;
      const data = await (this.ahead?.start === end ? this.ahead.read : this.read(end, target));
      this.ahead = undefined;
      if (keep.length <= this.reserve) {
        keep.copy(target, this.reserve - keep.length);
        this.cur = target.subarray(this.reserve - keep.length, this.reserve + data.length);
      } else {
        // A block that grew past the reserve (a long run of CRs): joined afresh.
        this.cur = Buffer.concat([keep, data]);
      }
      this.curStart = from;
      this.turn = 1 - this.turn;
      const next = this.curStart + this.cur.length;
      if (next < this.source.size) this.ahead = { start: next, read: this.read(next, this.buffers[this.turn] as Buffer) };
    }
    return this.cur.subarray(from - this.curStart, from - this.curStart + length);
  }

  /** Reads the piece at `start` into `target` after its reserve; the promise always settles handled. */
  private read(start: number, target: Buffer): Promise<Buffer> {
    const length = Math.min(this.pieceBytes, this.source.size - start);
    const into = target.subarray(this.reserve, this.reserve + length);
    const read = this.source.read(start, length, into).then((got) => {
      if (got.length !== length) throw this.changed();
      if (got.buffer !== into.buffer || got.byteOffset !== into.byteOffset) got.copy(into);
      return into;
    });
    // Left unawaited when the pass stops early (an error, a cancellation): never an unhandled rejection.
    read.catch(() => undefined);
    return read;
  }
}

/** Random access to the normalized text of a validated UTF-8 source. */
export class SourceIndex {
  private readonly rawStarts: number[] = [];
  private readonly normStarts: number[] = [];
  private readonly lineStarts: number[] = [];
  private readonly cache = new Map<number, NormBlock & { slot: Buffer }>();
  private scratch: Buffer | undefined;

  /** A slot for one more cached block: a new one while the cache has room, else the least recently used one's. */
  private freeSlot(): Buffer {
    const slots = Math.max(4, Math.floor(this.opts.cacheBytes / (this.opts.blockBytes + 1)));
    if (this.cache.size < slots) return Buffer.allocUnsafe(this.opts.blockBytes + 1);
    const [key, old] = this.cache.entries().next().value as [number, { slot: Buffer }];
    this.cache.delete(key);
    return old.slot;
  }
  /** Normalized length of the whole file. */
  normSize = 0;
  /** "\r\n" or "\n": the ending of the file's last line break, LF when it has none. */
  lastEnding = "\n";

  private constructor(
    readonly source: ByteSource,
    private readonly opts: Required<Omit<IndexOptions, "signal">> & { signal?: AbortSignal },
  ) {}

  /**
   * Reads the whole source once, validating UTF-8 as it streams, and hands each block to `visit`.
   * @throws when the file is not valid UTF-8, changes size, or the signal aborts
   */
  static async build(source: ByteSource, options: IndexOptions, visit: (block: NormBlock) => void | Promise<void>): Promise<SourceIndex> {
    const opts = {
      blockBytes: options.blockBytes ?? 65536,
      // A replaceAll's diff and write load a block per replacement: 2 MiB of slots holds what one edit's
      // windows and diff revisit, and is all those loads ever occupy.
      cacheBytes: options.cacheBytes ?? 2 * 1024 * 1024,
      path: options.path ?? escapeControls("file"),
      signal: options.signal,
    };
    const index = new SourceIndex(source, opts);
    const reader = new AheadReader(source, opts.blockBytes, () => index.changed());
    let raw = 0;
    let norm = 0;
    let line = 0;
    let carry = Buffer.alloc(0);
    while (raw < source.size) {
      checkAbort(opts.signal);
      let take = Math.min(opts.blockBytes, source.size - raw);
      let got = await reader.view(raw, take);
      // A block never ends on a CR (so never inside a CRLF): it takes the bytes after one, one at a time.
      while (got[take - 1] === CR && raw + take < source.size) got = await reader.view(raw, ++take);
      const bytes = got;
      const joined = carry.length === 0 ? bytes : Buffer.concat([carry, bytes]);
      const whole = raw + take === source.size ? joined.length : completePrefix(joined);
      if (!isUtf8(joined.subarray(0, whole))) {
        const at = firstInvalidUtf8(joined.subarray(0, whole));
        throw index.notUtf8(raw - carry.length + at, line + countLines(joined, 0, at) + 1, raw === 0 ? utf16Order(joined) : undefined);
      }
      carry = Buffer.from(joined.subarray(whole));
      // In place: `joined`, the only other view of these bytes, was validated above.
      const { norm: text, crlf } = normalizeInto(bytes, bytes);
      const block: NormBlock = { index: index.rawStarts.length, rawStart: raw, normStart: norm, lineStart: line, norm: text, crlf };
      index.rawStarts.push(raw);
      index.normStarts.push(norm);
      index.lineStarts.push(line);
      const lastLf = text.lastIndexOf(LF);
      if (lastLf !== -1) index.lastEnding = crlf[crlf.length - 1] === lastLf ? "\r\n" : "\n";
      raw += take;
      norm += text.length;
      line += countLineFeeds(text);
      await visit(block);
    }
    if (carry.length > 0) throw index.notUtf8(raw - carry.length, line + 1);
    index.rawStarts.push(raw);
    index.normStarts.push(norm);
    index.lineStarts.push(line);
    index.normSize = norm;
    return index;
  }

  /** The error for a file that changed while it was being edited. */
  changed(): Error {
    return new Error(`File changed during edit: ${this.opts.path}; no changes were written. Read it again and retry.`);
  }

  // A file that begins with a UTF-16 byte order mark is named as UTF-16 (`order`), not by its first invalid byte.
  private notUtf8(at: number, line: number, order?: "LE" | "BE"): Error {
    const what =
      order === undefined
        ? `it is not valid UTF-8 text (invalid bytes on line ${formatCount(line)}, at byte offset ${formatCount(at)})`
        : `it is ${utf16Text(order)}, not UTF-8`;
    return new Error(`Cannot edit ${this.opts.path}: ${what}, and rewriting it would replace its undecodable bytes.`);
  }

  /** Number of blocks. */
  get blockCount(): number {
    return this.rawStarts.length - 1;
  }

  /** Index of the block holding normalized offset `n` (the last block for n = normSize). */
  blockAt(n: number): number {
    let lo = 0;
    let hi = this.blockCount - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((this.normStarts[mid] ?? 0) <= n) lo = mid;
      else hi = mid - 1;
    }
    return Math.max(0, lo);
  }

  /**
   * Block `i` read again (kept in the cache unless `cache` is false); its bytes are valid until the next
   * uncached read (uncached) or until the cache evicts it, so keep a copy of what must outlive that.
   * @throws when the file changed
   */
  async block(i: number, cache = true): Promise<NormBlock> {
    const hit = this.cache.get(i);
    if (hit !== undefined) {
      this.cache.delete(i);
      this.cache.set(i, hit);
      return hit;
    }
    checkAbort(this.opts.signal);
    const rawStart = this.rawStarts[i] ?? 0;
    const length = (this.rawStarts[i + 1] ?? rawStart) - rawStart;
    // Blocks live in fixed slots (the cache's, reused as it evicts, or the one scratch slot of an
    // uncached read): a fresh buffer per block read left the allocator fragmented, and a replaceAll
    // reads a block per replacement.
    // A block past the usual size (one that ends in a run of CRs) gets a buffer of its own.
    const oversized = length > this.opts.blockBytes + 1 ? Buffer.allocUnsafe(length) : undefined;
    const slot = oversized ?? (cache ? this.freeSlot() : (this.scratch ??= Buffer.allocUnsafe(this.opts.blockBytes + 1)));
    const raw = await this.source.read(rawStart, length, slot);
    const { norm, crlf } = normalizeInto(raw, slot);
    const normStart = this.normStarts[i] ?? 0;
    if (raw.length !== length || norm.length !== (this.normStarts[i + 1] ?? 0) - normStart) throw this.changed();
    const block: NormBlock = { index: i, rawStart, normStart, lineStart: this.lineStarts[i] ?? 0, norm, crlf };
    if (cache) this.cache.set(i, { ...block, slot });
    return block;
  }

  /** Number of line breaks in the file (its last line is number lineCount). */
  get lineCount(): number {
    return this.lineStarts[this.lineStarts.length - 1] ?? 0;
  }

  /** Normalized offset where zero-based line `line` starts (normSize past the last line). */
  async offsetOfLine(line: number): Promise<number> {
    if (line <= 0) return 0;
    if (line > this.lineCount) return this.normSize;
    // The block holding the line-th line break: the last one with fewer line breaks before it.
    let lo = 0;
    let hi = this.blockCount - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((this.lineStarts[mid] ?? 0) < line) lo = mid;
      else hi = mid - 1;
    }
    const b = await this.block(lo);
    let at = -1;
    for (let k = line - b.lineStart; k > 0; k--) at = b.norm.indexOf(LF, at + 1);
    return b.normStart + at + 1;
  }

  /** Normalized bytes [from, to). */
  async range(from: number, to: number): Promise<Buffer> {
    // Copied out block by block as it is read: a block's slot is reused when the cache evicts it,
    // which a range longer than the cache makes happen within this very loop.
    const out = Buffer.allocUnsafe(Math.max(0, Math.min(to, this.normSize) - from));
    let filled = 0;
    for (let i = this.blockAt(from); from < to && i < this.blockCount; i++) {
      const b = await this.block(i);
      const end = Math.min(to, b.normStart + b.norm.length);
      if (end > from) filled += b.norm.copy(out, filled, from - b.normStart, end - b.normStart);
      from = Math.max(from, end);
    }
    return out.subarray(0, filled);
  }

  /** Raw offset of normalized offset `n` (a CRLF's LF maps to its CR). */
  async rawOf(n: number): Promise<number> {
    if (n >= this.normSize) return this.source.size;
    const b = await this.block(this.blockAt(n));
    const local = n - b.normStart;
    return b.rawStart + local + crlfBefore(b.crlf, local);
  }

  // The last answers of lineOf and endingFrom: their callers ask in increasing order, often within one
  // block (or one long line), and counting from the block start each time made a replaceAll quadratic.
  private lastLine = { block: -1, n: 0, line: 0 };
  private endingMemo = { from: -1, to: -1, ending: "\n" };

  /** Zero-based line number of normalized offset `n`. */
  async lineOf(n: number): Promise<number> {
    const i = this.blockAt(n);
    const b = await this.block(i);
    const last = this.lastLine;
    const line =
      last.block === i && last.n <= n
        ? last.line + countLines(b.norm, last.n - b.normStart, n - b.normStart)
        : b.lineStart + countLines(b.norm, 0, n - b.normStart);
    this.lastLine = { block: i, n, line };
    return line;
  }

  /** The ending ("\r\n" or "\n") of the line holding `n`, or of the file's last line break when none follows. */
  async endingFrom(n: number): Promise<string> {
    const last = this.endingMemo;
    if (last.from <= n && n <= last.to) return last.ending;
    for (let i = this.blockAt(n); i < this.blockCount; i++) {
      // Cached: writeOut asks for each patch right after rawOf read its block, and a replaceAll has many.
      const b = await this.block(i);
      const at = b.norm.indexOf(LF, Math.max(0, n - b.normStart));
      if (at !== -1) {
        const ending = b.crlf[crlfBefore(b.crlf, at)] === at ? "\r\n" : "\n";
        this.endingMemo = { from: n, to: b.normStart + at, ending };
        return ending;
      }
    }
    this.endingMemo = { from: n, to: this.normSize, ending: this.lastEnding };
    return this.lastEnding;
  }

  /** Yields every block from the one holding `from` on, bypassing the cache. */
  async *blocksFrom(from: number): AsyncGenerator<NormBlock> {
    for (let i = this.blockAt(from); i < this.blockCount; i++) yield await this.block(i, false);
  }
}
