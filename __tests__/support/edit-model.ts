/**
 * The naive reference of edit_file's placement rule (SPEC §15), for tests only: every occurrence
 * found by trying each position in turn, every whitespace-tolerant candidate by comparing each run
 * of lines, no windows, no first pass. A single placement is then applied by upstream's in-memory
 * algorithm (edits.ts applyEdits), which puts it in the one place there is; replaceAll is split/join.
 */
import { applyEdits, normalizeLineEndings, type EditOperation } from "../../src/editing/index.js";

/** What edit_file must do with `edits` on an LF text: the new text and each edit's count, or the refusal's words. */
export type ModelOutcome = { text: string; counts: number[] } | { error: string };

/** Every position of `needle` in `text` (overlapping ones too), by trying each. */
function everyPosition(text: string, needle: string): number[] {
  const out: number[] = [];
  for (let i = 0; i + needle.length <= text.length; i++) if (text.startsWith(needle, i)) out.push(i);
  return out;
}

/** Starting line indexes of every run of lines equal to `oldLines` after trim(). */
function everyTolerantRun(lines: readonly string[], oldLines: readonly string[]): number[] {
  const out: number[] = [];
  for (let i = 0; i + oldLines.length <= lines.length; i++) {
    if (oldLines.every((old, j) => lines[i + j]?.trim() === old.trim())) out.push(i);
  }
  return out;
}

const lineOf = (text: string, at: number): number => text.slice(0, at).split("\n").length;

function refusal(k: number, lines: readonly number[], tolerant: boolean): string {
  const shown = lines.slice(0, 10).join(", ") + (lines.length > 10 ? ", …" : "");
  const where = `${lines.length} places (lines ${shown})`;
  return `edits[${k}].oldText ${tolerant ? `has no exact match and matches ${where} ignoring whitespace` : `occurs in ${where}`}`;
}

/** Applies `edits` to the LF-normalized `original` by the placement rule, naively. */
export function modelEdits(original: string, edits: readonly EditOperation[]): ModelOutcome {
  let text = original;
  const counts: number[] = [];
  // An empty oldText is refused before any edit is tried (it would match everywhere).
  const empty = edits.findIndex((edit) => edit.oldText === "");
  if (empty !== -1) return { error: `edits[${empty}].oldText is empty` };
  for (const [k, edit] of edits.entries()) {
    const oldText = normalizeLineEndings(edit.oldText);
    const newText = normalizeLineEndings(edit.newText);
    if (edit.replaceAll === true) {
      const parts = text.split(oldText);
      if (parts.length === 1) return { error: `edits[${k}].oldText has no exact occurrence` };
      counts.push(parts.length - 1);
      text = parts.join(newText);
      continue;
    }
    if (oldText !== "") {
      const positions = everyPosition(text, oldText);
      if (positions.length > 1)
        return {
          error: refusal(
            k,
            positions.map((p) => lineOf(text, p)),
            false,
          ),
        };
      if (positions.length === 0) {
        const runs = everyTolerantRun(text.split("\n"), oldText.split("\n"));
        if (runs.length > 1)
          return {
            error: refusal(
              k,
              runs.map((i) => i + 1),
              true,
            ),
          };
        if (runs.length === 0) return { error: `Could not find exact match for edit:\n${edit.oldText}` };
      }
    }
    text = applyEdits(text, [edit]);
    counts.push(1);
  }
  return { text, counts };
}

/** The lines edit_file puts before its diff when an edit made more than one replacement or was a replaceAll. */
export function modelCountLines(counts: readonly number[], edits: readonly EditOperation[] = []): string {
  if (counts.every((n) => n <= 1) && !edits.some((e) => e.replaceAll === true)) return "";
  return `${counts.map((n, k) => `edits[${k}]: replaced ${n} occurrence${n === 1 ? "" : "s"}`).join("\n")}\n\n`;
}
