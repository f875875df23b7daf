/**
 * The promises of SPEC §13 per HTTP session (§17): a client that stops
 * reading holds at most a bounded number of bytes in the server while
 * another session is answered, and gets every answer once it reads again; a
 * client that goes away mid-search cancels that search, and only that one;
 * a client's own cancel ends the request's stream.
 */
import http from "node:http";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { MAX_IN_FLIGHT, OUTPUT_HIGH_WATER } from "../../../../src/transports/wire-limits.js";
import { tempDir } from "../../../support/fixtures.js";
import { connectHttp, mcpHeaders, rawSessionHeaders, startHttp, type Running } from "../../../support/http.js";

/** Walks of a directory named "hang-*" never end by themselves: only their signal stops them. */
const walks = vi.hoisted(() => ({ started: [] as string[], aborted: [] as string[] }));
vi.mock("../../../../src/walking/walker.js", async (importOriginal) => {
  const original = await importOriginal<typeof import("../../../../src/walking/walker.js")>();
  const walkTree: typeof original.walkTree = (root, visitor, opts) => {
    if (!root.includes("hang-")) return original.walkTree(root, visitor, opts);
    walks.started.push(root);
    return new Promise((_resolve, reject) => {
      const stop = () => {
        walks.aborted.push(root);
        reject(opts.signal?.reason ?? new Error("aborted"));
      };
      if (opts.signal?.aborted) stop();
      else opts.signal?.addEventListener("abort", stop, { once: true });
    });
  };
  return { ...original, walkTree };
});

// Each answer is larger than what the kernel and the client's socket take from a paused connection (about 4 MB on
// loopback), so the server itself holds the rest.
const WINDOW = 6_000_000;
const CALLS = 40;
let root: string;
let remove: () => Promise<void>;
let running: Running;

beforeAll(async () => {
  ({ dir: root, remove } = await tempDir("bfs-http-flow-"));
  await writeFile(path.join(root, "window.txt"), "w".repeat(WINDOW));
  for (const d of ["hang-a", "hang-b", "hang-c", "hang-d", "calm"]) await mkdir(path.join(root, d));
  for (let i = 0; i < 20; i++) await writeFile(path.join(root, "calm", `f${i}.txt`), "calm\n");
  // The server-wide bound on answers held (http-memory.test.ts) is set out of reach: this file is about one session's.
  running = await startHttp([root], ["--max-result-chars", String(WINDOW)], {}, undefined, { heldBytes: 2 ** 30 });
});
afterAll(async () => {
  await running?.stop();
  await remove?.();
});

/** Opens a session with raw requests; returns its id. */
async function rawSession(): Promise<string> {
  return (await rawSessionHeaders(running.url, "2025-06-18"))["mcp-session-id"] as string;
}

/** POSTs `body` in session `id` and hands back the response as soon as its headers arrive, unread. */
function post(id: string, body: unknown): Promise<{ req: http.ClientRequest; res: http.IncomingMessage }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      running.url,
      { method: "POST", headers: mcpHeaders({ "mcp-session-id": id, "mcp-protocol-version": "2025-06-18" }) },
      (res) => {
        res.pause();
        resolve({ req, res });
      },
    );
    req.on("error", reject);
    req.end(JSON.stringify(body));
  });
}

/** The JSON-RPC messages of an SSE body. */
const events = (sse: string): { id?: number; result?: CallToolResult; method?: string }[] =>
  sse
    .split("\n\n")
    .map((frame) => frame.split("\n").find((line) => line.startsWith("data: ")))
    .filter((line): line is string => line !== undefined)
    .map((line) => JSON.parse(line.slice(6)));

const statsOf = (prefix: string) => running.server.stats().find((s) => prefix.startsWith(s.id));

describe("a client that stops reading", () => {
  it("makes the server hold a bounded number of bytes, stops its work meanwhile, and gets every answer when it reads again", async () => {
    const id = await rawSession();
    // One POST per request: a JSON-RPC batch is refused over HTTP as on stdio.
    const calls = Array.from({ length: CALLS }, (_, i) => ({
      jsonrpc: "2.0",
      id: i + 1,
      method: "tools/call",
      params: { name: "read_text_file", arguments: { path: path.join(root, "window.txt") } },
    }));
    // Not awaited: a POST waiting at the session's gate gets its response headers only once the client reads.
    const responses = calls.map((call) => post(id, call));
    // Stalled: nothing runs, something waits (queued, or its body unread at the gate), because the output the client has not taken is over the mark.
    await expect
      .poll(
        () => {
          const s = statsOf(id);
          return s !== undefined && s.inFlight === 0 && s.queued > 0;
        },
        { timeout: 20_000, interval: 50 },
      )
      .toBe(true);
    const stalled = statsOf(id)!;
    const message = WINDOW + 200;
    expect(stalled.unsent).toBeGreaterThanOrEqual(OUTPUT_HIGH_WATER);
    expect(stalled.unsent).toBeLessThanOrEqual(OUTPUT_HIGH_WATER + MAX_IN_FLIGHT * message);
    expect(stalled.queued).toBeLessThan(CALLS);

    const other = await connectHttp(running.url);
    const answered = (await other.client.callTool({ name: "list_allowed_directories", arguments: {} })) as CallToolResult;
    expect(answered.content[0]).toEqual({ type: "text", text: `Allowed directories:\n${root}` });
    await other.close();

    const bodies = await Promise.all(
      responses.map(async (posted) => {
        const { res } = await posted;
        res.setEncoding("utf8");
        let body = "";
        res.on("data", (chunk: string) => (body += chunk));
        res.resume();
        return new Promise<string>((resolve) => res.on("end", () => resolve(body)));
      }),
    );
    const results = bodies.flatMap((body) => events(body).filter((e) => e.id !== undefined));
    expect(results.map((r) => r.id).sort((a, b) => a! - b!)).toEqual(calls.map((c) => c.id));
    for (const r of results) expect(r.result?.content[0]).toEqual({ type: "text", text: "w".repeat(WINDOW) });
    expect(statsOf(id)).toMatchObject({ inFlight: 0, queued: 0 });
  });
});

describe("a client that goes away", () => {
  it("cancels its search when it disconnects mid-call, leaves another session's search alone, and keeps its session", async () => {
    const id = await rawSession();
    const other = await connectHttp(running.url);
    try {
      const before = walks.aborted.length;
      const { req } = await post(id, {
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "search_files", arguments: { path: path.join(root, "hang-a"), pattern: "**" } },
      });
      await expect.poll(() => walks.started.filter((r) => r.endsWith("hang-a")).length).toBeGreaterThan(0);
      const calm = (await other.client.callTool({
        name: "search_files",
        arguments: { path: path.join(root, "calm"), pattern: "*.txt" },
      })) as CallToolResult;
      expect((calm.content[0] as { text: string }).text.split("\n")).toHaveLength(20);
      expect(walks.aborted.length).toBe(before);

      req.destroy();
      await expect.poll(() => walks.aborted.filter((r) => r.endsWith("hang-a")).length).toBe(1);
      await expect.poll(() => statsOf(id)?.inFlight).toBe(0);
      const again = await fetch(running.url, {
        method: "POST",
        headers: mcpHeaders({ "mcp-session-id": id, "mcp-protocol-version": "2025-06-18" }),
        body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "list_allowed_directories", arguments: {} } }),
      });
      expect(events(await again.text())[0]?.result?.content[0]).toEqual({ type: "text", text: `Allowed directories:\n${root}` });
    } finally {
      await other.close();
    }
  });

  it("refuses a request whose id is that of one in flight, and the first keeps its own answer", async () => {
    const id = await rawSession();
    const hanging = {
      jsonrpc: "2.0",
      id: 7,
      method: "tools/call",
      params: { name: "search_files", arguments: { path: path.join(root, "hang-d"), pattern: "**" } },
    };
    const first = await post(id, hanging);
    await expect.poll(() => walks.started.filter((r) => r.endsWith("hang-d")).length).toBe(1);
    const again = await fetch(running.url, {
      method: "POST",
      headers: mcpHeaders({ "mcp-session-id": id, "mcp-protocol-version": "2025-06-18" }),
      body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "list_allowed_directories", arguments: {} } }),
    });
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({
      jsonrpc: "2.0",
      id: 7,
      error: {
        code: -32600,
        message:
          "Invalid Request: id 7 is the id of a request this server has not answered yet; this request was not run. Give each request an id of its own.",
      },
    });
    expect(statsOf(id)?.inFlight).toBe(1);
    // The first's own stream still carries its answer: cancelled by the client, its walk stops and its stream ends.
    await fetch(running.url, {
      method: "POST",
      headers: mcpHeaders({ "mcp-session-id": id, "mcp-protocol-version": "2025-06-18" }),
      body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 7 } }),
    });
    await expect.poll(() => walks.aborted.filter((r) => r.endsWith("hang-d")).length).toBe(1);
    first.res.resume();
    await new Promise((resolve) => first.res.on("end", resolve));
    // Answered, the id may be used again.
    const reused = await fetch(running.url, {
      method: "POST",
      headers: mcpHeaders({ "mcp-session-id": id, "mcp-protocol-version": "2025-06-18" }),
      body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "list_allowed_directories", arguments: {} } }),
    });
    expect(events(await reused.text())[0]?.result?.content[0]).toEqual({ type: "text", text: `Allowed directories:\n${root}` });
  });

  it("a call the client cancels stops its walk and ends that request's stream", async () => {
    const session = await connectHttp(running.url);
    try {
      await session.client.callTool({ name: "list_allowed_directories", arguments: {} });
      const sid = session.transport.sessionId as string;
      const open = statsOf(sid)!.responses;
      const controller = new AbortController();
      const call = session.client.callTool({ name: "search_files", arguments: { path: path.join(root, "hang-b"), pattern: "**" } }, undefined, {
        signal: controller.signal,
      });
      await expect.poll(() => walks.started.filter((r) => r.endsWith("hang-b")).length).toBe(1);
      controller.abort(new Error("enough"));
      await expect(call).rejects.toThrow(/enough/);
      await expect.poll(() => walks.aborted.filter((r) => r.endsWith("hang-b")).length).toBe(1);
      await expect.poll(() => statsOf(sid)?.responses).toBe(open);
      expect(statsOf(sid)?.inFlight).toBe(0);
    } finally {
      await session.close();
    }
  });
});

describe("the drain (what SIGTERM runs)", () => {
  it("refuses new connections at once, waits for the call in flight up to the grace time, then closes the sessions", async () => {
    const draining = await startHttp([root]);
    const session = await connectHttp(draining.url);
    const call = session.client.callTool({ name: "search_files", arguments: { path: path.join(root, "hang-c"), pattern: "**" } });
    const failed = call.then(
      () => "answered",
      (error: unknown) => String(error),
    );
    await expect.poll(() => walks.started.filter((r) => r.endsWith("hang-c")).length).toBe(1);
    const drained = draining.server.shutdown(1_000);
    await expect(fetch(new URL("/healthz", draining.url), { headers: { Connection: "close" } })).rejects.toThrow();
    // The grace time passes with the call still running: only then is its session closed and the walk stopped.
    expect(walks.aborted.filter((r) => r.endsWith("hang-c"))).toHaveLength(0);
    await drained;
    expect(walks.aborted.filter((r) => r.endsWith("hang-c"))).toHaveLength(1);
    expect(await failed).toMatch(/The call was stopped: the session was closed: the server is shutting down/);
    expect(draining.lines.join("\n")).toMatch(/closed: the server is shutting down \(0 open\)/);
  });
});
