/**
 * directory_tree: streams `JSON.stringify(tree, null, 2)` of the upstream tree
 * into a TextSink piece by piece, so the tree is never built in memory.
 */
import { Minimatch } from "minimatch";
import type { TextSink } from "../bounded.js";
import { jsonName } from "../escape.js";
import { walkTree, type WalkOptions } from "./walker.js";

/** Upstream's directory_tree exclusion: `*` patterns as given, others also as `**\/p` and `**\/p/**`. */
export function treeExcluder(excludePatterns: readonly string[]): (rel: string) => boolean {
  const matchers = excludePatterns.flatMap((p) =>
    (p.includes("*") ? [p] : [p, `**/${p}`, `**/${p}/**`]).map((glob) => new Minimatch(glob, { dot: true })),
  );
  return (rel) => matchers.some((m) => m.match(rel));
}

/**
 * Writes the directory_tree JSON of `root` into `sink`, byte-identical to
 * upstream's, then a note if subdirectories could not be read.
 * @throws when `root` cannot be read, or the signal's reason when cancelled
 */
export async function treeInto(
  root: string,
  excludePatterns: readonly string[],
  sink: TextSink,
  opts: WalkOptions,
): Promise<void> {
  // childCounts[d] = elements written so far into the innermost open array at depth d.
  const childCounts: number[] = [0];
  const indents: string[] = [];
  const indent = (depth: number): string => (indents[depth] ??= " ".repeat(2 + 4 * depth));
  sink.append("[");
  const skipped = await walkTree(
    root,
    {
      excluded: treeExcluder(excludePatterns),
      enter(_dir, entry, _rel, depth) {
        const written = childCounts[depth] ?? 0;
        childCounts[depth] = written + 1;
        const ind = indent(depth);
        const head = `${written === 0 ? "\n" : ",\n"}${ind}{\n${ind}  "name": ${jsonName(entry.name)},\n${ind}  "type": `;
        if (entry.isDirectory()) {
          childCounts[depth + 1] = 0;
          sink.append(`${head}"directory",\n${ind}  "children": [`);
        } else {
          sink.append(`${head}"file"\n${ind}}`);
        }
      },
      leave(depth) {
        const ind = indent(depth);
        sink.append(`${childCounts[depth + 1] ? `\n${ind}  ]` : "]"}\n${ind}}`);
      },
    },
    opts,
  );
  sink.append(childCounts[0] ? "\n]" : "]");
  skipped.appendNote(sink);
}
