/**
 * What the HTTP server holds across all its requests and sessions, in both eras (SPEC §13, §17; issue 28
 * rows 3 and 4), with the server's bounds lowered so that a few megabytes reach them:
 * - request bodies: a body that does not fit beside those in flight gets 503 with Retry-After before it is
 *   read (its Content-Length), or as soon as it passes the bound (chunked); the room comes back when a body's
 *   request ends, and small requests of other clients still fit;
 * - answers held for clients that do not read: many sessions and 2026-07-28 requests calling read_media_file
 *   without reading make the server hold at most the bound plus one answer per client; past it their further
 *   answers are replaced by an error saying why, new sessions and requests get 503, a client that reads is
 *   still answered, and every call is answered once the clients read.
 */
import http from "node:http";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import type { CallToolResult } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectHttpEra } from "../../../support/eras.js";
import { tempDir } from "../../../support/fixtures.js";
import { rawSessionHeaders, startHttp, type Running } from "../../../support/http.js";

const MiB = 1024 * 1024;
const BODY_BOUND = 3 * MiB;
const HELD_BOUND = 8 * MiB;
/** A media file whose answer (base64, about 6 MB) is larger than what a paused loopback socket takes (about 4 MB). */
const MEDIA_BYTES = 4_500_000;
const ANSWER_BYTES = Math.ceil(MEDIA_BYTES / 3) * 4 + 1024;

let root: string;
let remove: () => Promise<void>;
let running: Running;

beforeAll(async () => {
  ({ dir: root, remove } = await tempDir("bfs-http-memory-"));
  await writeFile(path.join(root, "media.png"), Buffer.alloc(MEDIA_BYTES, 7));
  await writeFile(path.join(root, "a.txt"), "alpha\n");
  running = await startHttp([root], [], {}, undefined, { bodyBytes: BODY_BOUND, heldBytes: HELD_BOUND });
});
afterAll(async () => {
  await running?.stop();
  await remove?.();
});

const BASE = { "Content-Type": "application/json", Accept: "application/json, text/event-stream" };
const ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": {},
};
const modernHeaders = (method: string, name?: string) => ({
  ...BASE,
  "MCP-Protocol-Version": "2026-07-28",
  "Mcp-Method": method,
  ...(name !== undefined && { "Mcp-Name": name }),
});

const sessionHeaders = (): Promise<Record<string, string>> => rawSessionHeaders(running.url);

interface Posted {
  readonly req: http.ClientRequest;
  /** Resolves with the response as soon as its headers arrive, paused (unread). */
  readonly response: Promise<http.IncomingMessage>;
}

/** Starts a POST with `headers`; `body` is written whole, or when undefined only the headers are sent (the caller writes the rest). */
function post(headers: Record<string, string>, body?: string): Posted {
  let req!: http.ClientRequest;
  const response = new Promise<http.IncomingMessage>((resolve, reject) => {
    req = http.request(running.url, { method: "POST", headers }, (res) => {
      res.pause();
      resolve(res);
    });
    req.on("error", reject);
  });
  response.catch(() => undefined);
  if (body !== undefined) req.end(body);
  else req.flushHeaders();
  return { req, response };
}

async function readAll(res: http.IncomingMessage): Promise<string> {
  res.setEncoding("utf8");
  let text = "";
  res.on("data", (chunk: string) => (text += chunk));
  res.resume();
  await new Promise((resolve) => res.on("end", resolve));
  return text;
}

type Answer = { id?: number; result?: CallToolResult; error?: { code: number; message: string } };
const answersOf = (text: string): Answer[] =>
  text.startsWith("{")
    ? [JSON.parse(text) as Answer]
    : text
        .split("\n")
        .filter((line) => line.startsWith("data: "))
        .map((line) => JSON.parse(line.slice(6)) as Answer)
        .filter((m) => m.id !== undefined);

describe("request bodies in flight, over all sessions and both eras", () => {
  it("a body whose length does not fit beside those being read gets 503 with Retry-After; small requests still fit; the room comes back", async () => {
    const client = await connectHttpEra(running.url, "2025-11-25");
    try {
      // A slow upload declaring 2 MiB holds its reservation while it trickles in.
      const slow = post({ ...(await sessionHeaders()), "Content-Length": String(2 * MiB) });
      slow.req.write(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"x","content":"`);
      await expect.poll(() => running.server.memory().bodyBytes, { timeout: 10_000 }).toBe(2 * MiB);

      for (const headers of [await sessionHeaders(), modernHeaders("tools/call", "write_file")]) {
        const refused = post({ ...headers, "Content-Length": String(2 * MiB) });
        const res = await refused.response;
        refused.req.destroy();
        expect(res.statusCode).toBe(503);
        expect(res.headers["retry-after"]).toBe("2");
        expect(JSON.parse(await readAll(res)).error.message).toBe(
          "Server busy: a request body of 2,097,152 bytes does not fit beside the 2,097,152 bytes of request bodies being served " +
            "(the limit is 3,145,728 bytes over all requests); retry after the Retry-After time.",
        );
      }
      const small = (await client.client.callTool({ name: "read_text_file", arguments: { path: path.join(root, "a.txt") } })) as CallToolResult;
      expect(small.content[0]).toEqual({ type: "text", text: "alpha\n" });

      slow.req.destroy();
      await expect.poll(() => running.server.memory().bodyBytes, { timeout: 10_000 }).toBe(0);
      const content = "z".repeat(2 * MiB - 1024);
      const wrote = (await client.client.callTool({
        name: "write_file",
        arguments: { path: path.join(root, "two.txt"), content },
      })) as CallToolResult;
      expect(wrote.content[0]).toEqual({ type: "text", text: `Successfully wrote to ${path.join(root, "two.txt")}` });
    } finally {
      await client.close();
    }
  });

  it("a chunked body is refused with 503 once it passes the bound, and nothing of it stays reserved", async () => {
    for (const headers of [await sessionHeaders(), modernHeaders("tools/call", "write_file")]) {
      const chunked = post(headers);
      const piece = "y".repeat(256 * 1024);
      let status: number | undefined;
      chunked.response.then(
        (res) => (status = res.statusCode),
        () => undefined,
      );
      chunked.req.write(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"x","content":"`);
      // Offered until the answer comes, at most 16 times the bound (the socket takes some 4 MB ahead of the server).
      for (let sent = 0; sent < 16 * BODY_BOUND && status === undefined; sent += piece.length) {
        // Once answered, the request may never drain: whichever comes first.
        if (!chunked.req.write(piece)) await Promise.race([new Promise((resolve) => chunked.req.once("drain", resolve)), chunked.response]);
        await new Promise((resolve) => setImmediate(resolve));
      }
      const res = await chunked.response;
      chunked.req.destroy();
      expect(res.statusCode).toBe(503);
      expect(JSON.parse(await readAll(res)).error.message).toMatch(/^Server busy: this request body does not fit beside/);
      await expect.poll(() => running.server.memory().bodyBytes, { timeout: 10_000 }).toBe(0);
    }
  });
});

describe("answers held for clients that do not read, over all sessions and both eras", () => {
  it("stay within the bound plus one answer per client; further answers become errors; new clients get 503; every call is answered once read", async () => {
    const SESSIONS = 4;
    const CALLS = 4;
    const MODERN = 3;
    const reader = await connectHttpEra(running.url, "2025-11-25");
    try {
      const media = (id: number, modern: boolean) =>
        JSON.stringify({
          jsonrpc: "2.0",
          id,
          method: "tools/call",
          params: { name: "read_media_file", arguments: { path: path.join(root, "media.png") }, ...(modern && { _meta: ENVELOPE }) },
        });
      const posted: Posted[] = [];
      for (let s = 0; s < SESSIONS; s++) {
        const headers = await sessionHeaders();
        for (let c = 1; c <= CALLS; c++) posted.push(post(headers, media(c, false)));
      }
      for (let m = 1; m <= MODERN; m++) posted.push(post(modernHeaders("tools/call", "read_media_file"), media(m, true)));

      // Nothing is read: the server goes past its bound, and every session stops starting calls.
      await expect
        .poll(
          () => running.server.memory().heldBytes >= HELD_BOUND && running.server.stats().every((s) => s.id === "2026-07-28" || s.inFlight === 0),
          {
            timeout: 20_000,
            interval: 50,
          },
        )
        .toBe(true);
      expect(running.server.memory().heldBytes).toBeLessThanOrEqual(HELD_BOUND + (SESSIONS + MODERN) * ANSWER_BYTES);
      expect(running.server.stats().reduce((n, s) => n + s.withheldAnswers, 0)).toBeGreaterThan(0);

      // A client that reads is still answered; a new session or request is refused until the others read.
      const listed = (await reader.client.callTool({ name: "list_allowed_directories", arguments: {} })) as CallToolResult;
      expect(listed.content[0]).toEqual({ type: "text", text: `Allowed directories:\n${root}` });
      const listCall = (id: number) =>
        JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "list_allowed_directories", arguments: {}, _meta: ENVELOPE } });
      for (const headers of [BASE, modernHeaders("tools/call", "list_allowed_directories")]) {
        const body =
          headers === BASE
            ? JSON.stringify({
                jsonrpc: "2.0",
                id: 0,
                method: "initialize",
                params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "late", version: "1" } },
              })
            : listCall(9);
        const late = await fetch(running.url, { method: "POST", headers, body });
        expect(late.status).toBe(503);
        expect(late.headers.get("retry-after")).toBe("2");
        expect(await late.text()).toMatch(
          /Server busy: clients that do not read their responses hold [\d,]+ bytes of answers \(the limit is 8,388,608 bytes/,
        );
      }

      // Once the clients read, every call has exactly one answer: the image, or the error that replaced it.
      const answers = (await Promise.all(posted.map(async ({ response }) => answersOf(await readAll(await response))))).flat();
      expect(answers).toHaveLength(SESSIONS * CALLS + MODERN);
      const images = answers.filter((a) => a.result?.content[0]?.type === "image");
      const withheld = answers.filter((a) =>
        a.error?.message.startsWith("Answer not sent: this client has not read the answers it was already sent"),
      );
      expect(images.length + withheld.length).toBe(answers.length);
      expect(withheld.length).toBeGreaterThan(0);
      expect(withheld[0]?.error?.message).toMatch(
        /the limit is 8,388,608 bytes over all sessions\)\. The call itself ran \(a change it made stands\); only its result was dropped\. Read the open responses before calling again\.$/,
      );
      await expect.poll(() => running.server.memory().heldBytes, { timeout: 10_000 }).toBe(0);
      const after = await fetch(running.url, {
        method: "POST",
        headers: modernHeaders("tools/call", "list_allowed_directories"),
        body: listCall(10),
      });
      expect(after.status).toBe(200);
    } finally {
      await reader.close();
    }
  });
});
