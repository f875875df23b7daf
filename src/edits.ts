import { createTwoFilesPatch } from "diff";

/** One text replacement requested by edit_file / applyFileEdits. */
export interface EditOperation {
  oldText: string;
  newText: string;
}

/** Returns `text` with every CRLF turned into LF (lone CRs are kept). */
export function normalizeLineEndings(text: string): string {
  return text.replace(/\r\n/g, "\n");
}

/** Returns a unified diff (headers `original`/`modified`) of the two texts after CRLF→LF normalization. */
export function createUnifiedDiff(original: string, modified: string, filepath = "file"): string {
  return createTwoFilesPatch(
    filepath,
    filepath,
    normalizeLineEndings(original),
    normalizeLineEndings(modified),
    "original",
    "modified",
  );
}

function leadingWhitespace(line: string): string {
  return /^\s*/.exec(line)?.[0] ?? "";
}

function replaceWhitespaceTolerant(content: string, oldText: string, newText: string): string | undefined {
  const oldLines = oldText.split("\n");
  const contentLines = content.split("\n");
  for (let i = 0; i + oldLines.length <= contentLines.length; i++) {
    const matches = oldLines.every((oldLine, j) => oldLine.trim() === (contentLines[i + j] ?? "").trim());
    if (!matches) continue;
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
    contentLines.splice(i, oldLines.length, ...replacement);
    return contentLines.join("\n");
  }
  return undefined;
}

/**
 * Applies `edits` in order to LF-normalized `content`: first exact occurrence (inserted literally),
 * else a whitespace-tolerant line match keeping the original indentation.
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
