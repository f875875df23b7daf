/**
 * list_directory and list_directory_with_sizes: upstream's text, written line
 * by line into a TextSink.
 */
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

/**
 * Writes `[DIR] name` / `[FILE] name` lines for `dir` in readdir order into `sink`; a symlink to a directory
 * inside the allowed directories is a `[DIR]` (upstream shows every link as a `[FILE]`).
 * @throws when `dir` cannot be read, or the signal's reason when cancelled
 */
export async function listInto(dir: string, sink: TextSink, opts: WalkOptions): Promise<void> {
  const ticker = new Ticker(opts);
  ticker.check();
  const entries = await opts.sandbox.readEntries(dir);
  for (let i = 0; i < entries.length; i++) {
    const pause = ticker.tick();
    if (pause) await pause;
    const entry = entries[i]!;
    // Only links cost a look at their target; a link leading outside stays a [FILE], whatever is there.
    const isDir = entry.isSymbolicLink() ? (await opts.sandbox.entryFacts(dir, entry.name, true)).isDir : entry.isDirectory();
    sink.append(`${i === 0 ? "" : "\n"}${entryLine(isDir, escapeControls(entry.name))}`);
    sink.endEntry();
  }
}

interface SizedEntry {
  name: string;
  isDir: boolean;
  isLink: boolean;
  size: number;
}

async function sizeEntries(dir: string, ticker: Ticker, sandbox: WalkPort): Promise<SizedEntry[]> {
  const entries = await sandbox.readEntries(dir);
  const sized: SizedEntry[] = entries.map((e) => ({
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
  ticker.check();
  return sized;
}

/**
 * Writes the list_directory_with_sizes text for `dir` into `sink`: entries
 * sorted by name or by size (largest first), the first `limit` of them when
 * given, a blank line, the totals of every entry.
 * @throws when `dir` cannot be read, or the signal's reason when cancelled
 */
export async function listWithSizesInto(dir: string, sortBy: "name" | "size", sink: TextSink, opts: WalkOptions, limit?: number): Promise<void> {
  const ticker = new Ticker(opts);
  ticker.check();
  const entries = await sizeEntries(dir, ticker, opts.sandbox);
  let files = 0;
  let dirs = 0;
  let bytes = 0;
  for (const e of entries) {
    if (e.isDir) dirs++;
    else {
      files++;
      bytes += e.size;
    }
  }
  entries.sort(sortBy === "size" ? (a, b) => b.size - a.size : (a, b) => a.name.localeCompare(b.name));
  // `limit`: the first entries after sorting (the largest, by size); the totals still count every entry.
  const shown = limit === undefined ? entries : entries.slice(0, limit);
  for (const e of shown) {
    sink.append(`${sizedLine(e, escapeControls(e.name))}\n`);
    sink.endEntry();
  }
  if (shown.length < entries.length) sink.append(`(${formatCount(shown.length)} of ${formatCount(entries.length)} entries shown: limit=${limit})\n`);
  sink.append(`\nTotal: ${files} files, ${dirs} directories\nCombined size: ${formatSize(bytes)}`);
}
