/**
 * The content-search rows (SPEC §10/§11 "Scanning speed"): search_file_contents
 * in count mode over the big file and over the tree, each against GNU grep on
 * the same input timed in the same run, and each checked against grep's total.
 */
import fs from "node:fs";
import { grepTimed, grepTotal } from "./commands.mjs";
import { median, repeat, withServer } from "./server.mjs";

// One of the generator's words (fixtures.mjs ASCII_WORDS): it occurs on about one line in 18.
export const WORD = "nahecghc";
export const REGEX = "nah[a-e]+ghc";
// SPEC §23: a regex without any literal every match must hold, so nothing prefilters it.
export const NO_LITERAL = "[A-Z][a-z]+ [0-9]{4,5} [a-z]+[.,;]";
// Nor this one, which opens with a repeated class (tried from every letter of every word) and ignores case.
export const REPEATED = "[a-z]+ [0-9]{4,5} [a-z]+[.,;]";
// Nor this one, whose \s may match characters past ASCII (so the Latin-1 view alone cannot decide a line holding them).
export const WIDE = "[A-Z]\\w+\\s[0-9]{4,5}";

/** The matching-line total of a result ("Found 34,494 matching lines in …", first in count mode, after the lines in lines mode). */
function serverTotal(text) {
  const m = /^Found ([\d,]+) matching lines?/m.exec(text);
  if (!m) throw new Error(`search_file_contents gave no total: ${text.slice(0, 200)}`);
  return Number(m[1].replaceAll(",", ""));
}

/** `runs` identical calls on one fresh server; the median, the first result's text and the peak RSS. */
async function serverTimed(root, args, runs) {
  const { value, rssMb } = await withServer(root, [], (s) => repeat(runs, () => s.call("search_file_contents", args)));
  return { ms: median(value.map((c) => c.ms)), text: value[0].text, rssMb };
}

/** A grep row and a server row with its ratio; `ok` says the two totals agree. */
async function compare(root, { name, what, grepArgs, args, max, runs, label, total = grepTotal }) {
  const grep = await grepTimed(grepArgs, runs);
  const ours = await serverTimed(root, { outputMode: "count", ...args }, runs);
  const expected = total(grep.stdout);
  const got = serverTotal(ours.text);
  const same = expected === got;
  return [
    { name: `LC_ALL=C grep ${grepArgs.slice(0, -1).join(" ")} ${what} | (piped)`, ms: grep.ms, chars: undefined },
    {
      name: `${name}${same ? "" : ` (TOTAL ${got} ≠ grep's ${expected})`}`,
      ms: ours.ms,
      chars: ours.text.length,
      rssMb: ours.rssMb,
      ratio: { value: ours.ms / grep.ms, max, label },
      ok: same,
    },
  ];
}

/** The start of the first whole line past the middle of `file`: a literal found on a line or two of it. */
function rareLiteral(file) {
  const fd = fs.openSync(file, "r");
  try {
    const buf = Buffer.alloc(4096);
    fs.readSync(fd, buf, 0, buf.length, Math.floor(fs.fstatSync(fd).size / 2));
    const start = buf.indexOf(10) + 1;
    return buf.toString("latin1", start, start + 24);
  } finally {
    fs.closeSync(fd);
  }
}

/** Literal (case-sensitive and not) and regex count searches of the big file vs grep -c / -ci / -cE, and a lines-mode one vs grep -n. */
export async function bigFileSearchScenario(fx, runs) {
  const file = fx.text;
  const rare = rareLiteral(file);
  const cases = [
    {
      // Lines mode, the tool's default: the lines before each match counted for its number, as grep -n counts them.
      name: `search_file_contents "${rare}" caseSensitive, lines`,
      what: "big file",
      grepArgs: ["-n", "-F", rare, file],
      args: { path: file, query: rare, caseSensitive: true, outputMode: "lines" },
      max: 2,
      label: "vs grep -n",
      total: (stdout) => stdout.split("\n").filter((line) => line !== "").length,
    },
    {
      name: `search_file_contents "${WORD}" caseSensitive, count`,
      what: "big file",
      grepArgs: ["-c", WORD, file],
      args: { path: file, query: WORD, caseSensitive: true },
      max: 2,
      label: "vs grep -c",
    },
    {
      name: `search_file_contents "${WORD.toUpperCase()}" (case-insensitive), count`,
      what: "big file",
      grepArgs: ["-ci", WORD.toUpperCase(), file],
      args: { path: file, query: WORD.toUpperCase() },
      max: 2,
      label: "vs grep -ci",
    },
    {
      name: `search_file_contents /${REGEX}/ caseSensitive, count`,
      what: "big file",
      grepArgs: ["-cE", REGEX, file],
      args: { path: file, query: REGEX, regex: true, caseSensitive: true },
      max: 4,
      label: "vs grep -cE",
    },
    {
      name: `search_file_contents /${NO_LITERAL}/ caseSensitive (no required literal), count`,
      what: "big file",
      grepArgs: ["-cE", NO_LITERAL, file],
      args: { path: file, query: NO_LITERAL, regex: true, caseSensitive: true },
      max: 2,
      label: "vs grep -cE",
    },
    {
      name: `search_file_contents /${REPEATED}/ (case-insensitive, no required literal), count`,
      what: "big file",
      grepArgs: ["-ciE", REPEATED, file],
      args: { path: file, query: REPEATED, regex: true },
      max: 2,
      label: "vs grep -ciE",
    },
    {
      name: `search_file_contents /${WIDE}/ caseSensitive (past ASCII, no required literal), count`,
      what: "big file",
      grepArgs: ["-cE", WIDE, file],
      args: { path: file, query: WIDE, regex: true, caseSensitive: true },
      max: 2,
      label: "vs grep -cE",
    },
  ];
  const rows = [];
  for (const c of cases) rows.push(...(await compare(fx.root, { ...c, runs })));
  return rows;
}

/** A literal count search of every file of the tree vs grep -r -c; target ≤ 3. */
export async function treeSearchScenario(fx, runs) {
  const files = fx.treeText.files.toLocaleString("en-US");
  return compare(fx.root, {
    name: `search_file_contents "${WORD}" over tree (${files} files), count`,
    what: "tree",
    grepArgs: ["-r", "-c", WORD, fx.tree],
    args: { path: fx.tree, query: WORD, caseSensitive: true, respectGitignore: false },
    max: 3,
    label: "vs grep -r -c",
    runs,
  });
}
