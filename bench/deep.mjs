/**
 * The hostile-tree rows (issue 18): a 5,000-deep tree walked by each walking
 * tool on a fresh server (time against `find` on the same tree, peak RSS, and
 * the most descriptors the server held, sampled from /proc), four such walks
 * at once, and two .gitignore files — the hostile a/**\/…(12×) rule over a
 * 44-deep a/a/… tree, and 66,229 plain rules over 3,000 files — with the
 * longest wait of a ping sent every 10 ms during the search. Fixtures are
 * generated once into the bench directory. `npm run bench` runs these rows
 * with the others; `node bench/deep.mjs` (after a build) runs them alone.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { median, repeat, startServer, timeFind } from "./server.mjs";
import { group, renderTable } from "./table.mjs";

const DEPTH = 5000;

// Laid out by a child walking down with chdir, so no path it uses is longer than a name.
const LAYOUT = `
const fs = require("node:fs");
const [root, depth] = process.argv.slice(1);
process.chdir(root);
for (let i = 0; i < Number(depth); i++) { fs.mkdirSync("d"); fs.writeFileSync("f.txt", "level " + i + "\\n"); process.chdir("d"); }
fs.writeFileSync("deepest.txt", "the deepest needle\\n");
`;

function ensureDeep(dir) {
  const root = path.join(dir, `deep-${DEPTH}`);
  if (fs.existsSync(path.join(root, ".complete"))) return root;
  if (fs.existsSync(root)) spawnSync("rm", ["-rf", root]);
  fs.mkdirSync(root, { recursive: true });
  const made = spawnSync(process.execPath, ["-e", LAYOUT, root, String(DEPTH)], { stdio: "inherit" });
  if (made.status !== 0) throw new Error(`could not lay out ${root}`);
  fs.writeFileSync(path.join(root, ".complete"), "");
  return root;
}

function ensureGitignores(dir) {
  const hostile = path.join(dir, "gitignore-hostile");
  const large = path.join(dir, "gitignore-large");
  if (!fs.existsSync(path.join(hostile, ".complete"))) {
    fs.rmSync(hostile, { recursive: true, force: true });
    fs.mkdirSync(hostile, { recursive: true });
    fs.writeFileSync(path.join(hostile, ".gitignore"), `${"a/**/".repeat(12)}keep-out.txt\n${"a/**/".repeat(12)}z\n`);
    let d = hostile;
    for (let level = 1; level <= 44; level++) {
      d = path.join(d, "a");
      fs.mkdirSync(d);
      fs.writeFileSync(path.join(d, "keep-out.txt"), "needle\n");
      for (let i = 0; i < 100; i++) fs.writeFileSync(path.join(d, `n${i}.txt`), "needle\n");
    }
    fs.writeFileSync(path.join(hostile, ".complete"), "");
  }
  if (!fs.existsSync(path.join(large, ".complete"))) {
    fs.rmSync(large, { recursive: true, force: true });
    fs.mkdirSync(large, { recursive: true });
    const rules = Array.from({ length: 66_229 }, (_, k) => [`gen-${k}.dat`, `/d${k % 30}/out-${k}.log`, `cache-${k}/`, `!keep-${k}.o`][k % 4]);
    fs.writeFileSync(path.join(large, ".gitignore"), `*.o\n${rules.join("\n")}\n`);
    for (let d = 0; d < 30; d++) {
      fs.mkdirSync(path.join(large, `d${d}`));
      for (let j = 0; j < 100; j++) {
        const k = 4 * (d * 100 + j);
        fs.writeFileSync(path.join(large, `d${d}`, [`gen-${k}.dat`, `keep-${k + 3}.o`, `plain-${k}.txt`][j % 3]), "needle\n");
      }
    }
    fs.writeFileSync(path.join(large, ".complete"), "");
  }
  return { hostile, large, largeBytes: fs.statSync(path.join(large, ".gitignore")).size };
}

/** Runs `fn(server)` on a fresh server over `root`, sampling its descriptors; returns the value, peak RSS and peak fds. */
async function watched(root, fn) {
  const server = await startServer(root);
  let fdPeak = 0;
  const sample = () => {
    try {
      fdPeak = Math.max(fdPeak, fs.readdirSync(`/proc/${server.pid}/fd`).length);
    } catch {}
  };
  const timer = setInterval(sample, 5);
  try {
    const value = await fn(server);
    sample();
    return { value, rssMb: server.peakRssMb(), fdPeak };
  } finally {
    clearInterval(timer);
    await server.close();
  }
}

/** The longest a ping sent every 10 ms waited while `call` ran. */
async function pingWaitsDuring(server, call) {
  let longest = 0;
  let done = false;
  const pinging = (async () => {
    while (!done) {
      const started = performance.now();
      await server.ping();
      longest = Math.max(longest, performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  })();
  try {
    return { result: await call(), longest };
  } finally {
    done = true;
    await pinging;
  }
}

const DEEP_WALKS = [
  ["directory_tree", {}],
  ["search_files", { pattern: "**/deepest.txt" }],
  ["search_file_contents", { query: "deepest", outputMode: "count" }],
];

/** The deep-tree and .gitignore rows. */
export async function hostileTreeScenario(dir, runs) {
  const deep = ensureDeep(dir);
  const { hostile, large, largeBytes } = ensureGitignores(dir);
  await timeFind(deep);
  const findMs = median(await repeat(runs, () => timeFind(deep)));
  const rows = [{ name: `find over a ${group(DEPTH)}-deep tree > /dev/null`, ms: findMs, chars: undefined }];
  for (const [tool, args] of DEEP_WALKS) {
    const { value, rssMb, fdPeak } = await watched(deep, (s) => repeat(runs, () => s.call(tool, { path: deep, ...args })));
    const ms = median(value.map((c) => c.ms));
    rows.push({
      name: `${tool}, ${group(DEPTH)} deep (fd peak ${fdPeak})`,
      ms,
      chars: value[0].text.length,
      rssMb,
      ratio: { value: ms / findMs, info: true },
    });
  }
  const together = await watched(deep, async (s) => {
    const started = performance.now();
    const calls = await Promise.all([...DEEP_WALKS, DEEP_WALKS[0]].map(([tool, args]) => s.call(tool, { path: deep, ...args })));
    return { ms: performance.now() - started, chars: calls.reduce((n, c) => n + c.text.length, 0) };
  });
  rows.push({
    name: `4 walks at once, ${group(DEPTH)} deep (fd peak ${together.fdPeak})`,
    ms: together.value.ms,
    chars: together.value.chars,
    rssMb: together.rssMb,
  });
  for (const [label, root] of [
    ["a/**/ ×12 .gitignore rule, 44-deep a/a/…", hostile],
    [`66,229-rule .gitignore (${group(largeBytes)} bytes), 3,000 files`, large],
  ]) {
    const args = { path: root, query: "needle", outputMode: "count" };
    // A first search warms the server up (its first call alone stalls it for ~0.1-0.2 s, whatever the tree).
    const { value, rssMb } = await watched(root, async (s) => {
      await s.call("search_file_contents", args);
      return pingWaitsDuring(s, () => s.call("search_file_contents", args));
    });
    rows.push({
      name: `search_file_contents, ${label} (longest ping wait ${value.longest.toFixed(0)} ms)`,
      ms: value.result.ms,
      chars: value.result.text.length,
      rssMb,
    });
  }
  return rows;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const dir = process.env.BENCH_DIR || path.join(os.tmpdir(), "bounded-fs-bench-v1");
  console.log(renderTable(await hostileTreeScenario(dir, 3)));
}
