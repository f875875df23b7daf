/**
 * The edited file written out (SPEC §12, issue 28 row 12): the original raw bytes with each patch's
 * range replaced by its text in the file's line endings, gathered in one bounded buffer so the file
 * is written in few large writes, never one per piece, however many replacements there are. Long
 * unchanged stretches are read straight into that buffer; short ones come from a read window, so a
 * replaceAll's many small gaps cost a read per window, not one each.
 */
import type { PatchedDoc } from "./patched-doc.js";
import type { ByteSource } from "./source-index.js";

/** Bytes gathered before a write (two such buffers: one filled while the other is written). @default 2 MiB */
export const WRITE_BYTES = 2 * 1024 * 1024;
// Stretches shorter than this are served from the read window; longer ones are read into the output.
const WINDOW_BYTES = 256 * 1024;
// A file at least this long is copied whole by the kernel beside the first pass (streamEdit's copyAhead), at about a
// sixth of the kernel time a read and a write took; its unchanged start is then taken from that copy, whatever its length,
// and the rest written over it.
export const PREFIX_MIN_BYTES = 1024 * 1024;

/** `text` with each LF not already after a CR written as `ending`. */
function withEnding(text: Buffer, ending: string): Buffer {
  if (ending === "\n") return text;
  const parts: Buffer[] = [];
  let from = 0;
  for (let at = text.indexOf(0x0a); at !== -1; at = text.indexOf(0x0a, at + 1)) {
    if (at > 0 && text[at - 1] === 0x0d) continue;
    parts.push(text.subarray(from, at), Buffer.from(ending));
    from = at + 1;
  }
  parts.push(text.subarray(from));
  return Buffer.concat(parts);
}

/**
 * The output in order, in two buffers of `capacity` bytes: a full one is handed to `write` while the
 * other fills, so reading the next stretch overlaps the write before it. Writes made: at most two per
 * `capacity` bytes, plus one.
 */
class OutBuffer {
  private buf: Buffer;
  private spare: Buffer;
  private used = 0;
  // The write in flight; it never rejects (its failure is kept for `settle`), so no rejection goes unheard.
  private writing: Promise<unknown> | undefined;
  private failure: { error: unknown } | undefined;
  written = 0;

  constructor(
    capacity: number,
    private readonly write: (chunk: Buffer) => Promise<void>,
  ) {
    this.buf = Buffer.allocUnsafe(capacity);
    this.spare = Buffer.allocUnsafe(capacity);
  }

  /** The output position the next byte added lands at. */
  get position(): number {
    return this.written + this.used;
  }

  get free(): number {
    return this.buf.length - this.used;
  }

  /** The free part of the buffer, for a read to fill (then `commit`). */
  tail(): Buffer {
    return this.buf.subarray(this.used);
  }

  commit(length: number): void {
    this.used += length;
  }

  async add(bytes: Buffer): Promise<void> {
    if (bytes.length > this.free) await this.flush();
    if (bytes.length >= this.buf.length) {
      await this.settle();
      await this.write(bytes);
      this.written += bytes.length;
      return;
    }
    bytes.copy(this.buf, this.used);
    this.used += bytes.length;
  }

  /** Starts writing what is gathered, once the write before it is done. */
  async flush(): Promise<void> {
    await this.settle();
    if (this.used === 0) return;
    const full = this.buf.subarray(0, this.used);
    this.written += this.used;
    [this.buf, this.spare] = [this.spare, this.buf];
    this.used = 0;
    this.writing = this.write(full).catch((error: unknown) => {
      this.failure = { error };
    });
  }

  /** Waits for the write in flight; throws its failure. */
  async settle(): Promise<void> {
    const writing = this.writing;
    this.writing = undefined;
    await writing;
    if (this.failure !== undefined) throw this.failure.error;
  }
}

/** Told that output bytes [at, at + length) are the source's bytes from `from` (the rewrite sink's `copied`). */
export type Copied = (at: number, from: number, length: number) => void;

/** Reads raw bytes at increasing positions, short ones through one window read ahead. */
class RawReader {
  private window: Buffer = Buffer.alloc(0);
  private start = 0;
  private readonly scratch = Buffer.allocUnsafe(WINDOW_BYTES);

  constructor(
    private readonly source: ByteSource,
    private readonly changed: () => Error,
    private readonly copied?: Copied,
  ) {}

  /** Copies source bytes [from, to) into `out`. */
  async copy(from: number, to: number, out: OutBuffer, pause: () => Promise<void>): Promise<void> {
    if (from < to) this.copied?.(out.position, from, to - from);
    while (from < to) {
      await pause();
      const inWindow = from >= this.start && from < this.start + this.window.length;
      if (!inWindow && to - from < WINDOW_BYTES) {
        const length = Math.min(WINDOW_BYTES, this.source.size - from);
        this.window = await this.source.read(from, length, this.scratch);
        this.start = from;
        if (this.window.length !== length) throw this.changed();
      }
      if (from >= this.start && from < this.start + this.window.length) {
        const end = Math.min(to, this.start + this.window.length);
        await out.add(this.window.subarray(from - this.start, end - this.start));
        from = end;
        continue;
      }
      if (out.free === 0) await out.flush();
      const length = Math.min(out.free, to - from);
      const tail = out.tail();
      const bytes = await this.source.read(from, length, tail);
      if (bytes.length !== length) throw this.changed();
      // A source may return its own buffer rather than fill the one offered.
      if (bytes.buffer === tail.buffer && bytes.byteOffset === tail.byteOffset) out.commit(length);
      else await out.add(bytes);
      from += length;
    }
  }
}

/**
 * Streams the original raw bytes with each patch's range replaced by its text in the file's line endings
 * into `write`, in chunks of at most `capacity` bytes (WRITE_BYTES unless told), after a `copyPrefix` of the
 * unchanged start when it is long, telling `copied` where each unchanged stretch went, and leaving the rest to
 * `keepRest` when the edits changed no length in total; returns the bytes of the output.
 */
export async function writeOut(
  doc: PatchedDoc,
  write: (chunk: Buffer) => Promise<void>,
  pause: () => Promise<void>,
  capacity = WRITE_BYTES,
  copyPrefix?: (length: number) => Promise<void>,
  copied?: Copied,
  keepRest?: (from: number) => Promise<boolean>,
): Promise<number> {
  const { index } = doc;
  const out = new OutBuffer(capacity, write);
  const reader = new RawReader(index.source, () => index.changed(), copied);
  let cursor = 0;
  const first = doc.patches[0];
  const prefix = first === undefined ? index.source.size : await index.rawOf(first.start);
  if (copyPrefix !== undefined && prefix > 0 && index.source.size >= PREFIX_MIN_BYTES) {
    await pause();
    await copyPrefix(prefix);
    out.written = prefix;
    cursor = prefix;
  }
  try {
    for (const patch of doc.patches) {
      const start = await index.rawOf(patch.start);
      await reader.copy(cursor, start, out, pause);
      const text = withEnding(patch.text, await index.endingFrom(patch.start));
      if (text.length > 0) await out.add(text);
      cursor = await index.rawOf(patch.end);
    }
    // Edits that changed no length in total leave the rest where the copy started ahead put it: nothing to write.
    let kept = false;
    if (keepRest !== undefined && cursor < index.source.size && out.position === cursor) {
      await out.flush();
      await out.settle();
      kept = await keepRest(cursor);
    }
    if (kept) out.written = index.source.size;
    else await reader.copy(cursor, index.source.size, out, pause);
    await out.flush();
    await out.settle();
  } finally {
    // After a failure, the write in flight is waited for (its own failure is then beside the point).
    await out.settle().catch(() => undefined);
  }
  return out.written;
}
