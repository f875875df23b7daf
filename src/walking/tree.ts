/**
 * directory_tree: streams `JSON.stringify(tree, null, 2)` of the upstream tree
 * into a TextSink piece by piece, so the tree is never built in memory.
 */
import { Minimatch } from "minimatch";
import type { TextSink } from "../kernel/bounded.js";
import { jsonName, jsonNameLength, type ShownJson } from "../kernel/escape.js";
import { GitignoreFilter, withGitignore } from "./gitignore.js";
import { excludesNothing, walkTree, type WalkOptions } from "./walker.js";

/** Upstream's directory_tree exclusion: `*` patterns as given, others also as `**\/p` and `**\/p/**`. */
function treeExcluder(excludePatterns: readonly string[]): (rel: string) => boolean {
  if (excludePatterns.length === 0) return excludesNothing;
  const matchers = excludePatterns.flatMap((p) =>
    (p.includes("*") ? [p] : [p, `**/${p}`, `**/${p}/**`]).map((glob) => new Minimatch(glob, { dot: true })),
  );
  return (rel) => matchers.some((m) => m.match(rel));
}

/** directory_tree's additions to upstream (SPEC §11); both off by default. */
export interface TreeOptions {
  /** Depth of the deepest entries listed (1 = the root's own); directories there carry DEPTH_LIMITED when they have entries, else `children: []`. */
  maxDepth?: number;
  /** Leave out `.git` and what the `.gitignore` files inside the tree ignore. */
  respectGitignore?: boolean;
}

/** The field that replaces `children` on a directory at maxDepth that has entries (an empty one keeps `children: []`). */
export const DEPTH_LIMITED = "depthLimited";

/** The opening of one entry's object, up to the value of its `type`. */
function entryHead(first: boolean, ind: string, name: ShownJson): string {
  return `${first ? "\n" : ",\n"}${ind}{\n${ind}  "name": ${name},\n${ind}  "type": `;
}

// The lengths of the pieces below for an indentation of `ind` characters, counted once the sink keeps
// nothing more: in a tree thousands of levels deep, the indentation alone makes the text quadratic.
const headLength = (first: boolean, ind: number, name: number): number => (first ? 1 : 2) + 3 * ind + 24 + name;
const LENGTHS = {
  cutHead: 11,
  limitedTail: (ind: number) => 2 * ind + 14 + DEPTH_LIMITED.length,
  emptyTail: (ind: number) => 2 * ind + 20,
  directory: (ind: number) => ind + 28,
  file: (ind: number) => ind + 8,
  close: (ind: number, empty: boolean) => (empty ? 1 : ind + 4) + ind + 2,
};
// Indentations of the first levels are kept; deeper ones are made when written, not held.
const KEPT_INDENTS = 64;

/**
 * Writes the directory_tree JSON of `root` into `sink`, byte-identical to
 * upstream's without `tree` options, then a note if subdirectories could not
 * be read (and one of what .gitignore left out).
 * @throws when `root` cannot be read, or the signal's reason when cancelled
 */
export async function treeInto(
  root: string,
  excludePatterns: readonly string[],
  sink: TextSink,
  opts: WalkOptions,
  tree: TreeOptions = {},
): Promise<void> {
  // childCounts[d] = elements written so far into the innermost open array at depth d.
  const childCounts: number[] = [0];
  const indents: string[] = [];
  const indentLength = (depth: number): number => 2 + 4 * depth;
  const indent = (depth: number): string =>
    depth < KEPT_INDENTS ? (indents[depth] ??= " ".repeat(indentLength(depth))) : " ".repeat(indentLength(depth));
  const maxDepth = tree.maxDepth ?? Infinity;
  const gitignore = tree.respectGitignore ? new GitignoreFilter(root, opts.sandbox) : undefined;
  sink.append("[");
  const skipped = await walkTree(
    root,
    withGitignore(
      {
        excluded: treeExcluder(excludePatterns),
        ignoresRel: true,
        enter(_dir, entry, _rel, depth) {
          const written = childCounts[depth] ?? 0;
          childCounts[depth] = written + 1;
          if (entry.isDirectory()) childCounts[depth + 1] = 0;
          const atCut = entry.isDirectory() && depth + 1 >= maxDepth;
          if (sink.full) {
            const ind = indentLength(depth);
            const kind = !entry.isDirectory() ? LENGTHS.file(ind) : atCut ? LENGTHS.cutHead : LENGTHS.directory(ind);
            sink.appendCount(headLength(written === 0, ind, jsonNameLength(entry.name)) + kind);
            // A directory at the cut ends in `leave`, with its tail.
            if (!atCut) sink.endEntry();
            return;
          }
          const ind = indent(depth);
          const head = entryHead(written === 0, ind, jsonName(entry.name));
          // A directory at the cut is finished in `leave`, once the walk has told whether it has entries.
          if (atCut) return sink.append(`${head}"directory"`);
          if (entry.isDirectory()) sink.append(`${head}"directory",\n${ind}  "children": [`);
          else sink.append(`${head}"file"\n${ind}}`);
          sink.endEntry();
        },
        leave(depth, cut) {
          if (cut !== undefined) {
            // A directory at the cut (an unreadable one counts as empty, and the skip note names it).
            const limited = cut.hasEntries;
            if (sink.full) sink.appendCount(limited ? LENGTHS.limitedTail(indentLength(depth)) : LENGTHS.emptyTail(indentLength(depth)));
            else {
              const ind = indent(depth);
              sink.append(limited ? `,\n${ind}  "${DEPTH_LIMITED}": true\n${ind}}` : `,\n${ind}  "children": []\n${ind}}`);
            }
            return sink.endEntry();
          }
          if (sink.full) return sink.appendCount(LENGTHS.close(indentLength(depth), !childCounts[depth + 1]));
          const ind = indent(depth);
          sink.append(`${childCounts[depth + 1] ? `\n${ind}  ]` : "]"}\n${ind}}`);
        },
      },
      gitignore,
    ),
    { ...opts, maxDepth },
  );
  sink.append(childCounts[0] ? "\n]" : "]");
  skipped.appendNote(sink);
  gitignore?.appendNote(sink);
}
