/**
 * Streams one file through a query (SPEC §10): binary check on the first
 * 8 KiB, then region by region of whole lines (region-search.ts matches and
 * shows them), holding one chunk plus the context lines; a line longer than
 * the buffer may grow is searched in overlapping pieces.
 */
import { BINARY_PROBE_BYTES, looksBinary } from "../kernel/binary.js";
import type { Query } from "./query.js";
import { RegionSearch, type FileMatches, type FileRequest } from "./region-search.js";

/** Reads up to `length` bytes at `position` into `buf` at `offset`; 0 at end of file. */
export type ReadAt = (buf: Buffer, offset: number, length: number, position: number) => Promise<number> | number;

/** Reads from `bytes` (a file already in memory) as positioned reads of the file would. */
export const memoryReader =
  (bytes: Buffer): ReadAt =>
  (buf, offset, length, position) =>
    bytes.copy(buf, offset, Math.min(position, bytes.length), Math.min(position + length, bytes.length));

/** Tuning and control of a scan. */
export interface ScanOptions {
  signal?: AbortSignal;
  /** Called after each chunk with the bytes read so far. */
  onProgress?: (bytesDone: number) => void;
  /** @default 262144 */
  chunkSize?: number;
  /** A line longer than this is matched piece by piece (pieces overlap: a literal's by more than itself, a regex's by half a piece). @default 16777216 */
  maxLineBytes?: number;
  /** The longest stretch of whole lines a regex views as one string (line-windows.ts; tests make it small). @default 65536 */
  viewBytes?: number;
  /** Buffers to reuse from file to file: fresh ones per file kept a worker's memory high until a collection. */
  scratch?: Scratch;
}

/** The buffers a scan reuses from file to file. */
export interface Scratch {
  /** BINARY_PROBE_BYTES long. */
  probe: Buffer;
  /** `chunkSize` long. */
  chunk: Buffer;
  /**
   * The largest buffer a line longer than the chunk has grown into so far, up to LARGE_KEPT bytes: the next such line
   * grows into it at once. Over installed packages (minified sources), a fresh one per line, doubled up to the line,
   * was a fifth of a regex count's worker time: the copies, and the kernel faulting in new memory for each read.
   */
  large?: Buffer;
}

/** The largest buffer a scan keeps for the next over-long line (see Scratch.large). */
export const LARGE_KEPT = 4 * 1024 * 1024;

/** What one file's scan found. */
export interface FileScan extends FileMatches {
  binary: boolean;
  bytes: number;
}

/** Bytes read at a time. */
export const DEFAULT_CHUNK = 256 * 1024;
const DEFAULT_PIECE = 16 * 1024 * 1024;

/** The chunk a scan reads at a time under `opts`. */
const chunkSizeOf = (opts: Pick<ScanOptions, "chunkSize">): number => Math.max(opts.chunkSize ?? DEFAULT_CHUNK, 16);

/** The longest line a regex is run over whole under `opts` (longer lines are read piece by piece). */
const pieceSizeOf = (opts: Pick<ScanOptions, "chunkSize" | "maxLineBytes">): number =>
  Math.max(opts.maxLineBytes ?? DEFAULT_PIECE, chunkSizeOf(opts));

const LF = 10;
const OVERLAP = 1024;
/** Bytes of a regex piece's overlap kept before the next piece's own match starts (see scanFile). */
const CONTEXT = 1024;

const NOTHING: FileScan = {
  binary: false,
  matchingLines: 0,
  occurrences: 0,
  skipped: 0,
  shown: 0,
  exhausted: false,
  text: "",
  bytes: 0,
};

/** The first bytes of the file, up to BINARY_PROBE_BYTES. */
async function probe(read: ReadAt, reuse: Buffer | undefined): Promise<Buffer> {
  const head =
    reuse !== undefined && reuse.length >= BINARY_PROBE_BYTES ? reuse.subarray(0, BINARY_PROBE_BYTES) : Buffer.allocUnsafe(BINARY_PROBE_BYTES);
  let length = 0;
  for (let n = -1; n !== 0 && length < head.length; length += n) n = await read(head, length, head.length - length, length);
  return head.subarray(0, length);
}

/** One region of the file: whole lines, or (`forced`) the piece of a line longer than the buffer may grow. */
interface Region {
  bytes: Buffer;
  forced: boolean;
}

/** The file read chunk by chunk into one buffer, which gives out regions of whole lines and keeps what follows. */
class RegionReader {
  private buf: Buffer;
  private filled: number;
  private eof: boolean;
  /** Bytes read so far. */
  bytes: number;

  constructor(
    private readonly read: ReadAt,
    head: Buffer,
    private readonly chunk: number,
    private readonly maxLine: number,
    private readonly scratch: Scratch | undefined,
  ) {
    // Reuse the probe rather than read it again: most files are smaller than it, and then it is
    // the whole file, so no chunk buffer is allocated (a fresh 256 KiB per file cost a fifth of a
    // tree search in garbage collection).
    if (head.length < BINARY_PROBE_BYTES && head.length <= chunk) {
      this.buf = head;
      this.filled = head.length;
      this.eof = true;
    } else {
      this.buf = this.chunkBuffer();
      this.filled = Math.min(head.length, chunk);
      head.copy(this.buf, 0, 0, this.filled);
      this.eof = head.length < BINARY_PROBE_BYTES && this.filled === head.length;
    }
    this.bytes = this.filled;
  }

  // The scratch chunk when it is the chunk's size (never in use while another buffer holds the file), else a new one.
  private chunkBuffer(): Buffer {
    const kept = this.scratch?.chunk;
    return kept !== undefined && kept.length === this.chunk && kept !== this.buf ? kept : Buffer.allocUnsafe(this.chunk);
  }

  /** True while bytes remain to be read or searched. */
  get more(): boolean {
    return !this.eof || this.filled > 0;
  }

  /** True when nothing is left in the buffer (and so in the file). */
  get empty(): boolean {
    return this.filled === 0;
  }

  /** Reads until the buffer is full or the file ends. */
  async fill(): Promise<void> {
    while (this.filled < this.buf.length && !this.eof) {
      const n = await this.read(this.buf, this.filled, this.buf.length - this.filled, this.bytes);
      if (n === 0) this.eof = true;
      this.filled += n;
      this.bytes += n;
    }
  }

  /** The next region, up to the buffer's last line break; undefined when the buffer grew instead, to hold a long line. */
  region(): Region | undefined {
    const { buf, filled } = this;
    if (this.eof) return { bytes: buf.subarray(0, filled), forced: false };
    const lastNl = buf.lastIndexOf(LF, filled - 1);
    if (lastNl >= 0) return { bytes: buf.subarray(0, lastNl + 1), forced: false };
    if (buf.length < this.maxLine) {
      this.grow(Math.min(buf.length * 2, this.maxLine));
      return undefined;
    }
    // Cut before a lead byte so both pieces decode as the whole line would.
    let end = filled - 4;
    while (end > 0 && ((buf[end] ?? 0) & 0xc0) === 0x80) end--;
    return { bytes: buf.subarray(0, end <= 0 ? filled : end), forced: true };
  }

  // Into the large buffer kept from an earlier line when it holds `size` (and no more than a line may grow to), else into a new one, kept when small enough.
  private grow(size: number): void {
    const large = this.scratch?.large;
    const usable = large !== undefined && large !== this.buf && large.length >= size && large.length <= this.maxLine;
    const bigger = usable ? large : Buffer.allocUnsafe(size);
    this.buf.copy(bigger, 0, 0, this.filled);
    this.buf = bigger;
    if (this.scratch !== undefined && !usable && size <= LARGE_KEPT && size > (large?.length ?? 0)) this.scratch.large = bigger;
  }

  /** Where the next region starts when `region` keeps its last `keep` bytes: moved to the next lead byte, so both decode as the line would. */
  cutPoint(region: Region, keep: number): number {
    const end = region.bytes.length;
    let from = end - keep;
    while (from < end && ((this.buf[from] ?? 0) & 0xc0) === 0x80) from++;
    return from;
  }

  /** Drops the bytes before `from` (the region just searched but what it keeps), and what the buffer no longer needs. */
  consume(from: number): void {
    this.buf.copyWithin(0, from, this.filled);
    this.filled -= from;
    if (this.buf.length > this.chunk && this.filled <= this.chunk) {
      // Back into the chunk it started in, free while the line was held elsewhere.
      const smaller = this.chunkBuffer();
      this.buf.copy(smaller, 0, 0, this.filled);
      this.buf = smaller;
    }
  }
}

/**
 * Searches one file read through `read`.
 * @throws the signal's reason when aborted, or what `read` throws
 */
export async function scanFile(read: ReadAt, query: Query, req: FileRequest, opts: ScanOptions = {}): Promise<FileScan> {
  const head = await probe(read, opts.scratch?.probe);
  if (looksBinary(head)) return { ...NOTHING, binary: true };
  const input = new RegionReader(read, head, chunkSizeOf(opts), pieceSizeOf(opts), opts.scratch);
  const matches = new RegionSearch(query, req, opts.viewBytes);
  while (input.more) {
    await input.fill();
    opts.signal?.throwIfAborted();
    opts.onProgress?.(input.bytes);
    if (input.empty) break;
    const region = input.region();
    if (region === undefined) continue;
    // A piece of an over-long line keeps an overlap, so an occurrence across the cut is still found: a
    // literal's a little longer than itself, a regex's half the piece. A regex's match starts are this
    // piece's up to CONTEXT bytes into the overlap, whose start the next piece keeps as context, so
    // every match up to the overlap less CONTEXT long is found whole and its anchors, \b and
    // lookbehinds see the line as it is (SPEC §24).
    const end = region.bytes.length;
    const regexPiece = region.forced && query.mayBacktrack;
    const keep = !region.forced ? 0 : regexPiece ? Math.floor(end / 2) : Math.min(Math.floor(end / 2), Math.max(OVERLAP, 4 * query.bytes.length));
    const next = input.cutPoint(region, keep);
    const own = regexPiece ? input.cutPoint(region, end - next - Math.min(CONTEXT, Math.floor(keep / 4))) : end;
    matches.search(region.bytes, region.forced, next, own);
    // A file a count has just been through: the rest of it would only be counted again.
    if (matches.done) break;
    input.consume(next);
    if (region.forced) matches.shift(next);
  }
  return { binary: false, ...matches.result(), bytes: input.bytes };
}
