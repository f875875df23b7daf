/**
 * The server's `instructions` (initialize result): the facts every tool shares,
 * said once where a model reads them, so each tool description keeps only what
 * is its own.
 */
import { cutFrame, formatCount, pageFrame, type Limits } from "../bounded.js";

// The two notice forms with letters for their figures, built by the frames that build the real
// notices, so what a model is told to expect can never drift from what it gets.
const PAGED = pageFrame("A", "B", "T", "B");
const CUT = cutFrame("B", "T", "", "<advice>");

/** The instructions text under `limits`. */
export function instructions({ maxResultChars }: Limits): string {
  const cap = formatCount(maxResultChars);
  return [
    "Files inside the allowed directories only (list_allowed_directories).",
    "Paths: absolute, or relative to an allowed directory (the first where it, else its parent, exists); ~ is home. " +
      "Symlinks are followed only inside; outside is 'Access denied - path outside allowed directories'. Walks never " +
      "enter linked directories.",
    `Cap: a text result over ${cap} characters is cut and ends with a notice line. '${PAGED}' pages; ` +
      `'${CUT}' does not: the result is incomplete, narrow the request. Never write a cut text back.`,
    "Globs match the path relative to the given directory, case-sensitive, dotfiles included: '*.md' the top level " + "only, '**/*.md' any depth.",
    "Errors name the path or parameter and the limit.",
  ].join("\n");
}
