/**
 * Issue 28's HTTP memory run: the built server with --http on 127.0.0.1 and 64 clients pushing at its
 * limits, half of them 2025-era sessions and half 2026-07-28 requests, the server's RSS read from /proc:
 * 1. bodies: all 64 upload a ping padded to just under the 100 MiB message bound at once; each is served
 *    or refused with 503 (the bound on bodies in flight);
 * 2. answers: all 64 call read_media_file on a file at the media bound, several calls each, and read
 *    nothing; a client that reads calls meanwhile; then they read. Past the bound on answers held, a
 *    client that does not read gets errors in place of further answers, and new clients get 503.
 * Reports each phase's outcome counts and the server's peak RSS (VmHWM) after it.
 */
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { spawnHttpServer } from "./server.mjs";

const CLIENTS = 64;
const CALLS_PER_SESSION = Number(process.env.BENCH_HTTP_CALLS ?? 4);
const MESSAGE_BOUND = 100 * 1024 * 1024;
const MEDIA_BYTES = 5 * 1024 * 1024;
const BASE = { "Content-Type": "application/json", Accept: "application/json, text/event-stream" };
const ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "bench", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": {},
};
const modernHeaders = (method, name) => ({ ...BASE, "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method, ...(name && { "Mcp-Name": name }) });

const peakRssMb = (pid) => Number(/^VmHWM:\s+(\d+)\s+kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) / 1024;

async function sessionHeaders(url) {
  const init = await fetch(url, {
    method: "POST",
    headers: BASE,
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "bench", version: "1" } },
    }),
  });
  await init.text();
  const id = init.headers.get("mcp-session-id");
  if (!id) throw new Error(`initialize answered ${init.status}`);
  const headers = { ...BASE, "mcp-session-id": id, "mcp-protocol-version": "2025-11-25" };
  await (await fetch(url, { method: "POST", headers, body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) })).text();
  return headers;
}

/** A ping padded to just under the message bound, sent in 1 MiB pieces until answered; resolves with the status. */
function upload(url, headers, id, modern) {
  const [head, tail] = JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "ping",
    params: { _meta: modern ? { ...ENVELOPE, pad: "" } : { pad: "" } },
  }).split('"pad":""');
  const padBytes = MESSAGE_BOUND - 1024 * 1024;
  const length = Buffer.byteLength(`${head}"pad":"`) + padBytes + Buffer.byteLength(`"${tail}`);
  const piece = Buffer.alloc(1024 * 1024, "p");
  return new Promise((resolve, reject) => {
    let status;
    let closed;
    const req = http.request(url, { method: "POST", headers: { ...headers, "Content-Length": String(length) } }, (res) => {
      status = res.statusCode;
      res.resume();
      res.on("end", () => {
        req.destroy();
        resolve(status);
      });
    });
    req.on("error", (error) => (status === undefined ? reject(error) : resolve(status)));
    closed = new Promise((next) => req.once("close", next));
    (async () => {
      req.write(`${head}"pad":"`);
      for (let left = padBytes; left > 0 && status === undefined; left -= piece.length) {
        if (!req.write(left >= piece.length ? piece : piece.subarray(0, left)))
          await Promise.race([new Promise((next) => req.once("drain", next)), closed]);
      }
      if (status === undefined) req.end(`"${tail}`);
    })().catch(reject);
  });
}

/**
 * A POST whose response is left unread until `read()`; `read()` resolves with its status and what answered it
 * ("image", "withheld" or "other"), keeping none of the answer's data (a thousand of them are megabytes each).
 */
function pausedPost(url, headers, body) {
  const response = new Promise((resolve, reject) => {
    const req = http.request(url, { method: "POST", headers }, (res) => {
      res.pause();
      resolve(res);
    });
    req.on("error", reject);
    req.end(body);
  });
  response.catch(() => undefined);
  return {
    async read() {
      const res = await response;
      res.setEncoding("utf8");
      let carry = "";
      let answer = "other";
      res.on("data", (chunk) => {
        const text = carry + chunk;
        if (text.includes('"type":"image"')) answer = "image";
        else if (text.includes("Answer not sent")) answer = "withheld";
        carry = text.slice(-64);
      });
      res.resume();
      await new Promise((resolve) => res.on("end", resolve));
      return { status: res.statusCode, answer, tail: carry };
    },
  };
}

/** Runs both phases; returns the table rows. */
export async function httpLimitsScenario({ log = () => undefined } = {}) {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "bfs-http-limits-")));
  const server = spawnHttpServer(["--max-sessions", String(CLIENTS + 8), root]);
  try {
    fs.writeFileSync(path.join(root, "media.png"), Buffer.alloc(MEDIA_BYTES, 7));
    const url = await server.url;
    const pid = server.child.pid;
    const baseline = peakRssMb(pid);

    // 1. Bodies at the message bound, all at once.
    let started = performance.now();
    const sessions = await Promise.all(Array.from({ length: CLIENTS / 2 }, () => sessionHeaders(url)));
    const statuses = await Promise.all([
      ...sessions.map((headers, i) => upload(url, headers, i + 1, false)),
      ...Array.from({ length: CLIENTS / 2 }, (_, i) => upload(url, modernHeaders("ping"), 1000 + i, true)),
    ]);
    const uploadMs = performance.now() - started;
    const served = statuses.filter((s) => s === 200).length;
    const busy = statuses.filter((s) => s === 503).length;
    const uploadRss = peakRssMb(pid);
    log(
      `  uploads: ${served} served, ${busy} refused with 503, ${CLIENTS - served - busy} other; peak RSS ${uploadRss.toFixed(0)} MiB (idle ${baseline.toFixed(0)})`,
    );

    // 2. Answers at the media bound that nobody reads.
    started = performance.now();
    const media = (id, modern) =>
      JSON.stringify({
        jsonrpc: "2.0",
        id,
        method: "tools/call",
        params: { name: "read_media_file", arguments: { path: path.join(root, "media.png") }, ...(modern && { _meta: ENVELOPE }) },
      });
    const paused = [];
    for (const headers of sessions) for (let c = 1; c <= CALLS_PER_SESSION; c++) paused.push(pausedPost(url, headers, media(c, false)));
    for (let m = 0; m < CLIENTS / 2; m++) paused.push(pausedPost(url, modernHeaders("tools/call", "read_media_file"), media(2000 + m, true)));
    // Until the server's RSS stops growing (sampled every 250 ms, at most 30 s).
    let last = 0;
    for (let i = 0; i < 120; i++) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      const now = peakRssMb(pid);
      if (i >= 8 && now === last) break;
      last = now;
    }
    const late = await fetch(url, {
      method: "POST",
      headers: modernHeaders("tools/call", "list_allowed_directories"),
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 9,
        method: "tools/call",
        params: { name: "list_allowed_directories", arguments: {}, _meta: ENVELOPE },
      }),
    });
    await late.text();
    const read = await Promise.all(paused.map((p) => p.read().catch((error) => ({ status: 0, answer: "other", error: String(error) }))));
    const mediaMs = performance.now() - started;
    const refused = read.filter((r) => r.status === 503).length;
    const images = read.filter((r) => r.status === 200 && r.answer === "image").length;
    const withheld = read.filter((r) => r.status === 200 && r.answer === "withheld").length;
    const answerRss = peakRssMb(pid);
    const other = read.find((r) => r.status !== 503 && r.answer === "other");
    if (other) log(`  an "other" answer: status ${other.status}, ending ${JSON.stringify(other.tail ?? other.error)}`);
    log(
      `  answers: ${paused.length} calls, ${images} images, ${withheld} withheld, ${refused} refused with 503, ` +
        `${paused.length - images - withheld - refused} other; a new request meanwhile: ${late.status}; peak RSS ${answerRss.toFixed(0)} MiB`,
    );

    server.child.kill("SIGTERM");
    const exit = await server.exited;
    return [
      {
        name: `HTTP limits: ${CLIENTS} uploads of 99 MiB at once (${CLIENTS / 2} sessions + ${CLIENTS / 2} 2026 requests): ${served} served, ${busy} × 503; server peak RSS ${uploadRss.toFixed(0)} MB`,
        ms: uploadMs,
        ok: served + busy === CLIENTS && served > 0,
      },
      {
        name: `HTTP limits: ${paused.length} unread read_media_file calls of 5 MiB (${CLIENTS} clients): ${images} images, ${withheld} withheld, ${refused} × 503; server peak RSS ${answerRss.toFixed(0)} MB`,
        ms: mediaMs,
        ok: images + withheld + refused === paused.length && exit === 0,
      },
    ];
  } finally {
    server.child.kill("SIGKILL");
    fs.rmSync(root, { recursive: true, force: true });
  }
}

// `node bench/http-limits.mjs`: this run alone (after `npm run build`).
if (import.meta.url === `file://${process.argv[1]}`) {
  const rows = await httpLimitsScenario({ log: (line) => console.error(line) });
  for (const row of rows) console.log(`${row.name}: ${row.ms.toFixed(1)} ms${row.ok ? " (ok)" : " (FAIL)"}`);
}
