import { createTwoFilesPatch, formatPatch, type StructuredPatch } from "diff";

/** One text replacement requested by edit_file / applyFileEdits. */
export interface EditOperation {
  oldText: string;
  newText: string;
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
  const exact = createTwoFilesPatch(filepath, filepath, before, after, "original", "modified", {
    maxEditLength: DIFF_MAX_EDIT_LENGTH,
    timeout: DIFF_TIMEOUT_MS,
  });
  return exact ?? coarseUnifiedDiff(before, after, filepath);
}

/** Splits like the diff package's line tokenizer: each line keeps its `\n`, no empty last line. */
function splitKeepingNewlines(text: string): string[] {
  return text === "" ? [] : text.split(/(?<=\n)/);
}

/** One hunk (up to 4 context lines) replacing everything between the common leading and trailing lines; none if equal. */
export function coarseHunk(original: string, modified: string): StructuredPatch["hunks"][number] | undefined {
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
  const patch: StructuredPatch = {
    oldFileName: filepath,
    newFileName: filepath,
    oldHeader: "original",
    newHeader: "modified",
    hunks: hunk === undefined ? [] : [hunk],
  };
  return formatPatch(patch);
}

function leadingWhitespace(line: string): string {
  return /^\s*/.exec(line)?.[0] ?? "";
}

/**
 * Index of the first window of `contentLines` equal to `oldLines` line by line after trim(), or -1.
 * Each distinct trimmed old line gets an integer id and KMP runs over the ids, so the search is
 * linear (the naive window-by-window comparison was O(lines × oldLines)) and exact.
 */
function findTrimmedLines(contentLines: readonly string[], oldLines: readonly string[]): number {
  const ids = new Map<string, number>();
  const pattern = new Int32Array(oldLines.length);
  oldLines.forEach((line, j) => {
    const key = line.trim();
    let id = ids.get(key);
    if (id === undefined) {
      id = ids.size;
      ids.set(key, id);
    }
    pattern[j] = id;
  });
  // border[q]: length of the longest proper prefix of pattern[0..q] that is also its suffix.
  const border = new Int32Array(pattern.length);
  for (let q = 1, k = 0; q < pattern.length; q++) {
    while (k > 0 && pattern[q] !== pattern[k]) k = border[k - 1] ?? 0;
    if (pattern[q] === pattern[k]) k++;
    border[q] = k;
  }
  let matched = 0;
  for (let i = 0; i < contentLines.length; i++) {
    // -1 is no pattern id: a content line whose trimmed text is not in oldText matches nothing.
    const id = ids.get((contentLines[i] ?? "").trim()) ?? -1;
    while (matched > 0 && id !== pattern[matched]) matched = border[matched - 1] ?? 0;
    if (id === pattern[matched]) matched++;
    if (matched === pattern.length) return i - matched + 1;
  }
  return -1;
}

function replaceWhitespaceTolerant(content: string, oldText: string, newText: string): string | undefined {
  const oldLines = oldText.split("\n");
  const contentLines = content.split("\n");
  const i = findTrimmedLines(contentLines, oldLines);
  if (i === -1) return undefined;
  const baseIndent = leadingWhitespace(contentLines[i] ?? "");
  const replacement = newText.split("\n").map((line, j) => {
    if (j === 0) return baseIndent + line.trimStart();
    // Upstream only re-bases a line when both the old and the new line are
    // indented; otherwise the new line is taken verbatim.
    const oldIndent = leadingWhitespace(oldLines[j] ?? "");
    const newIndent = leadingWhitespace(line);
    if (oldIndent === "" || newIndent === "") return line;
    const extra = Math.max(0, newIndent.length - oldIndent.length);
    return baseIndent + " ".repeat(extra) + line.trimStart();
  });
  // concat rather than splice(i, n, ...replacement): spreading a huge newText as call
  // arguments overflows the stack.
  return contentLines
    .slice(0, i)
    .concat(replacement, contentLines.slice(i + oldLines.length))
    .join("\n");
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
