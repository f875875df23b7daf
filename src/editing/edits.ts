import { formatPatch, type StructuredPatch, structuredPatch } from "diff";
import { leadingWhitespace, LinePattern, rebase } from "./tolerant.js";

/** One text replacement requested by edit_file / applyFileEdits. */
export interface EditOperation {
  oldText: string;
  newText: string;
  /** edit_file only (SPEC §15): every exact occurrence; applyEdits keeps upstream's first match and ignores it. */
  replaceAll?: boolean;
}

/** Returns `text` with every CRLF turned into LF (lone CRs are kept). */
export function normalizeLineEndings(text: string): string {
  return text.replace(/\r\n/g, "\n");
}

// Myers' diff costs about D² for D changed lines (D = 2000 is ~0.25 s, 4000 ~0.8 s, 10000
// ~5 s measured), and it runs on the server's one thread. 2000 changed lines (e.g. a 1000-line
// block swapped for an unrelated one) still get the exact diff; beyond that the coarse patch is
// returned. The timeout only backstops inputs whose long runs of repeated lines make each step
// expensive; it is set far above the bound's ~0.25 s so that a loaded machine still gets the
// same (exact) diff for the same input.
/** Largest edit length (changed lines) that gets the exact diff. */
export const DIFF_MAX_EDIT_LENGTH = 2000;
/** Wall-clock backstop of one exact diff, in milliseconds. */
export const DIFF_TIMEOUT_MS = 5000;
const DIFF_CONTEXT_LINES = 4;

/**
 * Returns a unified diff (headers `original`/`modified`) of the two texts after CRLF→LF normalization:
 * createTwoFilesPatch's output, or coarseUnifiedDiff's when over 2000 lines change (or the diff takes over 1 s).
 */
export function createUnifiedDiff(original: string, modified: string, filepath = "file"): string {
  const before = normalizeLineEndings(original);
  const after = normalizeLineEndings(modified);
  const exact = structuredPatch(filepath, filepath, before, after, "original", "modified", {
    maxEditLength: DIFF_MAX_EDIT_LENGTH,
    timeout: DIFF_TIMEOUT_MS,
  });
  return exact === undefined ? coarseUnifiedDiff(before, after, filepath) : formatDiff(filepath, exact.hunks);
}

type Hunk = StructuredPatch["hunks"][number];

/**
 * The unified diff text of `hunks` of the file `filepath`, with the headers upstream's diff gave (`Index:`, a rule,
 * `--- name\toriginal`, `+++ name\tmodified`). The name is written as given: the diff package would C-quote a
 * name holding a backslash or a non-ASCII character, escaping a second time a name the server already showed
 * escaped (`cr\\rFAKE.txt`) and turning `é` into octal.
 */
export function formatDiff(filepath: string, hunks: Hunk[]): string {
  const header = `Index: ${filepath}\n${"=".repeat(67)}\n--- ${filepath}\toriginal\n+++ ${filepath}\tmodified\n`;
  if (hunks.length === 0) return header;
  const patch: StructuredPatch = { oldFileName: filepath, newFileName: filepath, oldHeader: undefined, newHeader: undefined, hunks };
  return header + formatPatch(patch, { includeIndex: false, includeUnderline: false, includeFileHeaders: false });
}

/** Splits like the diff package's line tokenizer: each line keeps its `\n`, no empty last line. */
function splitKeepingNewlines(text: string): string[] {
  return text === "" ? [] : text.split(/(?<=\n)/);
}

/** One hunk (up to 4 context lines) replacing everything between the common leading and trailing lines; none if equal. */
export function coarseHunk(original: string, modified: string): Hunk | undefined {
  const oldLines = splitKeepingNewlines(original);
  const newLines = splitKeepingNewlines(modified);
  let prefix = 0;
  while (prefix < oldLines.length && prefix < newLines.length && oldLines[prefix] === newLines[prefix]) prefix++;
  let suffix = 0;
  while (
    prefix + suffix < oldLines.length &&
    prefix + suffix < newLines.length &&
    oldLines[oldLines.length - 1 - suffix] === newLines[newLines.length - 1 - suffix]
  ) {
    suffix++;
  }
  if (prefix + suffix === oldLines.length && prefix + suffix === newLines.length) return undefined;
  const lead = Math.min(DIFF_CONTEXT_LINES, prefix);
  const trail = Math.min(DIFF_CONTEXT_LINES, suffix);
  const oldEnd = oldLines.length - suffix;
  const tagged = oldLines
    .slice(prefix - lead, prefix)
    .map((line) => ` ${line}`)
    .concat(
      oldLines.slice(prefix, oldEnd).map((line) => `-${line}`),
      newLines.slice(prefix, newLines.length - suffix).map((line) => `+${line}`),
      oldLines.slice(oldEnd, oldEnd + trail).map((line) => ` ${line}`),
    );
  // Same convention as the diff package: the newline is implied, and a line without one
  // (the last of its text) is followed by the "\ No newline" marker.
  const lines: string[] = [];
  for (const line of tagged) {
    if (line.endsWith("\n")) lines.push(line.slice(0, -1));
    else lines.push(line, "\\ No newline at end of file");
  }
  const start = prefix - lead + 1;
  return {
    oldStart: start,
    oldLines: oldEnd - prefix + lead + trail,
    newStart: start,
    newLines: newLines.length - suffix - prefix + lead + trail,
    lines,
  };
}

/**
 * Returns, in linear time, a valid unified diff with createTwoFilesPatch's headers whose single hunk
 * replaces everything between the common leading and trailing lines (with up to 4 context lines).
 */
export function coarseUnifiedDiff(original: string, modified: string, filepath = "file"): string {
  const hunk = coarseHunk(original, modified);
  return formatDiff(filepath, hunk === undefined ? [] : [hunk]);
}

/** `content` with the first run of lines equal to `oldText`'s after trim() replaced by `newText` re-based; undefined when none. */
function replaceWhitespaceTolerant(content: string, oldText: string, newText: string): string | undefined {
  const pattern = new LinePattern(oldText.split("\n"));
  const contentLines = content.split("\n");
  const i = pattern.findIn(contentLines);
  if (i === -1) return undefined;
  const indents = contentLines.slice(i, i + pattern.oldLines.length).map(leadingWhitespace);
  contentLines.splice(i, pattern.oldLines.length, rebase(indents, pattern.oldLines, newText));
  return contentLines.join("\n");
}

/**
 * Applies `edits` in order to LF-normalized `content`: first exact occurrence (inserted literally),
 * else the first whitespace-tolerant line match (linear time), keeping the original indentation.
 * @throws Error `Could not find exact match for edit:\n<oldText>` when an edit matches nowhere.
 */
export function applyEdits(content: string, edits: readonly EditOperation[]): string {
  let result = content;
  for (const edit of edits) {
    const oldText = normalizeLineEndings(edit.oldText);
    const newText = normalizeLineEndings(edit.newText);
    const at = result.indexOf(oldText);
    if (at !== -1) {
      // Slicing instead of String#replace keeps `$&`, `$1`, `$$` in newText literal.
      result = result.slice(0, at) + newText + result.slice(at + oldText.length);
      continue;
    }
    const replaced = replaceWhitespaceTolerant(result, oldText, newText);
    if (replaced === undefined) {
      throw new Error(`Could not find exact match for edit:\n${edit.oldText}`);
    }
    result = replaced;
  }
  return result;
}

/** Wraps `diff` in a ```diff fence longer than any backtick run inside it, followed by a blank line. */
export function fenceDiff(diff: string): string {
  let longestRun = 0;
  for (const run of diff.match(/`+/g) ?? []) longestRun = Math.max(longestRun, run.length);
  const fence = "`".repeat(Math.max(3, longestRun + 1));
  return `${fence}diff\n${diff}${fence}\n\n`;
}
