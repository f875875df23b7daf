/**
 * Progress towards a client that stops reading, in both eras over HTTP (SPEC §13, §17, §21; issue 25):
 * a tool that sends far more progress than a paused response may hold makes the server leave the surplus
 * out, in the 2026-07-28 era as in the 2025 era's sessions, and the result still arrives once the client
 * reads. The HTTP layer (Sessions) serves a stub server whose one tool floods progress as fast as it can.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Server } from "@modelcontextprotocol/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROGRESS_HOLD_BYTES } from "../../../../src/transports/http/memory.js";
import { Sessions } from "../../../../src/transports/http/sessions.js";

/** Progress notifications the tool sends, each carrying NOTE characters: 6 MB in all, beyond what a paused socket takes. */
const FLOOD = 1500;
const NOTE = 4096;
const flood = { finished: 0 };

function stubServer(): Server {
  const server = new Server({ name: "progress-stub", version: "1.0.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler("tools/list", () => ({ tools: [{ name: "flood", inputSchema: { type: "object" } }] }));
  server.setRequestHandler("tools/call", async (request, ctx) => {
    const token = ctx.mcpReq._meta?.progressToken ?? request.params._meta?.progressToken;
    if (token !== undefined) {
      for (let i = 1; i <= FLOOD; i++) {
        await ctx.mcpReq.notify({
          method: "notifications/progress",
          params: { progressToken: token, progress: i, total: FLOOD, message: "p".repeat(NOTE) },
        });
      }
    }
    flood.finished++;
    return { content: [{ type: "text", text: "flooded" }] };
  });
  return server;
}

let sessions: Sessions;
let server: http.Server;
let url: string;

beforeAll(async () => {
  sessions = new Sessions({ build: () => stubServer(), stateless: false, idleMs: 60_000, maxSessions: 8, log: () => undefined });
  server = http.createServer((req, res) => void sessions.handle(req, res, undefined, "anonymous"));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
});
afterAll(async () => {
  await sessions.closeAll();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const HEADERS = { "Content-Type": "application/json", Accept: "application/json, text/event-stream" };

/** The headers and body of a flood call in `era` (a 2025 session's, or a 2026-07-28 request standing alone). */
async function floodCall(era: "2025-11-25" | "2026-07-28"): Promise<{ headers: Record<string, string>; body: string }> {
  const call = { jsonrpc: "2.0", id: 1, method: "tools/call" };
  if (era === "2026-07-28") {
    const meta = {
      progressToken: "flood",
      "io.modelcontextprotocol/protocolVersion": era,
      "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
      "io.modelcontextprotocol/clientCapabilities": {},
    };
    return {
      headers: { ...HEADERS, "MCP-Protocol-Version": era, "Mcp-Method": "tools/call", "Mcp-Name": "flood" },
      body: JSON.stringify({ ...call, params: { name: "flood", arguments: {}, _meta: meta } }),
    };
  }
  const init = await fetch(url, {
    method: "POST",
    headers: HEADERS,
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: era, capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    }),
  });
  await init.text();
  const headers = { ...HEADERS, "mcp-session-id": init.headers.get("mcp-session-id") as string, "mcp-protocol-version": era };
  await (await fetch(url, { method: "POST", headers, body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) })).text();
  return { headers, body: JSON.stringify({ ...call, params: { name: "flood", arguments: {}, _meta: { progressToken: "flood" } } }) };
}

describe("progress for a client that stops reading", () => {
  for (const era of ["2025-11-25", "2026-07-28"] as const) {
    it(`is left out past the hold bound in the ${era} era, and the result still arrives`, async () => {
      const { headers, body } = await floodCall(era);
      const before = flood.finished;
      const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
        const req = http.request(url, { method: "POST", headers }, (response) => {
          response.pause();
          resolve(response);
        });
        req.on("error", reject);
        req.end(body);
      });
      // The tool runs to its end while the client reads nothing.
      await expect.poll(() => flood.finished, { timeout: 20_000, interval: 50 }).toBe(before + 1);
      const held = sessions.stats().reduce((most, s) => Math.max(most, s.largestHeld), 0);
      // What one response holds: the progress it was given before passing the bound, one more frame, and the result.
      expect(held).toBeLessThanOrEqual(PROGRESS_HOLD_BYTES + 2 * (NOTE + 1024));

      res.setEncoding("utf8");
      let text = "";
      res.on("data", (chunk: string) => (text += chunk));
      res.resume();
      await new Promise((resolve) => res.on("end", resolve));
      const messages = text
        .split("\n")
        .filter((line) => line.startsWith("data: "))
        .map((line) => JSON.parse(line.slice(6)) as { id?: number; method?: string; result?: { content: { text: string }[] } });
      const progress = messages.filter((m) => m.method === "notifications/progress");
      expect(messages.find((m) => m.id === 1)?.result?.content[0]?.text).toBe("flooded");
      expect(progress.length).toBeGreaterThan(0);
      expect(progress.length).toBeLessThan(FLOOD);
    });
  }
});
