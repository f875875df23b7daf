/**
 * The unified diff of a streamed edit, built hunk by hunk: the diff package runs on a small
 * window of old and new lines around each group of nearby edits, and the hunks are shifted
 * to their place in the file. Hunk merging is createTwoFilesPatch's; the headers are formatDiff's.
 */
import { structuredPatch, type StructuredPatch } from "diff";
import type { Shown } from "../kernel/escape.js";
import { coarseHunk, DIFF_MAX_EDIT_LENGTH, DIFF_TIMEOUT_MS, formatDiff, normalizeLineEndings } from "./edits.js";
import type { PatchedDoc } from "./patched-doc.js";

type Hunk = StructuredPatch["hunks"][number];

const CONTEXT = 4;
// Lines of unchanged text around each edit's lines in its window: twice the context, so
// two edits far enough apart to get separate hunks in the whole-file diff get separate windows.
const MARGIN = 2 * CONTEXT;

function windowHunks(before: string, after: string, path: Shown): Hunk[] {
  const exact = structuredPatch(path, path, before, after, "original", "modified", {
    context: CONTEXT,
    maxEditLength: DIFF_MAX_EDIT_LENGTH,
    timeout: DIFF_TIMEOUT_MS,
  });
  if (exact !== undefined) return exact.hunks;
  const coarse = coarseHunk(before, after);
  return coarse === undefined ? [] : [coarse];
}

/** Bytes of old plus new text the diff reads at most, over all its windows (a replaceAll can make many). */
export const DIFF_BUDGET_BYTES = 8 * 1024 * 1024;

/** A diff of the first changed regions, and how many were left out when the budget ran out. */
export interface StreamedDiff {
  diff: string;
  /** Changed regions not shown, and the (1-based, original) line where the first of them starts. */
  omitted?: { regions: number; fromLine: number };
}

/**
 * Returns the unified diff (headers `original`/`modified`, LF form) of `doc`'s edits, reading
 * only the lines around them, until DIFF_BUDGET_BYTES of them are read (a window past it, such as
 * an edit inside one enormous line, is left out too). For small LF files it equals createUnifiedDiff's output.
 */
export async function streamedDiff(doc: PatchedDoc, path: Shown, pause: () => Promise<void>): Promise<StreamedDiff> {
  const { index } = doc;
  const lastLine = index.lineCount;
  // [first line, line after the last, line of the first edit in it]
  const windows: [number, number, number][] = [];
  for (const p of doc.patches) {
    const line = await index.lineOf(p.start);
    const from = Math.max(0, line - MARGIN);
    const to = Math.min(lastLine + 1, (await index.lineOf(p.end)) + 1 + MARGIN);
    const prev = windows[windows.length - 1];
    if (prev !== undefined && from <= prev[1]) prev[1] = Math.max(prev[1], to);
    else windows.push([from, to, line]);
  }
  const hunks: Hunk[] = [];
  let lineShift = 0;
  let spent = 0;
  let omitted: StreamedDiff["omitted"];
  for (const [w, [from, to, firstEdit]] of windows.entries()) {
    await pause();
    const start = await index.offsetOfLine(from);
    const end = await index.offsetOfLine(to);
    const newStart = doc.toDocBefore(start);
    const newEnd = doc.toDoc(end);
    spent += end - start + (newEnd - newStart);
    if (spent > DIFF_BUDGET_BYTES) {
      omitted = { regions: windows.length - w, fromLine: firstEdit + 1 };
      break;
    }
    const before = normalizeLineEndings((await index.range(start, end)).toString("utf8"));
    const after = normalizeLineEndings((await doc.slice(newStart, newEnd)).toString("utf8"));
    for (const h of windowHunks(before, after, path)) {
      hunks.push({ ...h, oldStart: h.oldStart + from, newStart: h.newStart + from + lineShift });
    }
    lineShift += countNewlines(after) - countNewlines(before);
  }
  return { diff: formatDiff(path, hunks), omitted };
}

function countNewlines(text: string): number {
  let n = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) n++;
  return n;
}
