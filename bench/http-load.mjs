/**
 * SPEC §17's load run: the built server with --http on 127.0.0.1, 50
 * concurrent sessions through the SDK's Streamable HTTP client, each doing
 * reads, content and name searches and edits on files every session shares,
 * for a bounded time. Reports p50/p99 latency and the server's peak RSS, and
 * checks that no call failed and no edit reported as done was lost.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { spawnHttpServer } from "./server.mjs";

const SHARED_FILES = 5;
const SLOTS_PER_SESSION = 400;
const TREE_FILES = 400;

const percentile = (sorted, p) => (sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]);
const slot = (s, k) => `slot ${s}-${k}: todo`;
const done = (s, k) => `slot ${s}-${k}: done`;

/** Lays out the shared files (every session's edit slots), a text to read and a tree to search. */
function fixtures(root, sessions) {
  fs.mkdirSync(path.join(root, "tree", "sub"), { recursive: true });
  for (let f = 0; f < SHARED_FILES; f++) {
    const lines = [];
    for (let s = 0; s < sessions; s++) for (let k = f; k < SLOTS_PER_SESSION; k += SHARED_FILES) lines.push(slot(s, k));
    fs.writeFileSync(path.join(root, `shared-${f}.txt`), `${lines.join("\n")}\n`);
  }
  const line = "the quick brown fox jumps over the lazy dog, line ";
  fs.writeFileSync(path.join(root, "read.txt"), Array.from({ length: 40_000 }, (_, i) => `${line}${i}\n`).join(""));
  for (let i = 0; i < TREE_FILES; i++) {
    const where = path.join(root, "tree", i % 2 ? "sub" : "", `file-${i}.${i % 3 ? "txt" : "md"}`);
    fs.writeFileSync(where, `file ${i}\n${i % 17 === 0 ? "needle here\n" : "nothing\n"}`);
  }
}

function startServer(root, sessions) {
  return spawnHttpServer(["--max-sessions", String(sessions + 4), root]);
}

function rssOf(pid, field) {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, "m").exec(status)?.[1] ?? 0) / 1024;
}

/** One session's loop until `deadline`: the call kinds in turn, recording latencies, failures and edits done. */
async function sessionLoop(client, s, root, deadline, record) {
  let k = 0;
  for (let turn = 0; Date.now() < deadline; turn++) {
    let name;
    let args;
    switch (turn % 4) {
      case 0:
        name = "read_text_file";
        args = { path: path.join(root, "read.txt"), offset: (turn * 7919 * (s + 1)) % 2_000_000, limit: 20_000 };
        break;
      case 1:
        name = "search_file_contents";
        args = { path: path.join(root, "tree"), query: "needle", outputMode: "files" };
        break;
      case 2:
        name = "search_files";
        args = { path: path.join(root, "tree"), pattern: "**/*.md" };
        break;
      default:
        if (k >= SLOTS_PER_SESSION) continue;
        name = "edit_file";
        args = { path: path.join(root, `shared-${k % SHARED_FILES}.txt`), edits: [{ oldText: slot(s, k), newText: done(s, k) }] };
    }
    const started = performance.now();
    try {
      const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 });
      const ms = performance.now() - started;
      if (result.isError) record.fail(`${name}: ${result.content?.[0]?.text?.slice(0, 200)}`);
      else if (name === "edit_file") record.edited(s, k);
      record.latency(name, ms);
    } catch (error) {
      record.fail(`${name}: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (name === "edit_file") k++;
  }
}

/** Runs the load for `seconds` with `sessions` sessions; returns the table rows. */
export async function httpLoadScenario({ sessions = 50, seconds = 20, log = () => undefined } = {}) {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "bfs-http-load-")));
  try {
    fixtures(root, sessions);
    const server = startServer(root, sessions);
    const url = await server.url;
    const clients = [];
    for (let s = 0; s < sessions; s++) {
      const client = new Client({ name: `load-${s}`, version: "1.0.0" });
      await client.connect(new StreamableHTTPClientTransport(new URL(url)));
      clients.push(client);
    }
    const latencies = new Map();
    const failures = [];
    const edits = [];
    const record = {
      latency: (name, ms) => (latencies.get(name) ?? latencies.set(name, []).get(name)).push(ms),
      fail: (why) => failures.push(why),
      edited: (s, k) => edits.push([s, k]),
    };
    let rssSamples = 0;
    let rssSum = 0;
    const sampler = setInterval(() => {
      rssSum += rssOf(server.child.pid, "VmRSS");
      rssSamples++;
    }, 250);
    const deadline = Date.now() + seconds * 1000;
    await Promise.all(clients.map((client, s) => sessionLoop(client, s, root, deadline, record)));
    clearInterval(sampler);
    const peakRss = rssOf(server.child.pid, "VmHWM");
    await Promise.all(clients.map((c) => c.close()));
    server.child.kill("SIGTERM");
    const exit = await server.exited;

    const text = Array.from({ length: SHARED_FILES }, (_, f) => fs.readFileSync(path.join(root, `shared-${f}.txt`), "utf8")).join("\n");
    const lines = new Set(text.split("\n"));
    const lost = edits.filter(([s, k]) => !lines.has(done(s, k))).length;
    const doneLines = [...lines].filter((l) => l.endsWith(": done")).length;
    const all = [...latencies.values()].flat().sort((a, b) => a - b);
    const calls = all.length + failures.length;
    for (const [name, list] of latencies) {
      list.sort((a, b) => a - b);
      log(`  ${name}: ${list.length} calls, p50 ${percentile(list, 50).toFixed(1)} ms, p99 ${percentile(list, 99).toFixed(1)} ms`);
    }
    log(
      `  ${calls} calls, ${failures.length} failed, ${edits.length} edits reported done, ${lost} lost (${doneLines} done lines), server exit ${exit}`,
    );
    log(`  server RSS: mean ${(rssSum / Math.max(1, rssSamples)).toFixed(1)} MiB, peak ${peakRss.toFixed(1)} MiB`);
    for (const why of failures.slice(0, 5)) log(`  failure: ${why}`);
    const ok = failures.length === 0 && lost === 0 && doneLines === edits.length && exit === 0;
    const label = `HTTP: ${sessions} sessions × ${seconds} s, reads/searches/edits on shared files (${calls} calls, ${edits.length} edits, ${lost} lost)`;
    return [
      { name: `${label}, p50`, ms: percentile(all, 50), ok },
      // 50 sessions at once: SPEC §6's 150 MB target is per call, so the peak is reported, not judged.
      { name: `HTTP: same run, p99; server peak RSS ${peakRss.toFixed(1)} MB (${sessions} sessions at once)`, ms: percentile(all, 99) },
    ];
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

// `node bench/http-load.mjs [SECONDS]`: this run alone (after `npm run build`).
if (import.meta.url === `file://${process.argv[1]}`) {
  const seconds = Number(process.argv[2] ?? 20);
  const rows = await httpLoadScenario({ seconds, log: (line) => console.error(line) });
  for (const row of rows) console.log(`${row.name}: ${row.ms.toFixed(1)} ms${row.ok === undefined ? "" : row.ok ? " (ok)" : " (FAIL)"}`);
}
