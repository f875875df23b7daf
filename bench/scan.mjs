/**
 * The scanner rows (SPEC §11 "Scanning speed"): the cold first window of the
 * big file, 50 concurrent cold windows, and a warm line window deep in it,
 * each against `LC_ALL=C grep -c` on the same file timed in the same run.
 */
import { spawn } from "node:child_process";
import { median, repeat, withServer } from "./server.mjs";

/** Wall time of `LC_ALL=C grep -c <pattern> file` with its output piped to this process, in ms. */
export function timeGrep(file, pattern = "x") {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn("grep", ["-c", pattern, file], { stdio: ["ignore", "pipe", "inherit"], env: { ...process.env, LC_ALL: "C" } });
    child.stdout.resume();
    child.on("error", reject);
    child.on("close", (code) => {
      const ms = performance.now() - started;
      // grep -c exits 1 when nothing matched; that is still a full pass.
      if (code === 0 || code === 1) resolve(ms);
      else reject(new Error(`grep -c ${pattern} ${file} exited with ${code}`));
    });
  });
}

/** Median of `runs` grep passes after one warm-up (which also warms the page cache). */
export async function grepBaseline(file, runs) {
  await timeGrep(file);
  return median(await repeat(runs, () => timeGrep(file)));
}

/** Cold first window (a fresh server each run), 50 concurrent cold windows, and a warm window at `line`. */
export async function scanScenario(fx, runs, grepMs, line) {
  const path = fx.text;
  const colds = await repeat(runs, () => withServer(fx.root, [], (s) => s.call("read_text_file", { path })));
  const cold = median(colds.map((c) => c.value.ms));
  const coldRss = Math.max(...colds.map((c) => c.rssMb));
  const concurrent = await withServer(fx.root, [], async (s) => {
    const started = performance.now();
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => s.call("read_text_file", { path, offset: i * 1000 })));
    return { ms: performance.now() - started, chars: results[0].text.length };
  });
  const lines = await withServer(fx.root, [], async (s) => {
    await s.call("read_text_file", { path, startLine: 1, lineCount: 1 });
    return repeat(runs, () => s.call("read_text_file", { path, startLine: line, lineCount: 20 }));
  });
  const lineMs = median(lines.value.map((c) => c.ms));
  const grepRatio = (ms, max) => ({ value: ms / grepMs, ...(max === undefined ? { info: true } : { max }), label: "vs grep -c" });
  return [
    { name: "LC_ALL=C grep -c x big file | (piped)", ms: grepMs, chars: undefined },
    {
      name: "read_text_file first window (cold, fresh server)",
      ms: cold,
      chars: colds[0].value.text.length,
      rssMb: coldRss,
      ratio: grepRatio(cold, 2),
    },
    {
      name: "50 concurrent cold windows (one shared pass)",
      ms: concurrent.value.ms,
      chars: concurrent.value.chars,
      rssMb: concurrent.rssMb,
      ratio: grepRatio(concurrent.value.ms),
    },
    {
      name: `read_text_file startLine=${line.toLocaleString("en-US")} lineCount=20 (warm)`,
      ms: lineMs,
      chars: lines.value[0].text.length,
      rssMb: lines.rssMb,
      ratio: grepRatio(lineMs),
    },
  ];
}
