/**
 * Reference command-line tools timed in the same run as the server: run under
 * LC_ALL=C with their output piped to this process and drained (GNU grep
 * writing to /dev/null stops at the first match, so /dev/null would flatter it).
 */
import { spawn } from "node:child_process";
import { median, repeat } from "./server.mjs";

/**
 * Runs `cmd args`; resolves with its wall time in ms and its stdout. Exit codes
 * in `okCodes` count as success (grep exits 1 when nothing matched: still a full pass).
 */
export function timeCommand(cmd, args, okCodes = [0]) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(cmd, args, { stdio: ["ignore", "pipe", "inherit"], env: { ...process.env, LC_ALL: "C" } });
    const chunks = [];
    let kept = 0;
    child.stdout.on("data", (chunk) => {
      // grep -r -c prints a line per file; keep enough to total it, not more than needed.
      if (kept < 64 * 1024 * 1024) chunks.push(chunk);
      kept += chunk.length;
    });
    child.on("error", reject);
    child.on("close", (code) => {
      const ms = performance.now() - started;
      if (okCodes.includes(code)) resolve({ ms, stdout: Buffer.concat(chunks).toString("utf8") });
      else reject(new Error(`${cmd} ${args.join(" ")} exited with ${code}`));
    });
  });
}

/** Median wall time of `runs` grep passes after one warm-up (which also warms the page cache), and grep's stdout. */
export async function grepTimed(args, runs) {
  const warm = await timeCommand("grep", args, [0, 1]);
  const times = await repeat(runs, () => timeCommand("grep", args, [0, 1]));
  return { ms: median(times.map((t) => t.ms)), stdout: warm.stdout };
}

/** The total of grep -c's output: one number, or one `path:count` line per file with -r. */
export function grepTotal(stdout) {
  let total = 0;
  for (const line of stdout.split("\n")) {
    const m = /(\d+)$/.exec(line);
    if (m) total += Number(m[1]);
  }
  return total;
}
