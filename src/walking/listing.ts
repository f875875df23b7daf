/**
 * list_directory and list_directory_with_sizes: upstream's text, written line
 * by line into a TextSink.
 */
import type { Dirent } from "node:fs";
import { formatCount, type TextSink } from "../kernel/bounded.js";
import { escapeControls, type Shown } from "../kernel/escape.js";
import { formatSize } from "./sizes.js";
import type { WalkPort } from "../sandbox/index.js";
import { Ticker, type WalkOptions } from "./walker.js";

// Upstream stats every entry at once; a bounded pool gives the same sizes
// without 50,000 simultaneous requests.
const STAT_CONCURRENCY = 32;

/** One list_directory line: `[DIR] name` or `[FILE] name`. */
function entryLine(isDir: boolean, name: Shown): string {
  return `${isDir ? "[DIR]" : "[FILE]"} ${name}`;
}

/** One list_directory_with_sizes line: the kind, the name padded to 30, a file's size padded left to 10. */
function sizedLine(e: SizedEntry, name: Shown): string {
  return `${e.isDir ? "[DIR]" : "[FILE]"} ${name.padEnd(30)} ${e.isDir ? "" : formatSize(e.size).padStart(10)}`;
}

/** Test-only hook into the listings; not part of the tool API. */
export const __listingHooks: {
  /** Told, after each batch of entries, how many entries the listing holds at that moment. */
  held?: (entries: number) => void;
} = {};

// A turn of the event loop between batches, so one huge listing does not hold up other calls.
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * The first `keep` entries in sort order, of all those offered, holding at most twice that many (plus the batch
 * being offered): the listing's bounded top-N.
 */
class FirstInOrder<T> {
  private held: T[] = [];
  // The last of the first `keep`, once that many have been seen.
  private worst: T | undefined;

  constructor(
    private readonly keep: number,
    private readonly order: (a: T, b: T) => number,
  ) {}

  get size(): number {
    return this.held.length;
  }

  offer(entries: readonly T[]): void {
    const { worst } = this;
    for (const e of entries) {
      // Once `keep` are held, an entry after the last of them can never be among the first.
      if (worst === undefined || this.order(e, worst) < 0) this.held.push(e);
    }
    if (this.held.length > 2 * this.keep) this.trim();
  }

  /** The kept entries, in order. */
  sorted(): T[] {
    this.trim();
    return this.held;
  }

  private trim(): void {
    this.held.sort(this.order);
    if (this.held.length < this.keep) return;
    this.held.length = this.keep;
    this.worst = this.held[this.keep - 1];
  }
}

/** One list_directory line and its entry's name. */
interface Line {
  name: string;
  text: string;
}

// A UTF-16 unit as a rank in code point order: surrogates (code points past U+FFFF) after U+E000-U+FFFF.
const rank = (unit: number): number => (unit >= 0xd800 && unit <= 0xdfff ? unit + 0x10000 : unit);

/**
 * fs.readdir's order: libuv's scandir sorts names by their bytes, and UTF-8's byte order is code point order,
 * which differs from JavaScript's (UTF-16 unit) order only between surrogates and U+E000-U+FFFF.
 */
function byNameBytes(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return rank(x) - rank(y);
  }
  return a.length - b.length;
}

const byName = (a: Line, b: Line): number => byNameBytes(a.name, b.name);

/**
 * Writes `[DIR] name` / `[FILE] name` lines for `dir` in fs.readdir's order (names sorted by their bytes) into
 * `sink`; a symlink to a directory inside the allowed directories is a `[DIR]` (upstream shows every link as a
 * `[FILE]`). The directory is read a batch at a time: only the lines the cap can show are held (a bounded top-N),
 * every other one is counted, so a directory of any size is listed in flat memory with the exact total.
 * @throws when `dir` cannot be read, or the signal's reason when cancelled
 */
export async function listInto(dir: string, sink: TextSink, opts: WalkOptions): Promise<void> {
  const ticker = new Ticker(opts);
  ticker.check();
  // The shortest line, `[DIR] x` and its line break: past this many lines the cap is full.
  const kept = new FirstInOrder<Line>(Math.floor(sink.max / "[DIR] x\n".length) + 1, byName);
  let count = 0;
  let allChars = 0;
  for await (const batch of opts.sandbox.entryBatches(dir)) {
    const lines: Line[] = [];
    for (const entry of batch) {
      const pause = ticker.tick();
      if (pause) await pause;
      // Only links cost a look at their target; a link leading outside stays a [FILE], whatever is there.
      const isDir = entry.isSymbolicLink() ? (await opts.sandbox.entryFacts(dir, entry.name, true)).isDir : entry.isDirectory();
      const text = entryLine(isDir, escapeControls(entry.name));
      allChars += text.length;
      lines.push({ name: entry.name, text });
    }
    count += lines.length;
    kept.offer(lines);
    __listingHooks.held?.(kept.size);
    await turn();
    ticker.check();
  }
  const first = kept.sorted();
  for (const [i, line] of first.entries()) {
    sink.append(`${i === 0 ? "" : "\n"}${line.text}`);
    sink.endEntry();
  }
  // The lines not held lie past the cut: their characters and line breaks are counted, never seen.
  if (first.length < count) {
    const shownChars = first.reduce((n, line) => n + line.text.length, 0);
    sink.appendCount(allChars - shownChars + (count - first.length));
    sink.countEntries(count - first.length);
  }
}

interface SizedEntry {
  name: string;
  isDir: boolean;
  isLink: boolean;
  size: number;
}

/** The sizes of one batch, stat'ed by a bounded pool. */
async function sizeBatch(dir: string, batch: readonly Dirent[], ticker: Ticker, sandbox: WalkPort): Promise<SizedEntry[]> {
  const sized: SizedEntry[] = batch.map((e) => ({
    name: e.name,
    isDir: e.isDirectory(),
    isLink: e.isSymbolicLink(),
    size: 0,
  }));
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < sized.length) {
      const item = sized[next++]!;
      const pause = ticker.tick();
      if (pause) await pause;
      // A link leading outside or dangling, and an entry that cannot be stat'ed, count 0 (upstream's 0 for the latter);
      // a link to a directory inside is listed and counted as a directory.
      const facts = await sandbox.entryFacts(dir, item.name, item.isLink);
      item.size = facts.size;
      if (item.isLink) item.isDir = facts.isDir;
    }
  };
  await Promise.all(Array.from({ length: Math.min(STAT_CONCURRENCY, sized.length) }, worker));
  return sized;
}

// The shortest line list_directory_with_sizes writes, its line break included: `[DIR] `, a name padded to 30, a space.
const SHORTEST_LINE = "[DIR] ".length + 30 + 1 + 1;

/**
 * Writes the list_directory_with_sizes text for `dir` into `sink`: entries
 * sorted by name or by size (largest first), the first `limit` of them when
 * given, a blank line, the totals of every entry. The directory is read a batch
 * at a time; only the entries that can be shown are held (those the cap can show,
 * or `limit` when larger), and every other one is only counted, so the totals and
 * the result's length stay exact. When the result is cut, the notice states the totals.
 * @throws when `dir` cannot be read, or the signal's reason when cancelled
 */
export async function listWithSizesInto(dir: string, sortBy: "name" | "size", sink: TextSink, opts: WalkOptions, limit?: number): Promise<void> {
  const ticker = new Ticker(opts);
  ticker.check();
  // Past this many lines the cap is full, so no later line can be seen: more need not be held.
  const visible = Math.floor(sink.max / SHORTEST_LINE) + 1;
  // Ties keep fs.readdir's order (names by their bytes), as upstream's stable sort of readdir's array does.
  const primary =
    sortBy === "size" ? (a: SizedEntry, b: SizedEntry) => b.size - a.size : (a: SizedEntry, b: SizedEntry) => a.name.localeCompare(b.name);
  const order = (a: SizedEntry, b: SizedEntry): number => primary(a, b) || byNameBytes(a.name, b.name);
  const kept = new FirstInOrder<SizedEntry>(limit === undefined ? visible : Math.max(1, limit), order);
  let files = 0;
  let dirs = 0;
  let bytes = 0;
  let count = 0;
  let allLines = 0;
  for await (const batch of opts.sandbox.entryBatches(dir)) {
    const sized = await sizeBatch(dir, batch, ticker, opts.sandbox);
    for (const e of sized) {
      if (e.isDir) dirs++;
      else {
        files++;
        bytes += e.size;
      }
      allLines += sizedLine(e, escapeControls(e.name)).length + 1;
    }
    count += sized.length;
    kept.offer(sized);
    __listingHooks.held?.(kept.size);
    await turn();
    ticker.check();
  }
  const totals = `Total: ${files} files, ${dirs} directories\nCombined size: ${formatSize(bytes)}`;
  sink.advise(`the totals, counting every entry, are exact: ${formatCount(files)} files, ${formatCount(dirs)} directories, ${formatSize(bytes)}`);
  const first = kept.sorted();
  // `limit`: the first entries after sorting (the largest, by size); the totals still count every entry.
  const shown = limit === undefined ? count : Math.min(limit, count);
  let written = 0;
  for (const e of first.slice(0, shown)) {
    sink.append(`${sizedLine(e, escapeControls(e.name))}\n`);
    sink.endEntry();
    written++;
  }
  // Entries shown but not held lie past the cut: counted, never seen (only when no limit cut the list).
  if (written < shown) {
    sink.appendCount(allLines - first.reduce((n, e) => n + sizedLine(e, escapeControls(e.name)).length + 1, 0));
    sink.countEntries(shown - written);
  }
  if (shown < count) sink.append(`(${formatCount(shown)} of ${formatCount(count)} entries shown: limit=${limit})\n`);
  sink.append(`\n${totals}`);
}
