/**
 * Reference implementations for the walker tests: upstream's algorithms
 * written the plain way (whole tree in memory, realpath on every entry).
 */
import fs from "node:fs/promises";
import path from "node:path";
import { minimatch } from "minimatch";
import { capText, TextSink } from "../src/kernel/bounded.js";

export interface TreeEntry {
  name: string;
  type: "file" | "directory";
  children?: TreeEntry[];
}

/** Upstream's directory_tree buildTree, unchanged in substance. */
export async function buildTreeInMemory(root: string, excludePatterns: string[]): Promise<TreeEntry[]> {
  async function build(current: string): Promise<TreeEntry[]> {
    const entries = await fs.readdir(current, { withFileTypes: true });
    const result: TreeEntry[] = [];
    for (const entry of entries) {
      const rel = path.relative(root, path.join(current, entry.name));
      const excluded = excludePatterns.some((p) =>
        p.includes("*")
          ? minimatch(rel, p, { dot: true })
          : minimatch(rel, p, { dot: true }) || minimatch(rel, `**/${p}`, { dot: true }) || minimatch(rel, `**/${p}/**`, { dot: true }),
      );
      if (excluded) continue;
      const item: TreeEntry = { name: entry.name, type: entry.isDirectory() ? "directory" : "file" };
      if (entry.isDirectory()) item.children = await build(path.join(current, entry.name));
      result.push(item);
    }
    return result;
  }
  return build(root);
}

const inside = (p: string, dirs: readonly string[]): boolean => dirs.some((d) => p === d || p.startsWith(d.endsWith(path.sep) ? d : d + path.sep));

/** Upstream's validatePath for an entry whose parent is a validated directory. */
async function validateEntry(full: string, allowedDirs: readonly string[]): Promise<void> {
  try {
    const real = await fs.realpath(full);
    if (!inside(real, allowedDirs)) throw new Error(`outside: ${real}`);
  } catch (error) {
    // Upstream treats a missing target as a new file whose parent is checked (and allowed here).
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
}

/** Upstream's searchFilesWithValidation: realpath on every entry, failures skipped silently. */
export async function searchReference(root: string, pattern: string, excludePatterns: string[], allowedDirs: readonly string[]): Promise<string[]> {
  const results: string[] = [];
  async function search(current: string): Promise<void> {
    const entries = await fs.readdir(current, { withFileTypes: true });
    for (const entry of entries) {
      const full = path.join(current, entry.name);
      try {
        await validateEntry(full, allowedDirs);
        const rel = path.relative(root, full);
        if (excludePatterns.some((p) => minimatch(rel, p, { dot: true }))) continue;
        if (minimatch(rel, pattern, { dot: true })) results.push(full);
        if (entry.isDirectory()) await search(full);
      } catch {}
    }
  }
  await search(root);
  return results;
}

/** search_files' text for a list of matches. */
export const searchText = (matches: string[]): string => (matches.length > 0 ? matches.join("\n") : "No matches found");

/** An uncapped sink, large enough for any test tree. */
export const bigSink = (): TextSink => new TextSink(1e12);

/** Where each line of `text` ends (before its `\n`, or with it when `withBreak`), for the first `count` lines (all by default). */
export function lineEnds(text: string, withBreak = false, count = Infinity): number[] {
  const ends: number[] = [];
  let at = 0;
  for (const line of text.split("\n")) {
    if (ends.length >= count) break;
    at += line.length;
    ends.push(withBreak ? at + 1 : at);
    at++;
  }
  return ends;
}

/**
 * What a capped walk result must be: capText's prefix and notice, the notice also saying how many
 * entries (ending at `ends` in the full text) lie whole before the cut, of how many.
 */
export function capWithEntries(full: string, max: number, advice: string, ends: readonly number[]): string {
  const capped = capText(full, max, advice);
  if (full.length <= max || ends.length === 0) return capped;
  const cut = capped.lastIndexOf("\n[Result truncated");
  const shown = ends.filter((e) => e <= cut).length;
  const at = capped.lastIndexOf(". To see the rest, ");
  const part = `; ${shown.toLocaleString("en-US")} of ${ends.length.toLocaleString("en-US")} entries shown`;
  return capped.slice(0, at) + part + capped.slice(at);
}
