/**
 * An edit's refusals as values (STYLE 27): why edit_file wrote nothing, with
 * the fields a caller or a test reads, and their wording, made once here.
 * `edit` is the edit's index in the call's `edits`.
 */
import { formatCount } from "../kernel/bounded.js";

/** Why an edit was refused; the whole call writes nothing. */
export type EditRefusal =
  /** Its `field` holds a lone surrogate, which no file's bytes can match or hold. */
  | { kind: "loneSurrogate"; edit: number; field: "oldText" | "newText" }
  /** An empty old text: it occurs everywhere, so it names no place (with or without replaceAll). */
  | { kind: "emptyOldText"; edit: number }
  /** Its old text matches nowhere, exactly or ignoring whitespace (lines over `maxLineBytes` only exactly). */
  | { kind: "notFound"; edit: number; edits: number; oldText: string; maxLineBytes: number }
  /** Its old text is in `count` places, first at `lines` (1-based); `tolerant`: only ignoring whitespace. */
  | { kind: "ambiguous"; edit: number; count: number; lines: readonly number[]; tolerant: boolean }
  /** replaceAll found no exact occurrence of its old text. */
  | { kind: "noOccurrence"; edit: number }
  /** replaceAll would make more than the `left` replacements the call has left of its `limit`. */
  | { kind: "tooMany"; edit: number; left: number; limit: number };

/** The one wording of each refusal. */
function textOf(r: EditRefusal): string {
  switch (r.kind) {
    case "loneSurrogate":
      return `edits[${r.edit}].${r.field} is not well-formed Unicode (a lone surrogate)`;
    case "emptyOldText":
      // An empty text occurs everywhere, so it names no place: applying it first-match would silently prepend.
      return (
        `edits[${r.edit}].oldText is empty: an empty text occurs everywhere, so it names no place to edit; nothing was written. ` +
        "Put the text next to the change in oldText (and in newText), use append_file to add at the end, or write_file for a whole file."
      );
    case "notFound":
      return (
        `Could not find exact match for edit:\n${r.oldText}\n(edits[${r.edit}], edit ${r.edit + 1} of ${r.edits}, ` +
        "applied to the text as the edits before it left it; lines over " +
        `${formatCount(r.maxLineBytes)} bytes are matched only exactly, not ignoring whitespace)${numberedNote(r.oldText)}`
      );
    case "ambiguous": {
      const more = r.count > r.lines.length ? ", …" : "";
      const where = `${r.count} places (line${r.lines.length === 1 ? "" : "s"} ${r.lines.join(", ")}${more})`;
      const what = r.tolerant ? `has no exact match and matches ${where} ignoring whitespace` : `occurs in ${where}`;
      return (
        `edits[${r.edit}].oldText ${what} in the text as the edits before it left it; nothing was written. ` +
        "Add surrounding lines to oldText until it is unique, or pass replaceAll: true to replace every exact occurrence."
      );
    }
    case "noOccurrence":
      return (
        `edits[${r.edit}].oldText has no exact occurrence in the text as the edits before it left it (replaceAll matches ` +
        "exactly, not ignoring whitespace); nothing was written"
      );
    case "tooMany":
      return (
        `edits[${r.edit}]: replaceAll would make more than ${formatCount(r.left)} replacements (the limit is ` +
        `${formatCount(r.limit)} a call); nothing was written. Split the change into calls with longer oldText.`
      );
  }
}

// A line as a numbered view shows it: search_file_contents' `12:` and `12-`, `cat -n`'s tab, an arrow or a bar.
const NUMBERED_LINE = /^\s*\d+(?:[:\-\u2192|]|\t)/;

/** For an old text found nowhere whose every line starts with a line number: that the number is not the file's text. */
function numberedNote(oldText: string): string {
  const lines = oldText.split("\n").filter((line) => line.trim() !== "");
  if (lines.length === 0 || !lines.every((line) => NUMBERED_LINE.test(line))) return "";
  return (
    "\nIts lines start with line numbers, as search_file_contents shows them (12: for a match, 12- for context); " +
    "oldText is the file's own text, without them (read_text_file with startLine shows it)."
  );
}

/** The error that carries an edit's refusal, worded once. */
export class EditRefused extends Error {
  constructor(readonly refusal: EditRefusal) {
    super(textOf(refusal));
    this.name = "EditRefused";
  }
}
