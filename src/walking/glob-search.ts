/**
 * search_files: streams the matching absolute paths (or, counting only, their number) into a TextSink, with the
 * same results as lib.ts's searchFilesWithValidation but without a realpath
 * per entry (SPEC §6).
 */
import type { Dirent } from "node:fs";
import path from "node:path";
import { Minimatch } from "minimatch";
import { formatCount, type TextSink } from "../kernel/bounded.js";
import { escapeControls, type Shown } from "../kernel/escape.js";
import { GitignoreFilter, withGitignore } from "./gitignore.js";
import { walkTree, type WalkOptions } from "./walker.js";

/** One matching path of the result: on a line of its own after the first. */
function matchLine(full: Shown, first: boolean): string {
  return first ? full : `\n${full}`;
}

/**
 * Writes the search_files result for `pattern` under `root` into `sink`
 * (matching absolute paths joined by newlines, or `No matches found`), then a
 * note if subdirectories could not be read; with `respectGitignore`, what
 * `.gitignore` files inside `root` ignore (and `.git`) is left out and noted.
 * @throws when `root` cannot be read, or the signal's reason when cancelled
 */
export async function searchInto(
  root: string,
  pattern: string,
  excludePatterns: readonly string[],
  sink: TextSink,
  opts: WalkOptions,
  { respectGitignore = false, countOnly = false }: { respectGitignore?: boolean; countOnly?: boolean } = {},
): Promise<void> {
  const excludes = excludePatterns.map((p) => new Minimatch(p, { dot: true }));
  const matcher = new Minimatch(pattern, { dot: true });
  let found = 0;
  // The directory of the last match, escaped once for all its entries (escaping piecewise equals escaping whole).
  let lastDir: string | undefined;
  let shownDir = "" as Shown;
  const record = (dir: string, entry: Dirent): void => {
    if (countOnly) {
      found++;
      return;
    }
    if (dir !== lastDir) {
      lastDir = dir;
      shownDir = escapeControls(dir.endsWith(path.sep) ? dir : dir + path.sep);
    }
    const first = found++ === 0;
    const name = escapeControls(entry.name);
    // Past the cap only the length counts: building each line was a third of a 100,000-file search.
    if (sink.full) sink.appendCount((first ? 0 : 1) + shownDir.length + name.length);
    else sink.append(matchLine((shownDir + name) as Shown, first));
    sink.endEntry();
  };
  const gitignore = respectGitignore ? new GitignoreFilter(root, opts.sandbox) : undefined;
  const skipped = await walkTree(
    root,
    withGitignore(
      {
        excluded: (rel) => excludes.some((m) => m.match(rel)),
        enter(dir, entry, rel, _depth, reach) {
          if (!matcher.match(rel)) return undefined;
          // Plain entries of a real, validated directory are inside by construction;
          // only a symlink can point elsewhere, and it is never descended, so its
          // target matters only when it would be listed.
          if (!entry.isSymbolicLink()) return record(dir, entry);
          // Like validatePath: a link resolving inside passes, and so does a dangling one (a new
          // file whose validated parent is allowed); one leading outside is left out, whether or
          // not its target exists (it is resolved from inside, so nothing outside is looked at).
          const link = reach === undefined ? path.join(dir, entry.name) : reach + entry.name;
          return opts.sandbox.followLink(link, false).then((verdict) => {
            // A loop, or a target that cannot be resolved, fails upstream's validation too.
            if (verdict.kind === "inside" || verdict.kind === "dangling") record(dir, entry);
          });
        },
        leave() {},
      },
      gitignore,
    ),
    opts,
  );
  if (countOnly) sink.append(`${formatCount(found)} ${found === 1 ? "match" : "matches"}`);
  else if (found === 0) sink.append("No matches found");
  skipped.appendNote(sink);
  gitignore?.appendNote(sink);
}
