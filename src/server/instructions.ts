/**
 * The server's `instructions` (initialize result): the facts every tool shares,
 * said once where a model reads them, so each tool description keeps only what
 * is its own.
 */
import { cutFrame, formatCount, pageFrame, type Limits } from "../kernel/bounded.js";
import type { ToolDefinition } from "../tools/context.js";

// How the two notice forms end, cut from the frames that build the real notices, so what a model is
// told to look for can never drift from what it gets.
const from = (text: string, start: string): string => text.slice(text.indexOf(start));
const PAGED = from(pageFrame("A", "B", "T", "N"), "Call again");
const CUT = from(cutFrame("B", "T", "", "<advice>"), "To see the rest");

/** The tools that walk a tree, and so take globs (and .gitignore rules). */
const WALKS = ["directory_tree", "search_files", "search_file_contents", "replace_in_files"];

/**
 * The instructions text under `limits` for the `tools` registered: a fact about tools that are not
 * offered (--tools, --read-only) is left out, so a trimmed server pays only for what it has.
 */
export function instructions({ maxResultChars }: Limits, tools: readonly Pick<ToolDefinition, "name" | "annotations">[]): string {
  const cap = formatCount(maxResultChars);
  const has = (name: string) => tools.some((tool) => tool.name === name);
  return [
    `Paths: only inside the allowed directories${has("list_allowed_directories") ? " (list_allowed_directories)" : ""}; ` +
      "absolute, or relative to the first allowed directory in which the path exists (for a new path, its parent). " +
      "~ is home. Symlinks leading outside are refused.",
    `Cap: a text result over ${cap} characters is cut and ends in a notice. If it ends '${PAGED}', call again with ` +
      `that offset; if '${CUT}', narrow the request.`,
    WALKS.some(has) &&
      "Globs (pattern, excludePatterns) match the path relative to the directory given, case-sensitive, dotfiles " +
        "included: '*.md' top level only, '**/*.md' any depth. Walks enter neither excluded directories nor links to " +
        "directories.",
    tools.some((tool) => tool.annotations.readOnlyHint !== true) && "A change returns 'Successfully <done> <path as given>'.",
  ]
    .filter((line) => line !== false)
    .join("\n");
}
