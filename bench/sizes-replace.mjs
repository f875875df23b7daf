/**
 * The rows of issue 26 (SPEC §22): search_files sorted by size over the 100,000-entry tree against
 * `find -printf '%s %p' | sort -n | tail`, and replace_in_files across a tree against `grep -rl | xargs
 * sed -i`, each timed in the same run as its reference and checked against it.
 */
import fs from "node:fs";
import path from "node:path";
import { timeCommand } from "./commands.mjs";
import { median, repeat, withServer } from "./server.mjs";

// One of the generator's words (fixtures.mjs): it occurs on about one line in 18.
const WORD = "nahecghc";

/** The five largest files of the tree: one search_files call against find, sort and tail. */
export async function largestFilesScenario(fx, runs, entries) {
  const command = `find '${fx.tree}' -type f -printf '%s %p\\n' | sort -n | tail -5`;
  await timeCommand("sh", ["-c", command]);
  const finds = await repeat(runs, () => timeCommand("sh", ["-c", command]));
  const findSizes = finds[0].stdout
    .trim()
    .split("\n")
    .map((line) => Number(line.split(" ")[0]))
    .reverse();
  const args = { path: fx.tree, pattern: "**", type: "file", sortBy: "size", limit: 5 };
  const { value, rssMb } = await withServer(fx.root, [], (s) => repeat(runs, () => s.call("search_files", args)));
  const shown = value[0].text.split("\n").slice(0, 5);
  const sizes = shown.map((line) => Number(line.slice(line.lastIndexOf("\t") + 1)));
  const ok = JSON.stringify(sizes) === JSON.stringify(findSizes);
  if (!ok) console.error(`[bench] search_files sizes ${sizes} ≠ find's ${findSizes}`);
  const findMs = median(finds.map((f) => f.ms));
  const ms = median(value.map((v) => v.ms));
  return [
    { name: `find -type f -printf '%s %p' | sort -n | tail -5 (${entries.toLocaleString("en-US")} entries)`, ms: findMs, chars: undefined },
    {
      name: `search_files type=file sortBy=size limit=5 over the tree${ok ? "" : " (SIZES DIFFER FROM FIND)"}`,
      ms,
      chars: value[0].text.length,
      rssMb,
      ratio: { value: ms / findMs, info: true, label: "vs find|sort" },
      ok,
    },
  ];
}

/**
 * Per run: two fresh copies of one tenth of the tree (10,000 files); `grep -rlZ WORD | xargs -0 sed -i` on one
 * (timed: the reference), replace_in_files on the other; the two copies must end byte-identical.
 */
export async function replaceTreeScenario(fx, runs) {
  const source = path.join(fx.tree, fs.readdirSync(fx.tree).sort()[0]);
  const bySed = path.join(fx.root, "replace-tree-sed");
  const byServer = path.join(fx.root, "replace-tree-server");
  const replacement = WORD.toUpperCase();
  const fresh = async () => {
    for (const dir of [bySed, byServer]) {
      fs.rmSync(dir, { recursive: true, force: true });
      await timeCommand("cp", ["-r", source, dir]);
    }
  };
  try {
    const { value, rssMb } = await withServer(fx.root, [], (s) =>
      repeat(runs, async () => {
        await fresh();
        const sed = await timeCommand("sh", ["-c", `grep -rlZ '${WORD}' '${bySed}' | xargs -0 sed -i 's/${WORD}/${replacement}/g'`]);
        const call = await s.call("replace_in_files", { path: byServer, query: WORD, replacement });
        const same = await timeCommand("diff", ["-rq", bySed, byServer]).then(
          () => true,
          () => false,
        );
        return { sedMs: sed.ms, ms: call.ms, chars: call.text.length, same, text: call.text };
      }),
    );
    const ok = value.every((v) => v.same);
    if (!ok) console.error(`[bench] replace_in_files result: ${value[0].text.slice(0, 300)}`);
    const files = fs.readdirSync(source, { recursive: true }).length;
    const head = value[0].text.split("\n")[0];
    return [
      {
        name: `grep -rlZ | xargs -0 sed -i over a copy of ${files.toLocaleString("en-US")} entries`,
        ms: median(value.map((v) => v.sedMs)),
        chars: undefined,
      },
      {
        name: `replace_in_files over the same (${head.replace(/;.*/, "")})${ok ? "" : " (DIFFERS FROM SED)"}`,
        ms: median(value.map((v) => v.ms)),
        chars: value[0].chars,
        rssMb,
        ratio: { value: median(value.map((v) => v.ms)) / median(value.map((v) => v.sedMs)), info: true, label: "vs sed" },
        ok,
      },
    ];
  } finally {
    fs.rmSync(bySed, { recursive: true, force: true });
    fs.rmSync(byServer, { recursive: true, force: true });
  }
}
