/**
 * list_directory and list_directory_with_sizes: upstream's text, written line
 * by line into a TextSink.
 */
import { readdir, stat } from "node:fs/promises";
import path from "node:path";
import type { TextSink } from "./bounded.js";
import { formatSize } from "./lib.js";
import { Ticker } from "./walk-core.js";
import type { WalkOptions } from "./walk-core.js";

// Upstream stats every entry at once; a bounded pool gives the same sizes
// without 50,000 simultaneous requests.
const STAT_CONCURRENCY = 32;

/**
 * Writes `[DIR] name` / `[FILE] name` lines for `dir` in readdir order into `sink`.
 * @throws when `dir` cannot be read, or the signal's reason when cancelled
 */
export async function listInto(dir: string, sink: TextSink, opts: WalkOptions): Promise<void> {
  const ticker = new Ticker(opts);
  ticker.check();
  const entries = await readdir(dir, { withFileTypes: true });
  for (let i = 0; i < entries.length; i++) {
    const pause = ticker.tick();
    if (pause) await pause;
    const entry = entries[i]!;
    sink.append(`${i === 0 ? "" : "\n"}${entry.isDirectory() ? "[DIR]" : "[FILE]"} ${entry.name}`);
  }
}

interface SizedEntry {
  name: string;
  isDir: boolean;
  size: number;
}

async function sizeEntries(dir: string, ticker: Ticker): Promise<SizedEntry[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const sized: SizedEntry[] = entries.map((e) => ({ name: e.name, isDir: e.isDirectory(), size: 0 }));
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < sized.length) {
      const item = sized[next++]!;
      const pause = ticker.tick();
      if (pause) await pause;
      try {
        item.size = (await stat(path.join(dir, item.name))).size;
      } catch {
        // Upstream shows an entry it cannot stat with size 0.
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(STAT_CONCURRENCY, sized.length) }, worker));
  ticker.check();
  return sized;
}

/**
 * Writes the list_directory_with_sizes text for `dir` into `sink`: entries
 * sorted by name or by size (largest first), a blank line, the totals.
 * @throws when `dir` cannot be read, or the signal's reason when cancelled
 */
export async function listWithSizesInto(
  dir: string,
  sortBy: "name" | "size",
  sink: TextSink,
  opts: WalkOptions,
): Promise<void> {
  const ticker = new Ticker(opts);
  ticker.check();
  const entries = await sizeEntries(dir, ticker);
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
  for (const e of entries) {
    sink.append(`${e.isDir ? "[DIR]" : "[FILE]"} ${e.name.padEnd(30)} ${e.isDir ? "" : formatSize(e.size).padStart(10)}\n`);
  }
  sink.append(`\nTotal: ${files} files, ${dirs} directories\nCombined size: ${formatSize(bytes)}`);
}
