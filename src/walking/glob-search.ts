/**
 * search_files: streams the matching absolute paths (or, counting only, their number) into a TextSink, with the
 * same results as lib.ts's searchFilesWithValidation but without a realpath per entry (SPEC §6); with `type`
 * only files or only directories, with `sortBy` the best of them kept in memory bounded by `limit` or by
 * the cap (top-n.ts), each with its exact size or modification time (SPEC §22).
 */
import type { Dirent } from "node:fs";
import path from "node:path";
import { formatCount, type TextSink } from "../kernel/bounded.js";
import { escapeControls, type Shown } from "../kernel/escape.js";
import { undecodable, walkedEntryFigures } from "../sandbox/index.js";
import { entryMatcher } from "./entry-match.js";
import { GitignoreFilter, withGitignore } from "./gitignore.js";
import { TopN } from "./top-n.js";
import { excluderOf, GlobOutcome } from "./patterns.js";
import { ShownPaths, walkTree, type WalkOptions } from "./walker.js";

/** How search_files chooses and orders its matches. */
export interface SearchOptions {
  /** Leave out what `.gitignore` files inside the root ignore, and `.git`. @default false */
  respectGitignore?: boolean;
  /** Only the number of matches. @default false */
  countOnly?: boolean;
  /** Only files (anything but a directory) or only directories; a symlink counts as what it leads to. @default both */
  type?: "file" | "directory";
  /** Walk order when absent; by path, largest first, or newest first. */
  sortBy?: "name" | "size" | "modified";
  /** Only the first this many matches (after sorting); the totals still count every match. */
  limit?: number;
}

/** What a match is: a directory or not, and (sorting by size or time) its figures. */
interface Facts {
  isDir: boolean;
  size: number;
  mtimeMs: number;
}

interface Match {
  line: string;
  /** The path as shown (ties of size or time are ordered by it). */
  shown: string;
  key: number;
}

/** One matching path of the result: on a line of its own after the first. */
function matchLine(full: Shown, first: boolean): string {
  return first ? full : `\n${full}`;
}

const byPath = (a: Match, b: Match): number => (a.shown < b.shown ? -1 : a.shown > b.shown ? 1 : 0);
// a ranks after b: a smaller key (size, time), or the same key and a later path.
const worseByKey = (a: Match, b: Match): boolean => a.key < b.key || (a.key === b.key && byPath(a, b) > 0);
const worseByPath = (a: Match, b: Match): boolean => byPath(a, b) > 0;

/** The matches of a sorted search: the best kept, the rest counted, so the result's figures stay exact. */
class Ranking {
  private readonly top: TopN<Match>;
  found = 0;
  // Characters of every match's line that would be shown (no limit: all of them), kept or not.
  private chars = 0;

  constructor(
    sortBy: "name" | "size" | "modified",
    private readonly limit: number | undefined,
    private readonly room: number,
  ) {
    this.top = new TopN(sortBy === "name" ? worseByPath : worseByKey);
  }

  add(match: Match): void {
    this.found++;
    this.top.push(match);
    if (this.limit !== undefined) {
      if (this.top.size > this.limit) this.top.pop();
      return;
    }
    // Without a limit every match is shown, but past the cap only counted: keep just what fills it.
    this.chars += match.line.length + 1;
    while (this.top.size > 1 && this.top.keptChars - (this.top.worst!.line.length + 1) >= this.room) this.top.pop();
  }

  /** Appends the kept matches best first, then counts the ones the cap would hide anyway. */
  writeInto(sink: TextSink): number {
    const kept = this.top.drainBestFirst();
    kept.forEach((m, i) => {
      sink.append(i === 0 ? m.line : `\n${m.line}`);
      sink.endEntry();
    });
    if (this.limit !== undefined) return kept.length;
    const keptChars = kept.reduce((n, m) => n + m.line.length + 1, 0);
    sink.appendCount(this.chars - keptChars);
    for (let i = kept.length; i < this.found; i++) sink.endEntry();
    return this.found;
  }
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
  { respectGitignore = false, countOnly = false, type, sortBy, limit }: SearchOptions = {},
): Promise<void> {
  const matches = entryMatcher(pattern);
  // What the pattern met: an entry it may list (a `type` may leave each out); deeper ones a slash-free pattern left out.
  const outcome = new GlobOutcome(pattern);
  const figures = !countOnly && (sortBy === "size" || sortBy === "modified");
  const ranking = !countOnly && sortBy !== undefined ? new Ranking(sortBy, limit, sink.max + 1) : undefined;
  let found = 0;
  // Matches whose figures cannot be read because no string reaches them (names not valid UTF-8): noted after the walk.
  const unsized: Shown[] = [];
  const shownPaths = new ShownPaths();
  const record = (dir: string, entry: Dirent, reach: string | undefined, facts?: Facts): void => {
    outcome.matched();
    if (type !== undefined && (type === "directory") !== (facts?.isDir ?? entry.isDirectory())) return;
    if (countOnly) {
      found++;
      return;
    }
    const shownDir = shownPaths.dir(dir);
    const name = escapeControls(entry.name);
    if (ranking === undefined) {
      if (limit === undefined || found < limit) {
        const first = found === 0;
        // Past the cap only the length counts: building each line was a third of a 100,000-file search.
        if (sink.full) sink.appendCount((first ? 0 : 1) + shownDir.length + name.length);
        else sink.append(matchLine((shownDir + name) as Shown, first));
        sink.endEntry();
      }
      found++;
      return;
    }
    const shown = (shownDir + name) as Shown;
    let known = facts;
    if (figures && known === undefined) {
      known = walkedEntryFigures(dir, reach, entry.name);
      // Gone since its directory was read (no longer a match), or never reachable by this name (said after the walk).
      if (known === undefined) {
        if (undecodable(entry.name)) unsized.push(shown);
        return;
      }
    }
    const value = sortBy === "size" ? known!.size : sortBy === "modified" ? known!.mtimeMs : 0;
    const line = !figures ? shown : `${shown}\t${sortBy === "size" ? String(value) : new Date(value).toISOString()}`;
    ranking.add({ line, shown, key: value });
  };
  const gitignore = respectGitignore ? new GitignoreFilter(root, opts.sandbox) : undefined;
  const excluder = excluderOf(excludePatterns);
  const skipped = await walkTree(
    root,
    withGitignore(
      {
        excluded: excluder.excluded,
        // A pattern answered from the name alone needs no path relative to the root made for each entry.
        ignoresRel: matches.byName === true,
        enter(dir, entry, rel, _depth, reach) {
          if (!matches(rel, entry.name)) return outcome.missed(rel, entry);
          // Plain entries of a real, validated directory are inside by construction;
          // only a symlink can point elsewhere, and it is never descended, so its
          // target matters only when it would be listed.
          if (!entry.isSymbolicLink()) return record(dir, entry, reach);
          const reached = reach === undefined ? path.join(dir, entry.name) : reach + entry.name;
          // Like validatePath: a link resolving inside passes, and so does a dangling one (a new
          // file whose validated parent is allowed); one leading outside is left out, whether or
          // not its target exists (it is resolved from inside, so nothing outside is looked at).
          const verdict = opts.sandbox.followLink(reached, figures);
          // A loop, or a target that cannot be resolved, fails upstream's validation too.
          if (verdict.kind === "inside") return record(dir, entry, reach, verdict.target);
          // A dangling link is neither a file nor a directory: only a search without `type` or figures lists it.
          if (verdict.kind === "dangling" && type === undefined && !figures) return record(dir, entry, reach, { isDir: false, size: 0, mtimeMs: 0 });
          return undefined;
        },
        leave() {},
      },
      gitignore,
    ),
    opts,
  );
  for (const shown of unsized) skipped.add(shown, Object.assign(new Error("name not valid UTF-8"), { code: "EILSEQ" }));
  if (ranking !== undefined) found = ranking.writeInto(sink) === 0 ? 0 : ranking.found;
  if (countOnly) sink.append(`${formatCount(found)} ${found === 1 ? "match" : "matches"}`);
  else if (found === 0) sink.append("No matches found");
  else if (limit !== undefined && limit < found) sink.append(`\n(${formatCount(limit)} of ${formatCount(found)} matches shown: limit=${limit})`);
  const note = outcome.note("pattern", root) + excluder.note(root);
  if (note !== "") sink.append(note);
  skipped.appendNote(sink);
  gitignore?.appendNote(sink);
}
