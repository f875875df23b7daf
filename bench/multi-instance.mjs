/**
 * SPEC §21's many-instances run: three instances of the built server (--http, each with
 * --instance-name and the same token file) on one directory tree, behind nginx started
 * from deploy/nginx-mcp.conf on loopback ports, and clients of both protocol eras
 * reading, searching and editing shared files through nginx while one instance is
 * killed with SIGKILL mid-run.
 *
 * Each writer owns one line of a shared file, `slot <id>: <n>`, and counts it up with
 * edit_file, one step per call, so every instance edits the same files at once. A call
 * that fails (the instance died under it, or nginx could not reach it) is retried:
 * a 2025-era client opens a new session (nginx answers 404 for a session whose instance
 * is gone), a 2026-era client sends the request again. After a failed edit the writer
 * reads its line back to learn whether the edit was applied before the instance died,
 * so its count is exact either way; the caller compares the counts with the files.
 *
 *   node bench/multi-instance.mjs [--json] [--ops N] [--writers N]   (after npm run build; needs nginx)
 */
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { SERVER_JS } from "./server.mjs";

const CONF = fileURLToPath(new URL("../deploy/nginx-mcp.conf", import.meta.url));
const NAMES = ["a", "b", "c"];
const TOKEN = "multi-instance-test-token-0123456789abcdef";
// Every call is bounded: one that has not answered in this time counts as a hang.
const CALL_TIMEOUT_MS = 20_000;
const RETRIES = 8;
const SHARED_FILES = 2;
const TREE_FILES = 200;

/** The nginx binary, or undefined when it is not installed (the test then says so and skips). */
export function findNginx() {
  for (const candidate of [process.env.NGINX, "/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/bin/nginx"]) {
    if (candidate && fs.existsSync(candidate)) return candidate;
  }
  const which = spawnSync("sh", ["-c", "command -v nginx"], { encoding: "utf8" });
  return which.status === 0 ? which.stdout.trim() : undefined;
}

/** A free loopback port (closed again before use: nginx binds it a moment later). */
function freePort() {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

const percentile = (sorted, p) => (sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]);
const slotLine = (id, n) => `slot ${id}: ${n}`;

/** Lays out the shared files (every writer's line), a text to read and a tree to search. */
function fixtures(root, writers) {
  for (let f = 0; f < SHARED_FILES; f++) {
    const lines = writers.filter((w) => w.file === f).map((w) => slotLine(w.id, 0));
    fs.writeFileSync(path.join(root, `shared-${f}.txt`), `${lines.join("\n")}\n`);
  }
  fs.writeFileSync(path.join(root, "read.txt"), Array.from({ length: 20_000 }, (_, i) => `line ${i} of the text every reader reads\n`).join(""));
  fs.mkdirSync(path.join(root, "tree", "sub"), { recursive: true });
  for (let i = 0; i < TREE_FILES; i++) {
    fs.writeFileSync(path.join(root, "tree", i % 2 ? "sub" : "", `f${i}.txt`), `file ${i}\n${i % 10 === 0 ? "needle\n" : "hay\n"}`);
  }
}

/** Starts one instance; resolves once it listens, with its port. */
function startInstance(name, root, tokenFile, publicUrl) {
  const child = spawn(
    process.execPath,
    [SERVER_JS, "--http", "127.0.0.1:0", "--instance-name", name, "--auth-token-file", tokenFile, "--public-url", publicUrl, root],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let stderr = "";
  const port = new Promise((resolve, reject) => {
    child.stderr.on("data", (chunk) => {
      stderr += chunk.toString("utf8");
      const found = /running on https?:\/\/[^:]+:(\d+)\//.exec(stderr);
      if (found) resolve(Number(found[1]));
    });
    child.once("exit", (code, signal) => reject(new Error(`instance ${name} exited (${code ?? signal}) before listening: ${stderr}`)));
  });
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve(code ?? signal)));
  return { name, child, port, exited, stderr: () => stderr };
}

/** deploy/nginx-mcp.conf with this run's ports, inside a main configuration whose every path is under `dir`. */
function nginxConfig(dir, listenPort, ports) {
  let site = fs.readFileSync(CONF, "utf8").replace("listen 127.0.0.1:8080;", `listen 127.0.0.1:${listenPort};`);
  NAMES.forEach((_, i) => {
    site = site.replaceAll(`127.0.0.1:${8101 + i}`, `127.0.0.1:${ports[i]}`);
  });
  fs.writeFileSync(path.join(dir, "mcp.conf"), site);
  const temp = ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"].map((kind) => `  ${kind}_temp_path ${path.join(dir, kind)};`).join("\n");
  const main = `daemon off;
master_process off;
pid ${path.join(dir, "nginx.pid")};
error_log ${path.join(dir, "error.log")} warn;
events { worker_connections 1024; }
http {
  access_log off;
${temp}
  include ${path.join(dir, "mcp.conf")};
}
`;
  const file = path.join(dir, "nginx.conf");
  fs.writeFileSync(file, main);
  return file;
}

/** Starts nginx in the foreground; resolves once it answers on `port`. */
async function startNginx(nginx, dir, port, ports) {
  const conf = nginxConfig(dir, port, ports);
  const child = spawn(nginx, ["-p", dir, "-e", path.join(dir, "error.log"), "-c", conf], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (chunk) => {
    stderr += chunk.toString("utf8");
  });
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve(code ?? signal)));
  for (let i = 0; i < 100; i++) {
    const up = await fetch(`http://127.0.0.1:${port}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) return { child, exited };
    if (child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill("SIGKILL");
  const log = fs.existsSync(path.join(dir, "error.log")) ? fs.readFileSync(path.join(dir, "error.log"), "utf8") : "";
  throw new Error(`nginx did not start: ${stderr}${log}`);
}

/**
 * A 2025-11-25 client: a session through nginx, opened again when the instance holding it is gone.
 * A call whose answer stream is cut (its instance was killed under it) stays pending in the SDK's
 * client, which only reports the cut through onerror: the calls in flight are failed then, so the
 * caller retries at once instead of waiting for its timeout.
 */
function client2025(url) {
  let client;
  const inFlight = new Set();
  const open = async () => {
    client = new Client({ name: "multi-instance-2025", version: "1.0.0" });
    client.onerror = (error) => {
      if (!/stream disconnected|reconnect/i.test(error.message)) return;
      for (const controller of inFlight) controller.abort(new Error(`answer stream cut: ${error.message}`));
    };
    const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } } });
    await client.connect(transport, { timeout: CALL_TIMEOUT_MS });
  };
  return {
    era: "2025-11-25",
    open,
    async call(name, args) {
      const controller = new AbortController();
      inFlight.add(controller);
      try {
        return await client.callTool({ name, arguments: args }, undefined, { timeout: CALL_TIMEOUT_MS, signal: controller.signal });
      } finally {
        inFlight.delete(controller);
      }
    },
    async recover() {
      await client.close().catch(() => undefined);
      await open();
    },
    close: () => client.close(),
  };
}

/** The protocol eras this run's clients speak, each with its client. */
async function eraClients() {
  return [{ era: "2025-11-25", make: client2025 }];
}

const textOf = (result) => (result.content ?? []).map((block) => block.text ?? "").join("");

/**
 * One client's loop of `ops` calls: reads, content searches and (for a writer) edits, each
 * retried until it succeeds or RETRIES are spent. Records latencies, errors seen and the
 * writer's exact count.
 */
async function clientLoop(client, root, writer, ops, stats, afterCall) {
  const shared = path.join(root, `shared-${writer.file}.txt`);
  for (let op = 0; op < ops; op++) {
    const kind = op % 3;
    let name;
    let args;
    if (kind === 0) [name, args] = ["read_text_file", { path: path.join(root, "read.txt"), offset: (op * 7919) % 500_000, limit: 2_000 }];
    else if (kind === 1) [name, args] = ["search_file_contents", { path: path.join(root, "tree"), query: "needle", outputMode: "count" }];
    else
      [name, args] = [
        "edit_file",
        { path: shared, edits: [{ oldText: `${slotLine(writer.id, writer.count)}\n`, newText: `${slotLine(writer.id, writer.count + 1)}\n` }] },
      ];
    let done = false;
    for (let attempt = 0; attempt <= RETRIES && !done; attempt++) {
      const started = performance.now();
      try {
        const result = await client.call(name, args);
        const text = textOf(result);
        if (result.isError) {
          // The edit may have been applied by an instance that died before answering: the retry
          // then finds no old line. The line as read now says which.
          if (name === "edit_file" && attempt > 0 && /not found|no match/i.test(text)) {
            const now = await readSlot(client, shared, writer.id);
            if (now === writer.count + 1) {
              writer.count++;
              stats.appliedUnanswered++;
              done = true;
              continue;
            }
          }
          stats.toolErrors.push(`${client.era} ${name}: ${text.slice(0, 200)}`);
          done = true;
          continue;
        }
        stats.latencies.push(performance.now() - started);
        stats.calls++;
        stats.byEra[client.era] = (stats.byEra[client.era] ?? 0) + 1;
        if (name === "edit_file") writer.count++;
        if (name === "search_file_contents" && !/\b20 matching lines\b/.test(text))
          stats.wrongAnswers.push(`${client.era} search: ${text.slice(0, 200)}`);
        if (name === "read_text_file" && !/line \d+ of the text/.test(text)) stats.wrongAnswers.push(`${client.era} read: ${text.slice(0, 200)}`);
        done = true;
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        if (/timed out|timeout/i.test(message)) stats.hangs.push(`${client.era} ${name}: ${message}`);
        stats.retried.push(`${client.era} ${name}: ${message.slice(0, 160)}`);
        await client.recover().catch((e) => stats.retried.push(`${client.era} reconnect: ${e instanceof Error ? e.message : String(e)}`));
      }
    }
    if (!done) stats.gaveUp.push(`${client.era} ${name}`);
    afterCall();
  }
}

/** The writer's line as the server reads it now (retried like any call). */
async function readSlot(client, file, id) {
  const text = textOf(await client.call("read_text_file", { path: file }));
  const found = new RegExp(`^slot ${id}: (\\d+)$`, "m").exec(text);
  return found ? Number(found[1]) : -1;
}

const vmHwmMiB = (pid) => {
  try {
    return Number(/^VmHWM:\s+(\d+)\s+kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
};

/**
 * The whole run. `root` is the shared directory (created when absent); returns the summary,
 * with each writer's exact count so the caller can check the files itself.
 */
export async function multiInstanceRun({ nginx = findNginx(), root, clientsPerEra = 4, ops = 30, killAfterCalls, log = () => undefined } = {}) {
  if (nginx === undefined) throw new Error("nginx is not installed (apt-get install nginx; .ci/run installs it)");
  const work = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "bfs-multi-")));
  const dir = root ?? path.join(work, "shared");
  fs.mkdirSync(dir, { recursive: true });
  const eras = await eraClients();
  const writers = [];
  for (const { era } of eras)
    for (let c = 0; c < clientsPerEra; c++) writers.push({ id: `${era}-${c}`, era, file: writers.length % SHARED_FILES, count: 0 });
  fixtures(dir, writers);
  const tokenFile = path.join(work, "tokens");
  fs.writeFileSync(tokenFile, `${TOKEN}\n`, { mode: 0o600 });
  const nginxDir = path.join(work, "nginx");
  fs.mkdirSync(nginxDir);
  const listenPort = await freePort();
  const url = `http://127.0.0.1:${listenPort}/mcp`;
  const instances = NAMES.map((name) => startInstance(name, dir, tokenFile, url));
  let proxy;
  try {
    const ports = await Promise.all(instances.map((i) => i.port));
    proxy = await startNginx(nginx, nginxDir, listenPort, ports);
    const unauthenticated = await fetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
      body: "{}",
    });
    const challenge = { status: unauthenticated.status, wwwAuthenticate: unauthenticated.headers.get("www-authenticate") ?? "" };

    const stats = {
      calls: 0,
      latencies: [],
      retried: [],
      hangs: [],
      toolErrors: [],
      wrongAnswers: [],
      gaveUp: [],
      appliedUnanswered: 0,
      byEra: {},
      callsAfterKill: 0,
    };
    const total = writers.length * ops;
    const killAt = killAfterCalls ?? Math.floor(total / 3);
    let finished = 0;
    let killed;
    const victim = instances[1];
    const afterCall = () => {
      finished++;
      if (killed !== undefined) stats.callsAfterKill++;
      if (finished === killAt && killed === undefined) {
        killed = victim.name;
        victim.peakRss = vmHwmMiB(victim.child.pid);
        victim.child.kill("SIGKILL");
        log(`killed instance ${victim.name} after ${finished} calls`);
      }
    };
    const clients = writers.map((w) => eras.find((e) => e.era === w.era).make(url, TOKEN));
    await Promise.all(clients.map((c) => c.open()));
    const started = performance.now();
    await Promise.all(clients.map((client, i) => clientLoop(client, dir, writers[i], ops, stats, afterCall)));
    const seconds = (performance.now() - started) / 1000;
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));

    // The survivors answer directly too, not only through nginx.
    const survivors = [];
    for (const [i, instance] of instances.entries()) {
      if (instance === victim) continue;
      const health = await fetch(`http://127.0.0.1:${ports[i]}/healthz`).then(
        (r) => r.status,
        () => 0,
      );
      survivors.push({ name: instance.name, health });
    }
    const peakRss = Object.fromEntries(instances.map((i) => [i.name, Number((i === victim ? (i.peakRss ?? 0) : vmHwmMiB(i.child.pid)).toFixed(1))]));
    const sorted = stats.latencies.sort((a, b) => a - b);
    return {
      url,
      root: dir,
      eras: eras.map((e) => e.era),
      killed,
      seconds: Number(seconds.toFixed(2)),
      calls: stats.calls,
      callsAfterKill: stats.callsAfterKill,
      byEra: stats.byEra,
      p50: Number(percentile(sorted, 50).toFixed(1)),
      p99: Number(percentile(sorted, 99).toFixed(1)),
      retried: stats.retried,
      hangs: stats.hangs,
      toolErrors: stats.toolErrors,
      wrongAnswers: stats.wrongAnswers,
      gaveUp: stats.gaveUp,
      appliedUnanswered: stats.appliedUnanswered,
      writers: writers.map(({ id, file, count }) => ({ id, file: path.join(dir, `shared-${file}.txt`), count })),
      survivors,
      challenge,
      peakRss,
    };
  } finally {
    for (const instance of instances) instance.child.kill("SIGTERM");
    await Promise.all(instances.map((i) => i.exited));
    if (proxy) {
      proxy.child.kill("SIGTERM");
      await proxy.exited;
    }
    if (root === undefined) fs.rmSync(work, { recursive: true, force: true });
    else fs.rmSync(work, { recursive: true, force: true, maxRetries: 2 });
  }
}

/** Lost edits: writers whose line in the file does not hold their exact count (or is missing or doubled). */
export function lostEdits(summary) {
  return summary.writers.filter((w) => {
    const lines = fs
      .readFileSync(w.file, "utf8")
      .split("\n")
      .filter((l) => l.startsWith(`slot ${w.id}: `));
    return lines.length !== 1 || lines[0] !== slotLine(w.id, w.count);
  });
}

/** The bench's rows for this run. */
export async function multiInstanceScenario({ log = () => undefined } = {}) {
  const nginx = findNginx();
  if (nginx === undefined) {
    log("multi-instance: skipped, nginx is not installed (apt-get install nginx)");
    return [];
  }
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "bfs-multi-root-")));
  try {
    const s = await multiInstanceRun({ nginx, root, clientsPerEra: 8, ops: 60, log });
    const lost = lostEdits(s).length;
    const ok = lost === 0 && s.hangs.length === 0 && s.gaveUp.length === 0 && s.wrongAnswers.length === 0 && s.toolErrors.length === 0;
    log(`  multi-instance: eras ${s.eras.join(" + ")}, ${s.calls} calls in ${s.seconds} s, ${s.retried.length} retried, ${lost} lost edits`);
    log(`  peak RSS per instance (MiB): ${JSON.stringify(s.peakRss)}; killed ${s.killed}; calls after the kill ${s.callsAfterKill}`);
    const label = `nginx + 3 instances, ${s.eras.join(" & ")} clients, one killed: ${s.calls} calls, ${s.retried.length} errors retried, ${lost} lost edits, peak RSS ${Object.values(s.peakRss).join("/")} MB`;
    return [
      { name: `${label}, p50`, ms: s.p50, ok },
      { name: "nginx + 3 instances, same run, p99", ms: s.p99 },
    ];
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

// `node bench/multi-instance.mjs [--json]`: this run alone.
if (import.meta.url === `file://${process.argv[1]}`) {
  const json = process.argv.includes("--json");
  const arg = (flag, fallback) => {
    const i = process.argv.indexOf(flag);
    return i === -1 ? fallback : Number(process.argv[i + 1]);
  };
  const root = json ? process.argv[process.argv.indexOf("--root") + 1] : undefined;
  if (json) {
    const summary = await multiInstanceRun({ root, clientsPerEra: arg("--writers", 4), ops: arg("--ops", 30), log: (l) => console.error(l) });
    console.log(JSON.stringify(summary));
  } else {
    for (const row of await multiInstanceScenario({ log: (l) => console.error(l) })) console.log(`${row.name}: ${row.ms.toFixed(1)} ms`);
  }
}
