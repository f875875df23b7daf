/**
 * LineScanner: reads the bytes of one JSON line as they arrive, without
 * parsing it, to learn its nesting depth and its top-level "id" and "method".
 * The transport uses it to refuse a line that is too long or too deep — and
 * still answer it by id — while holding none of the line's bytes.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COLON = 0x3a;
const COMMA = 0x2c;

/** Keys and values longer than this are not kept: no id or method is that long. */
const CAPTURE_MAX = 256;
const CAPTURED_KEYS = new Set(["id", "method"]);

/** What the scan learnt about a line's top-level object. */
export interface ScannedHead {
  /** The request id, when the line has a valid one (a string or a safe integer). */
  readonly id?: string | number;
  readonly method?: string;
}

/** Scans one line at a time; call reset() between lines. */
export class LineScanner {
  /** The deepest nesting seen so far in this line. */
  maxDepth = 0;
  private depth = 0;
  private inString = false;
  private escaped = false;
  private rootIsObject = false;
  private expectKey = false;
  private key: number[] | null = null;
  private lastKey = "";
  private value: number[] | null = null;
  private readonly captured = new Map<string, string>();
  // Positions of the next quote and backslash in the current chunk (-1: none left), so strings are skipped with
  // indexOf, not byte by byte; each is searched again only once passed, which keeps a chunk's scan linear.
  private quoteAt = -1;
  private backslashAt = -1;

  /** Forgets the previous line. */
  reset(): void {
    this.maxDepth = 0;
    this.depth = 0;
    this.inString = false;
    this.escaped = false;
    this.rootIsObject = false;
    this.expectKey = false;
    this.key = null;
    this.lastKey = "";
    this.value = null;
    this.captured.clear();
  }

  /** Scans the next bytes of the current line (no newline among them). */
  feed(bytes: Buffer): void {
    const n = bytes.length;
    this.quoteAt = bytes.indexOf(QUOTE);
    this.backslashAt = bytes.indexOf(BACKSLASH);
    let i = 0;
    while (i < n) {
      if (this.inString) {
        if (this.escaped) {
          this.escaped = false;
          this.keep(bytes[i] as number);
          i++;
          continue;
        }
        if (this.quoteAt !== -1 && this.quoteAt < i) this.quoteAt = bytes.indexOf(QUOTE, i);
        const quote = this.quoteAt;
        const stop = quote === -1 ? n : quote;
        if (this.backslashAt !== -1 && this.backslashAt < i) this.backslashAt = bytes.indexOf(BACKSLASH, i);
        if (this.backslashAt !== -1 && this.backslashAt < stop) {
          this.keepRange(bytes, i, this.backslashAt + 1);
          this.escaped = true;
          i = this.backslashAt + 1;
          continue;
        }
        this.keepRange(bytes, i, stop);
        i = stop;
        if (quote !== -1) {
          this.closeString();
          i++;
        }
        continue;
      }
      if (this.depth > 1 && this.value === null) {
        // Inside params nothing is kept: skip numbers, literals, commas and colons without a call per byte.
        let c = bytes[i] as number;
        while (c !== QUOTE && c !== OPEN_OBJECT && c !== OPEN_ARRAY && c !== CLOSE_OBJECT && c !== CLOSE_ARRAY && ++i < n) c = bytes[i] as number;
        if (i === n) break;
      }
      this.structural(bytes[i++] as number);
    }
  }

  /** The top-level id and method, as far as they were seen. */
  head(): ScannedHead {
    const id = decode(this.captured.get("id"));
    const method = decode(this.captured.get("method"));
    return {
      ...((typeof id === "string" || Number.isSafeInteger(id)) && { id: id as string | number }),
      ...(typeof method === "string" && { method }),
    };
  }

  private structural(c: number): void {
    const top = this.depth === 1 && this.rootIsObject;
    switch (c) {
      case QUOTE:
        this.inString = true;
        if (top && this.expectKey) this.key = [];
        else this.keep(c);
        return;
      case OPEN_OBJECT:
      case OPEN_ARRAY:
        this.keep(c);
        if (this.depth === 0 && c === OPEN_OBJECT) {
          this.rootIsObject = true;
          this.expectKey = true;
        }
        this.depth++;
        if (this.depth > this.maxDepth) this.maxDepth = this.depth;
        return;
      case CLOSE_OBJECT:
      case CLOSE_ARRAY:
        if (top) this.endValue();
        else this.keep(c);
        if (this.depth > 0) this.depth--;
        return;
      case COLON:
        if (top) {
          this.expectKey = false;
          if (CAPTURED_KEYS.has(this.lastKey)) this.value = [];
        } else this.keep(c);
        return;
      case COMMA:
        if (top) {
          this.endValue();
          this.expectKey = true;
        } else this.keep(c);
        return;
      default:
        this.keep(c);
    }
  }

  private closeString(): void {
    this.inString = false;
    if (this.key) {
      const raw = Buffer.from(this.key).toString("utf8");
      this.lastKey = this.key.length > CAPTURE_MAX ? "" : ((decode(`"${raw}"`) as string | undefined) ?? "");
      this.key = null;
    } else this.keep(QUOTE);
  }

  private endValue(): void {
    if (this.value && this.value.length <= CAPTURE_MAX) this.captured.set(this.lastKey, Buffer.from(this.value).toString("utf8"));
    this.value = null;
  }

  private keep(c: number): void {
    const into = this.key ?? this.value;
    if (into && into.length <= CAPTURE_MAX) into.push(c);
  }

  private keepRange(bytes: Buffer, from: number, to: number): void {
    const into = this.key ?? this.value;
    if (!into) return;
    for (let i = from; i < to && into.length <= CAPTURE_MAX; i++) into.push(bytes[i] as number);
  }
}

function decode(raw: string | undefined): unknown {
  if (raw === undefined) return undefined;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return undefined;
  }
}
