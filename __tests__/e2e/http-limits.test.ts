/**
 * Fifty uploads at the 100 MiB message bound at once, against the built server (SPEC §17; issue 28 row 3):
 * half in 2025-era sessions, half as 2026-07-28 requests. Each is answered — served, or refused with 503
 * and Retry-After because it does not fit beside the bodies in flight — and the process lives on and
 * answers the next call. Before, every such body was buffered whole and the process died out of memory.
 */
import http from "node:http";
import { readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_REQUEST_LINE_BYTES } from "../../src/transports/wire-limits.js";
import { connectHttpEra } from "../support/eras.js";
import { tempDir } from "../support/fixtures.js";
import { rawSessionHeaders, spawnHttp, type Spawned } from "../support/http.js";

const UPLOADS = 50;
const BASE = { "Content-Type": "application/json", Accept: "application/json, text/event-stream" };
const ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "upload", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": {},
};

let dir: string;
let remove: () => Promise<void>;
let server: Spawned;
let url: string;

beforeAll(async () => {
  ({ dir, remove } = await tempDir("bfs-http-limits-"));
  await writeFile(path.join(dir, "a.txt"), "alpha\n");
  server = spawnHttp(["--http", "127.0.0.1:0", dir]);
  url = await server.url;
});
afterAll(async () => {
  server?.child.kill("SIGKILL");
  await remove?.();
});

const sessionHeaders = (): Promise<Record<string, string>> => rawSessionHeaders(url);

/** A ping whose `_meta` pads it to just under the message bound, sent in 1 MiB pieces; resolves with the status and Retry-After. */
function upload(headers: Record<string, string>, id: number, modern: boolean): Promise<{ status: number; retryAfter?: string }> {
  const meta = modern ? { ...ENVELOPE, pad: "" } : { pad: "" };
  const [head, tail] = JSON.stringify({ jsonrpc: "2.0", id, method: "ping", params: { _meta: meta } }).split('"pad":""');
  const padBytes = MAX_REQUEST_LINE_BYTES - 1024 * 1024 - Buffer.byteLength(`${head}"pad":""${tail}`);
  const piece = Buffer.alloc(1024 * 1024, "p");
  const length = Buffer.byteLength(`${head}"pad":"`) + padBytes + Buffer.byteLength(`"${tail}`);
  return new Promise((resolve, reject) => {
    let answered: { status: number; retryAfter?: string } | undefined;
    const req = http.request(url, { method: "POST", headers: { ...headers, "Content-Length": String(length) } }, (res) => {
      answered = { status: res.statusCode ?? 0, ...(typeof res.headers["retry-after"] === "string" && { retryAfter: res.headers["retry-after"] }) };
      res.resume();
      res.on("end", () => {
        req.destroy();
        resolve(answered as { status: number; retryAfter?: string });
      });
    });
    req.on("error", (error) => (answered ? resolve(answered) : reject(error)));
    const send = async () => {
      req.write(`${head}"pad":"`);
      for (let left = padBytes; left > 0 && answered === undefined; left -= piece.length) {
        const ok = req.write(left >= piece.length ? piece : piece.subarray(0, left));
        if (!ok) await new Promise((next) => req.once("drain", next).once("close", next));
      }
      if (answered === undefined) req.end(`"${tail}`);
    };
    send().catch(reject);
  });
}

describe("fifty uploads at the message bound at once", () => {
  it("each is served or refused with 503 and Retry-After, and the server lives on", async () => {
    const headers = await Promise.all(Array.from({ length: UPLOADS / 2 }, () => sessionHeaders()));
    const modern = { ...BASE, "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "ping" };
    const outcomes = await Promise.all([
      ...headers.map((h, i) => upload(h, i + 1, false)),
      ...Array.from({ length: UPLOADS / 2 }, (_, i) => upload(modern, 100 + i, true)),
    ]);
    const served = outcomes.filter((o) => o.status === 200);
    const busy = outcomes.filter((o) => o.status === 503);
    expect(served.length + busy.length).toBe(UPLOADS);
    expect(served.length).toBeGreaterThan(0);
    expect(busy.length).toBeGreaterThan(0);
    for (const o of busy) expect(o.retryAfter).toBe("2");

    expect(server.child.exitCode).toBeNull();
    const client = await connectHttpEra(url, "2026-07-28");
    try {
      const read = await client.client.callTool({ name: "read_text_file", arguments: { path: path.join(dir, "a.txt") } });
      expect(read.content).toEqual([{ type: "text", text: "alpha\n" }]);
    } finally {
      await client.close();
    }
    const peak = /^VmHWM:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${server.child.pid}/status`, "utf8"));
    console.error(
      `http-limits: ${served.length} served, ${busy.length} refused with 503; server peak RSS ${Math.round(Number(peak?.[1]) / 1024)} MiB`,
    );
  }, 120_000);
});
