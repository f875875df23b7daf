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
 * Lines a window of nearby edits grows to before it is cut at an unchanged line between two of them: the exact diff
 * of thousands of nearby changes at once (a replaceAll of a common name) passes its edit budget and falls back to one
 * coarse hunk, every line of the stretch removed and then added, which hid what changed.
 */
const DIFF_WINDOW_LINES = 256;

/** A window of lines diffed at once: [from, to), the line of its first edit, and the last line an edit of it touches. */
interface Window {
  from: number;
  to: number;
  firstEdit: number;
  lastEdit: number;
}

/**
 * Returns the unified diff (headers `original`/`modified`, LF form) of `doc`'s edits, reading
 * only the lines around them, until DIFF_BUDGET_BYTES of them are read (a window past it, such as
 * an edit inside one enormous line, is left out too). For small LF files it equals createUnifiedDiff's output.
 * `windowLines`: see DIFF_WINDOW_LINES.
 */
export async function streamedDiff(doc: PatchedDoc, path: Shown, pause: () => Promise<void>, windowLines = DIFF_WINDOW_LINES): Promise<StreamedDiff> {
  const { index } = doc;
  const lastLine = index.lineCount;
  const windows: Window[] = [];
  for (const p of doc.patches) {
    const line = await index.lineOf(p.start);
    const endLine = await index.lineOf(p.end);
    const from = Math.max(0, line - MARGIN);
    const to = Math.min(lastLine + 1, endLine + 1 + MARGIN);
    const prev = windows[windows.length - 1];
    const gap = prev === undefined ? 0 : line - prev.lastEdit - 1;
    if (prev === undefined || from > prev.to) windows.push({ from, to, firstEdit: line, lastEdit: endLine });
    else if (to - prev.from > windowLines && gap > 0) {
      // Cut in the unchanged lines between, where each side's hunk keeps its context: up to CONTEXT lines, meeting
      // at the cut when the gap is short enough for one hunk (joined below), else apart as the whole diff has them.
      const cut = prev.lastEdit + 1 + Math.min(CONTEXT, Math.floor(gap / 2));
      prev.to = cut;
      windows.push({ from: cut, to, firstEdit: line, lastEdit: endLine });
    } else {
      prev.to = Math.max(prev.to, to);
      prev.lastEdit = Math.max(prev.lastEdit, endLine);
    }
  }
  const hunks: Hunk[] = [];
  let lineShift = 0;
  let spent = 0;
  let omitted: StreamedDiff["omitted"];
  for (const [w, { from, to, firstEdit }] of windows.entries()) {
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
    for (const h of windowHunks(before, after, path))
      joinOrPush(hunks, { ...h, oldStart: h.oldStart + from, newStart: h.newStart + from + lineShift });
    lineShift += countNewlines(after) - countNewlines(before);
  }
  return { diff: formatDiff(path, hunks), omitted };
}

/** Appends `h`, or joins it to the last hunk when it starts where that one ends (the two sides of a window's cut). */
function joinOrPush(hunks: Hunk[], h: Hunk): void {
  const last = hunks[hunks.length - 1];
  if (last === undefined || last.oldStart + last.oldLines !== h.oldStart || last.newStart + last.newLines !== h.newStart) {
    hunks.push(h);
    return;
  }
  last.oldLines += h.oldLines;
  last.newLines += h.newLines;
  last.lines.push(...h.lines);
}

function countNewlines(text: string): number {
  let n = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) n++;
  return n;
}
