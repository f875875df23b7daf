/**
 * Where a content search's CPU goes (SPEC §23; issue 27 asks what remains between this server and rg):
 * one fresh server searches a tree for the literal in count mode, `runs` times after one untimed call,
 * and each of its threads' user + system time per call is read from /proc/<pid>/task; rg -uu's CPU per
 * run (user + system, its children's times as the shell that waited for it reads them from
 * /proc/self/stat) is measured in the same step. Linux only: elsewhere the rows say they were skipped.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import { LITERAL } from "./repo-search.mjs";
import { median, repeat, withServer } from "./server.mjs";

const TICK_MS = 10;

/** Each thread's CPU so far (user + system, ms) by thread id. */
function threadTimes(pid) {
  const times = new Map();
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      const fields = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8").split(") ")[1].split(" ");
      times.set(tid, (Number(fields[11]) + Number(fields[12])) * TICK_MS);
    } catch {
      // The thread ended between the listing and the read: its time is no longer the process's to split.
    }
  }
  return times;
}

/** rg's CPU (user + system, ms) for one run of `args`, read by the shell that waited for it; undefined without rg. */
function rgCpuMs(args) {
  const quoted = args.map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(" ");
  const run = spawnSync("sh", ["-c", `rg ${quoted} > /dev/null; read -r s < /proc/$$/stat; echo "$s"`], { encoding: "utf8" });
  const fields = run.stdout?.split(") ")[1]?.split(" ");
  if (run.status !== 0 || fields === undefined) return undefined;
  // After the process name: state is field 0, so cutime and cstime (fields 16 and 17 of stat) are 13 and 14.
  return (Number(fields[13]) + Number(fields[14])) * TICK_MS;
}

/** Rows for `tree`: the server's CPU per call by thread, and the total against rg's. */
export async function cpuSplitScenario(fx, tree, runs, treeName) {
  if (!fs.existsSync("/proc/self/task")) return [{ name: `CPU by thread, ${treeName}: skipped (no /proc here)`, ms: undefined, chars: undefined }];
  const args = { path: tree.dir, query: LITERAL, caseSensitive: true, respectGitignore: false, outputMode: "count" };
  const { value } = await withServer(fx.root, [], async (s) => {
    await s.call("search_file_contents", args);
    const before = threadTimes(s.pid);
    const calls = await repeat(runs, () => s.call("search_file_contents", args));
    const after = threadTimes(s.pid);
    const perCall = [...after].map(([tid, ms]) => ({ tid, ms: (ms - (before.get(tid) ?? 0)) / runs }));
    return { perCall, main: String(s.pid), wall: median(calls.map((c) => c.ms)) };
  });
  const main = value.perCall.find((t) => t.tid === value.main)?.ms ?? 0;
  const others = value.perCall.filter((t) => t.tid !== value.main).sort((a, b) => b.ms - a.ms);
  const busiest = others[0]?.ms ?? 0;
  const rest = others.slice(1).reduce((sum, t) => sum + t.ms, 0);
  const total = main + busiest + rest;
  const rgArgs = ["-uu", "--no-messages", "-F", "-c", LITERAL, tree.dir];
  rgCpuMs(rgArgs);
  const rgRuns = Array.from({ length: runs }, () => rgCpuMs(rgArgs));
  const rg = rgRuns.includes(undefined) ? undefined : median(rgRuns);
  const rows = [
    { name: `CPU a call, "${LITERAL}" count over ${treeName}: main thread (walk, opens, merges)`, ms: main, chars: undefined },
    { name: "  the busiest other thread (the scan worker)", ms: busiest, chars: undefined },
    { name: `  the other ${others.length - 1} threads (thread pool, V8)`, ms: rest, chars: undefined },
    { name: `  all threads (wall time ${Math.round(value.wall)} ms)`, ms: total, chars: undefined },
  ];
  if (rg === undefined) rows.push({ name: `rg not on PATH: ${treeName}'s CPU is not compared`, ms: undefined, chars: undefined });
  else {
    rows.push({ name: `rg -uu -F -c, CPU a run (user + system, all its threads)`, ms: rg, chars: undefined });
    rows.push({ name: "  the server's CPU vs rg's", ms: total, chars: undefined, ratio: { value: total / rg, info: true } });
  }
  return rows;
}
