/**
 * The repository-scale rows (SPEC §16): search_file_contents over the repository-shaped tree
 * (repo-tree.mjs), literal and regex, count and lines mode, each against `LC_ALL=C grep -r` /
 * `grep -rE` on the same tree timed in the same run, and `rg -uu` when it is on PATH (SPEC §23:
 * within 1.3x; a row says when rg is absent), each count row checked against grep's total.
 */
import { spawnSync } from "node:child_process";
import { grepTotal, timeCommand } from "./commands.mjs";
import { median, withServer } from "./server.mjs";

export const LITERAL = "normalizePath";
export const REGEX = String.raw`function\s+[a-z]+Path\(`;

/** True when `rg` runs here. */
function haveRipgrep() {
  return spawnSync("rg", ["--version"], { stdio: "ignore" }).status === 0;
}

/** The matching-line total a result ends with ("Found 34,494 matching lines in …"). */
function serverTotal(text) {
  const m = /^Found ([\d,]+) matching lines?/m.exec(text);
  if (!m) throw new Error(`search_file_contents gave no total: ${text.slice(-300)}`);
  return Number(m[1].replaceAll(",", ""));
}

/** The four server rows and their references, for one tree. */
export async function repoSearchScenario(fx, tree, runs, treeName = "repo tree") {
  const rg = haveRipgrep();
  const cases = [
    { what: `"${LITERAL}"`, grepFlags: ["-r"], rgFlags: ["-F"], args: { query: LITERAL }, max: 1.5 },
    { what: `/${REGEX}/`, grepFlags: ["-rE"], rgFlags: [], args: { query: REGEX, regex: true }, max: 2 },
  ];
  const label = `${tree.files.toLocaleString("en-US")} files, ${Math.round(tree.bytes / (1024 * 1024))} MiB`;
  const rows = [];
  // One fresh server per row, as every other content-search row of the bench runs: its peak RSS is that row's. After
  // one untimed run of each, grep, rg and the server take turns, one run each a round: run in blocks, a slow stretch of
  // this shared machine fell on one side only (the packages rows moved by 0.3-0.5x rg from pass to pass).
  const value = [];
  for (const c of cases) {
    const pattern = c.args.query;
    for (const mode of ["count", "lines"]) {
      const grepArgs = [...c.grepFlags, mode === "count" ? "-c" : "-n", pattern, tree.dir];
      const rgArgs = ["-uu", "--no-messages", ...c.rgFlags, mode === "count" ? "-c" : "-n", pattern, tree.dir];
      const args = { path: tree.dir, caseSensitive: true, respectGitignore: false, outputMode: mode, ...c.args };
      const served = await withServer(fx.root, [], async (s) => {
        const grepWarm = await timeCommand("grep", grepArgs, [0, 1]);
        if (rg) await timeCommand("rg", rgArgs, [0, 1]);
        await s.call("search_file_contents", args);
        const grepMs = [];
        const rgMs = [];
        const calls = [];
        for (let r = 0; r < runs; r++) {
          grepMs.push((await timeCommand("grep", grepArgs, [0, 1])).ms);
          if (rg) rgMs.push((await timeCommand("rg", rgArgs, [0, 1])).ms);
          calls.push(await s.call("search_file_contents", args));
        }
        return { grep: { ms: median(grepMs), stdout: grepWarm.stdout }, rgMs: rg ? median(rgMs) : undefined, calls };
      });
      const { grep, rgMs, calls } = served.value;
      const expected = mode === "count" ? grepTotal(grep.stdout) : grep.stdout.split("\n").filter(Boolean).length;
      value.push({ c, mode, grepArgs, grep, rgMs, calls, expected, rssMb: served.rssMb });
    }
  }
  for (const { c, mode, grepArgs, grep, rgMs, calls, expected, rssMb } of value) {
    const ms = median(calls.map((x) => x.ms));
    const got = serverTotal(calls[0].text);
    const same = got === expected;
    const flags = grepArgs.slice(0, -2).join(" ");
    rows.push({ name: `LC_ALL=C grep ${flags} ${c.what} ${treeName} | (piped)`, ms: grep.ms, chars: undefined });
    if (rgMs !== undefined) rows.push({ name: `rg -uu ${mode === "count" ? "-c" : "-n"} ${c.what} ${treeName}`, ms: rgMs, chars: undefined });
    rows.push({
      name: `search_file_contents ${c.what} over ${treeName} (${label}), ${mode}${same ? "" : ` (TOTAL ${got} ≠ grep's ${expected})`}`,
      ms,
      chars: calls[0].text.length,
      rssMb,
      ratio: { value: ms / grep.ms, max: c.max, label: `vs grep ${flags}` },
      ok: same,
    });
    // SPEC §23: within 1.3x of rg -uu.
    if (rgMs !== undefined)
      rows.push({ name: "  the same, vs rg -uu", ms, chars: undefined, ratio: { value: ms / rgMs, max: 1.3, label: "vs rg -uu" } });
  }
  if (!rg) rows.unshift({ name: `rg not on PATH: the ${treeName}'s rg rows are skipped`, ms: undefined, chars: undefined });
  return rows;
}
