/**
 * Connect times per protocol era and transport (SPEC §21): N connects of each
 * client kind to one build of the server, over stdio (a fresh process per
 * connect, as a host starts it) and over HTTP (one running server), each
 * connect followed by one tools/list so a connection that only looks open
 * counts too. With --before DIST it times a second build (e.g. main before
 * the v2 SDK) in the same run, interleaved, so the two share the load.
 *
 *   node bench/connect-eras.mjs [--json] [--n 20] [--before path/to/dist/index.js]   (after npm run build)
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client as Client2, StreamableHTTPClientTransport as Http2 } from "@modelcontextprotocol/client";
import { StdioClientTransport as Stdio2 } from "@modelcontextprotocol/client/stdio";
import { Client as Client1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as Stdio1 } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport as Http1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { SERVER_JS, spawnHttpServer } from "./server.mjs";

/** The client kinds timed: the v2 client in each negotiation mode, and the 1.x client. */
const KINDS = [
  { name: "v2 auto", make: () => new Client2({ name: "bench", version: "1" }, { versionNegotiation: { mode: "auto" } }) },
  { name: "v2 pinned 2025-11-25", make: () => new Client2({ name: "bench", version: "1" }, { versionNegotiation: { mode: "legacy" } }) },
  { name: "v2 pinned 2026-07-28", make: () => new Client2({ name: "bench", version: "1" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } }) },
  { name: "1.x client", make: () => new Client1({ name: "bench", version: "1" }), v1: true },
];

function stdioTransport(kind, serverJs, dir) {
  const params = { command: process.execPath, args: [serverJs, dir], stderr: "ignore" };
  return kind.v1 ? new Stdio1(params) : new Stdio2(params);
}

function httpTransport(kind, url) {
  return kind.v1 ? new Http1(new URL(url)) : new Http2(new URL(url));
}

/** One connect plus tools/list: its milliseconds, the era it landed on, or the error that refused it. */
async function once(kind, transport) {
  const client = kind.make();
  const start = performance.now();
  try {
    await client.connect(transport);
    await client.listTools();
    const ms = performance.now() - start;
    const era = kind.v1 ? "2025" : client.getProtocolEra() === "modern" ? "2026" : "2025";
    return { ms, era };
  } catch (error) {
    return { error: error instanceof Error ? error.message.slice(0, 120) : String(error) };
  } finally {
    await client.close().catch(() => undefined);
  }
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? Number.NaN : sorted[Math.floor(sorted.length / 2)];
};

/** Times every kind over both transports against each build; returns rows of medians. */
export async function connectEras({ n = 20, builds = [{ label: "this build", serverJs: SERVER_JS }] } = {}) {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "bfs-connect-")));
  fs.writeFileSync(path.join(dir, "a.txt"), "a\n");
  const servers = builds.map((build) => ({ ...build, http: spawnHttpServer([dir], build.serverJs) }));
  const samples = new Map();
  const record = (key, outcome) => samples.set(key, [...(samples.get(key) ?? []), outcome]);
  try {
    for (const server of servers) server.url = await server.http.url;
    // Interleaved: each round times every build, kind and transport once, so load drifts hit all alike.
    for (let round = 0; round < n; round++) {
      for (const server of servers) {
        for (const kind of KINDS) {
          record(`${server.label}|stdio|${kind.name}`, await once(kind, stdioTransport(kind, server.serverJs, dir)));
          record(`${server.label}|http|${kind.name}`, await once(kind, httpTransport(kind, server.url)));
        }
      }
    }
  } finally {
    for (const server of servers) server.http.child.kill("SIGTERM");
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return [...samples].map(([key, outcomes]) => {
    const [build, transport, kind] = key.split("|");
    const ok = outcomes.filter((o) => o.error === undefined);
    const eras = [...new Set(ok.map((o) => o.era))].join("+") || "-";
    const errors = outcomes.filter((o) => o.error !== undefined);
    return {
      build,
      transport,
      kind,
      connects: ok.length,
      era: eras,
      medianMs: median(ok.map((o) => o.ms)),
      refused: errors.length,
      error: errors[0]?.error,
    };
  });
}

if (process.argv[1] && fs.realpathSync(process.argv[1]) === fs.realpathSync(new URL(import.meta.url))) {
  const argv = process.argv.slice(2);
  const value = (flag) => (argv.includes(flag) ? argv[argv.indexOf(flag) + 1] : undefined);
  const n = Number(value("--n") ?? 20);
  const before = value("--before");
  const builds = [{ label: "after", serverJs: SERVER_JS }, ...(before ? [{ label: "before", serverJs: path.resolve(before) }] : [])];
  const rows = await connectEras({ n, builds });
  if (argv.includes("--json")) process.stdout.write(`${JSON.stringify({ load: os.loadavg(), rows }, null, 2)}\n`);
  else {
    console.log(
      `load ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(" ")}; ${n} connects each (connect + tools/list), median ms`,
    );
    for (const r of rows) {
      const shown = r.connects > 0 ? `${r.medianMs.toFixed(0)} ms as ${r.era}` : `refused: ${r.error}`;
      console.log(`${r.build.padEnd(7)} ${r.transport.padEnd(6)} ${r.kind.padEnd(22)} ${shown}`);
    }
  }
}
