/**
 * The bounding layer (SPEC §3): the only place where results are cut and
 * notices are written. Everything here is pure except what it re-exports.
 */
import type { CallToolResult } from "@modelcontextprotocol/server";

/** The server's limits, fixed at startup: the cap on every text result and on media reads. */
export interface Limits {
  /** Largest text result in UTF-16 code units before the notice. @default 50000 */
  readonly maxResultChars: number;
  /** Largest file read_media_file returns, in bytes. @default 5242880 */
  readonly maxMediaBytes: number;
}

/**
 * The smallest cap accepted (issue 18, item 11): a result must be able to hold
 * search_file_contents' closing summary whole — its totals, skips and the
 * `offset=` that continues it, up to about 530 characters — after the one
 * match a cut result always shows. The layer's own notices are never cut.
 */
export const MIN_RESULT_CHARS = 1000;

/** Advice used when an error message itself is over the cap. */
export const ERROR_ADVICE = "retry with shorter arguments, since the error quotes them";

/** True for a UTF-16 high (leading) surrogate code unit. */
export const isHigh = (code: number): boolean => code >= 0xd800 && code <= 0xdbff;
/** True for a UTF-16 low (trailing) surrogate code unit. */
export const isLow = (code: number): boolean => code >= 0xdc00 && code <= 0xdfff;

/** True when index `i` of `text` sits between the two halves of a surrogate pair. */
export function splitsPair(text: string, i: number): boolean {
  return i > 0 && i < text.length && isHigh(text.charCodeAt(i - 1)) && isLow(text.charCodeAt(i));
}

/**
 * How many leading code units of `text` to keep under a cap of `max`: `max`,
 * one less if that would split a surrogate pair, or the whole first pair when
 * one less would keep nothing.
 */
export function cutIndex(text: string, max: number): number {
  if (text.length <= max) return text.length;
  if (!splitsPair(text, max)) return max;
  return max > 1 ? max - 1 : 2;
}

/** `1234567` → `"1,234,567"`; locale-independent. */
export function formatCount(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

// The notice frames, written once: the notices below fill them with figures, endsWithNotice
// fills them with patterns to recognise them, and the instructions with placeholders.
/** The pageable notice's frame around its four figures, as given. */
export const pageFrame = (from: string, to: string, total: string, offset: string): string =>
  `[Result truncated: showing characters ${from}-${to} of ${total}. Call again with offset=${offset} to continue.]`;
/** The non-pageable notice's frame around its figures, optional parts and advice, as given. */
export const cutFrame = (shown: string, total: string, filesPart: string, advice: string): string =>
  `[Result truncated: showing characters 1-${shown} of ${total}${filesPart}. To see the rest, ${advice}.]`;
/**
 * A total that was not counted to the end (issue 28 row 10): the characters counted, as a lower bound, and how
 * much of the file is counted so far (a window's later reads count on, 64 MiB at a time); it stands where a
 * frame's total stands.
 */
const atLeastFrame = (counted: string, mib: string): string =>
  `at least ${counted} (the total is not counted yet: only the first ${mib} MiB of the file are counted so far; get_file_info gives its size)`;
const filesFrame = (included: string, requested: string): string => `; ${included} of ${requested} requested files included in full`;
const skippedFrame = (count: string, noun: string): string => `; ${count} unreadable ${noun} skipped (not shown)`;
const entriesFrame = (shown: string, total: string): string => `; ${shown} of ${total} entries shown`;

/** A total that may be a lower bound: `countedBytes` says how many bytes were read when counting stopped early. */
export interface Total {
  chars: number;
  /** Present when counting stopped before the end of the file: `chars` is then at least the total's lower bound. */
  countedBytes?: number;
}

function totalText(t: Total): string {
  return t.countedBytes === undefined ? formatCount(t.chars) : atLeastFrame(formatCount(t.chars), formatCount(Math.floor(t.countedBytes / 2 ** 20)));
}

/** Notice for a paged read window `[start, end)` of a `total`-character text (or one counted only so far). */
export function pageNotice(start: number, end: number, total: number, countedBytes?: number): string {
  return pageFrame(formatCount(start + 1), formatCount(end), totalText({ chars: total, countedBytes }), String(end));
}

/** How many of the requested files made it whole into a read_multiple_files result. */
export interface FilesIncluded {
  included: number;
  requested: number;
}

/** How many entries (lines of a listing, paths of a search, nodes of a tree) a cut result shows whole, of how many. */
export interface EntriesShown {
  shown: number;
  total: number;
}

/**
 * Notice for a non-pageable result cut after `shown` of `total` characters; `skipped` unreadable
 * entries are stated when the cut hid the note that listed them.
 */
export function truncationNotice(
  shown: number,
  total: number | Total,
  advice: string,
  files?: FilesIncluded,
  skipped = 0,
  entries?: EntriesShown,
): string {
  const filesPart = files ? filesFrame(formatCount(files.included), formatCount(files.requested)) : "";
  const skippedPart = skipped > 0 ? skippedFrame(formatCount(skipped), skipped === 1 ? "entry" : "entries") : "";
  const entriesPart = entries ? entriesFrame(formatCount(entries.shown), formatCount(entries.total)) : "";
  const totalPart = typeof total === "number" ? formatCount(total) : totalText(total);
  return cutFrame(formatCount(shown), totalPart, filesPart + skippedPart + entriesPart, advice);
}

// Each frame turned into an anchored pattern: its literal text escaped, its figures
// matched as formatCount writes them (offset= as a plain integer), advice as any text.
const COUNT = String.raw`\d{1,3}(?:,\d{3})*`;
const SLOT = "\u0000";
const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
function framePattern(filled: string, slots: string[]): RegExp {
  let pattern = escapeRegExp(filled);
  for (const slot of slots) pattern = pattern.replace(SLOT, slot);
  return new RegExp(`^${pattern}$`);
}
const TOTAL = `(?:${COUNT}|${escapeRegExp(atLeastFrame(SLOT, SLOT)).replace(SLOT, COUNT).replace(SLOT, COUNT)})`;
const NOTICE_PATTERNS = [
  framePattern(pageFrame(SLOT, SLOT, SLOT, SLOT), [COUNT, COUNT, TOTAL, String.raw`\d+`]),
  framePattern(cutFrame(SLOT, SLOT, SLOT, SLOT), [
    COUNT,
    TOTAL,
    `(?:${escapeRegExp(filesFrame(SLOT, SLOT)).replace(SLOT, COUNT).replace(SLOT, COUNT)})?` +
      `(?:${escapeRegExp(skippedFrame(SLOT, SLOT)).replace(SLOT, COUNT).replace(SLOT, "(?:entry|entries)")})?` +
      `(?:${escapeRegExp(entriesFrame(SLOT, SLOT)).replace(SLOT, COUNT).replace(SLOT, COUNT)})?`,
    String.raw`[^\n]+`,
  ]),
];

/**
 * True when the last line of `text` (ignoring one final line break) is exactly one of the
 * truncation notices above: the sign of a capped result being written back as a file.
 */
export function endsWithNotice(text: string): boolean {
  const body = text.replace(/\r?\n$/, "");
  const lastLine = body.slice(body.lastIndexOf("\n") + 1).replace(/\r$/, "");
  return NOTICE_PATTERNS.some((pattern) => pattern.test(lastLine));
}

/** `text` itself when it fits in `max`, else its safe prefix, a newline and the notice. */
export function capText(text: string, max: number, advice: string): string {
  if (text.length <= max) return text;
  const cut = cutIndex(text, max);
  return `${text.slice(0, cut)}\n${truncationNotice(cut, text.length, advice)}`;
}

/**
 * A text accumulator that keeps only the first `max` characters (plus one, to
 * decide a surrogate cut) and counts the rest, so a handler can stream an
 * arbitrarily large result through it in bounded memory.
 */
export class TextSink {
  private readonly pieces: string[] = [];
  private keptLength = 0;
  private totalLength = 0;
  private readonly partEnds: number[] = [];
  private skipped = 0;
  // Where each entry kept so far ends (only those that may lie before a cut), and how many there are in all.
  private readonly entryEnds: number[] = [];
  private entries = 0;
  private extraAdvice: string | undefined;
  private countedBytes: number | undefined;

  constructor(readonly max: number) {}

  /** Characters appended so far, kept or not. */
  get total(): number {
    return this.totalLength;
  }

  /** True once nothing more appended will be kept. */
  get full(): boolean {
    return this.keptLength > this.max;
  }

  /** Appends text; only what still fits is retained. */
  append(text: string): void {
    this.totalLength += text.length;
    const room = this.max + 1 - this.keptLength;
    if (room <= 0 || text.length === 0) return;
    const piece = text.length <= room ? text : text.slice(0, room);
    this.pieces.push(piece);
    this.keptLength += piece.length;
  }

  /** Where the text appended from now on begins, for `holds`. */
  mark(): number {
    return this.pieces.length;
  }

  /** Whether the text kept (since `mark` gave `from`) holds `ch`, one character. */
  holds(ch: string, from = 0): boolean {
    for (let i = from; i < this.pieces.length; i++) if (this.pieces[i]?.includes(ch)) return true;
    return false;
  }

  /**
   * Adds `n` characters that are known to exist but need not be seen.
   * @throws when the sink would have kept some of them
   */
  appendCount(n: number): void {
    if (n > 0 && !this.full) throw new Error("TextSink.appendCount called before the sink was full");
    this.totalLength += n;
  }

  /** Records that a requested part (one file of read_multiple_files) ends here. */
  endPart(): void {
    this.partEnds.push(this.totalLength);
  }

  /** Records that one entry (a listing's line, a search's path, a tree's node) ends here; a cut notice then says how many it shows whole. */
  endEntry(): void {
    this.entries++;
    if (this.totalLength <= this.max) this.entryEnds.push(this.totalLength);
  }

  /** Records `n` entries past the cut, counted by appendCount rather than appended. */
  countEntries(n: number): void {
    this.entries += n;
  }

  /** Records that counting stopped after `bytes` of the source were read: the total is then a lower bound, and the notice says so. */
  stoppedCounting(bytes: number): void {
    this.countedBytes = bytes;
  }

  /** Adds a sentence to the advice of the cut notice (e.g. figures the cut hides), said only when the result is cut. */
  advise(extra: string): void {
    this.extraAdvice = extra;
  }

  /** Records that `n` entries could not be read; a walk's note listing them comes last, so a cut always hides it. */
  noteSkipped(n: number): void {
    this.skipped += n;
  }

  /** The full text if it fits, else the kept prefix, a newline and the notice. */
  render(advice: string): string {
    const kept = this.pieces.join("");
    if (this.totalLength <= this.max) return kept;
    const cut = cutIndex(kept, this.max);
    const files =
      this.partEnds.length > 0 ? { included: this.partEnds.filter((end) => end <= cut).length, requested: this.partEnds.length } : undefined;
    const entries = this.entries > 0 ? { shown: this.entryEnds.filter((end) => end <= cut).length, total: this.entries } : undefined;
    const fullAdvice = this.extraAdvice === undefined ? advice : `${advice}; ${this.extraAdvice}`;
    const total: Total = { chars: this.totalLength, ...(this.countedBytes !== undefined && { countedBytes: this.countedBytes }) };
    return `${kept.slice(0, cut)}\n${truncationNotice(cut, total, fullAdvice, files, this.skipped, entries)}`;
  }
}

/** A window `[start, end)` of a file's decoded text, with the text's total length. */
export interface TextWindow {
  text: string;
  start: number;
  end: number;
  /** The text's length; a lower bound when `countedBytes` is present. */
  total: number;
  /** Present when counting stopped after this many bytes, before the end of the file (issue 28 row 10). */
  countedBytes?: number;
}

/** Renders a paged-read window: its text, and the pageable notice when text follows. */
export function renderWindow(w: TextWindow): string {
  // A window of a text not counted to its end always has more after it.
  if (w.countedBytes !== undefined) return `${w.text}\n${pageNotice(w.start, w.end, w.total, w.countedBytes)}`;
  return w.end < w.total ? `${w.text}\n${pageNotice(w.start, w.end, w.total)}` : w.text;
}

/**
 * What a tool handler hands back: content blocks, "I streamed into the call's sink", or a read window; and a note for
 * a block of its own after them (one that must not mix into a text whose characters are counted, as a read's).
 */
export type ToolOutput = ({ content: CallToolResult["content"] } | { streamed: true } | { window: TextWindow }) & { note?: string };

/** What the bounding layer lends a handler: the only sink it may stream into, and the window bound. */
export interface Bounds {
  /** The call's sink, sized to the cap; rendered when the handler returns `{ streamed: true }`. */
  readonly sink: TextSink;
  /** `limit` lowered to the cap (the cap when absent): the largest window a read may return. */
  windowLimit(limit?: number): number;
}

/**
 * Runs one tool handler inside the cap (SPEC §3.1): the layer creates the sink
 * and the window bound, and every text block of the result — errors included —
 * leaves within `max` characters plus one notice. `advice` is the tool's
 * narrowing advice.
 */
export async function runBounded(max: number, advice: string, handler: (bounds: Bounds) => Promise<ToolOutput>): Promise<CallToolResult> {
  const bounds: Bounds = { sink: new TextSink(max), windowLimit: (limit) => Math.min(limit ?? max, max) };
  try {
    const output = await handler(bounds);
    const note: CallToolResult["content"] = output.note === undefined ? [] : [{ type: "text", text: capText(output.note, max, advice) }];
    if ("window" in output) return { content: [{ type: "text", text: renderWindow(boundWindow(output.window, max)) }, ...note] };
    if ("streamed" in output) return { content: [{ type: "text", text: bounds.sink.render(advice) }, ...note] };
    return {
      content: [...output.content.map((block) => (block.type === "text" ? { ...block, text: capText(block.text, max, advice) } : block)), ...note],
    };
  } catch (error) {
    return boundError(error instanceof Error ? error.message : String(error), max);
  }
}

/** A window no longer than `max` characters: a longer one is shortened, its notice continuing at the new end. */
function boundWindow(w: TextWindow, max: number): TextWindow {
  if (w.text.length <= max) return w;
  const cut = cutIndex(w.text, max);
  return { ...w, text: w.text.slice(0, cut), end: w.start + cut };
}

/** The capped `isError` result for a failure message. */
export function boundError(message: string, max: number): CallToolResult {
  return { content: [{ type: "text", text: capText(message, max, ERROR_ADVICE) }], isError: true };
}
