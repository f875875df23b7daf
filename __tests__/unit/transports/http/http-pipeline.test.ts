/**
 * One message pipeline for both transports (SPEC §13, §17, §21; issue 28 row 7): the same bytes sent as a
 * stdio line and as an HTTP body, in a 2025 session and as a 2026-07-28 request, get the same answer —
 * a message nested too deep is refused by its id with the stdio wording, not -32603 "Maximum call stack
 * size exceeded"; `arguments: "x"` gets the guards' invalid-params error, not a validation dump; and a
 * JSON-RPC batch is refused, one error per request in it, on both.
 */
import { PassThrough } from "node:stream";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import type { CallToolResult } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BATCH_REFUSAL } from "../../../../src/transports/guards.js";
import { BoundedStdioTransport } from "../../../../src/transports/stdio/transport.js";
import { MAX_MESSAGE_DEPTH } from "../../../../src/transports/wire-limits.js";
import { connectHttpEra, ERAS, type Era } from "../../../support/eras.js";
import { tempDir } from "../../../support/fixtures.js";
import { rawSessionHeaders, startHttp, type Running } from "../../../support/http.js";

type Message = { id?: unknown; result?: unknown; error?: { code: number; message: string } };

let root: string;
let remove: () => Promise<void>;
let running: Running;

beforeAll(async () => {
  ({ dir: root, remove } = await tempDir("bfs-http-pipeline-"));
  await mkdir(path.join(root, "d"));
  await writeFile(path.join(root, "d", "a.txt"), "alpha\n");
  running = await startHttp([root]);
});
afterAll(async () => {
  await running?.stop();
  await remove?.();
});

/** Arrays nested `depth` levels deep. */
const nested = (depth: number): string => `${"[".repeat(depth)}${"]".repeat(depth)}`;

/** What the stdio transport answers to `line`: its first `count` messages. */
async function stdioAnswers(line: string, count: number): Promise<Message[]> {
  const input = new PassThrough();
  const output = new PassThrough();
  const transport = new BoundedStdioTransport(input, output, { log: () => undefined });
  await transport.start();
  let text = "";
  output.setEncoding("utf8");
  output.on("data", (chunk: string) => (text += chunk));
  input.write(`${line}\n`);
  await expect.poll(() => text.split("\n").length - 1, { timeout: 10_000 }).toBeGreaterThanOrEqual(count);
  await transport.close();
  return text
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Message);
}

const sessionHeaders = (): Promise<Record<string, string>> => rawSessionHeaders(running.url);

/** The headers of a raw 2026-07-28 request for `method` (and tool `name`). */
function modernHeaders(method: string, name?: string): Record<string, string> {
  return {
    "Content-Type": "application/json",
    Accept: "application/json, text/event-stream",
    "MCP-Protocol-Version": "2026-07-28",
    "Mcp-Method": method,
    ...(name !== undefined && { "Mcp-Name": name }),
  };
}

/** The 2026-07-28 envelope a request's params carry. */
const ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": {},
};

/** POSTs `body` and returns the messages of the answer (JSON, a JSON array, or SSE events). */
async function httpAnswers(body: string, headers: Record<string, string>): Promise<{ status: number; messages: Message[] }> {
  const response = await fetch(running.url, { method: "POST", headers, body });
  const text = await response.text();
  if (response.headers.get("content-type")?.startsWith("text/event-stream")) {
    const messages = text
      .split("\n")
      .filter((line) => line.startsWith("data: "))
      .map((line) => JSON.parse(line.slice(6)) as Message);
    return { status: response.status, messages };
  }
  const parsed = JSON.parse(text) as Message | Message[];
  return { status: response.status, messages: Array.isArray(parsed) ? parsed : [parsed] };
}

/** A tools/call of read_text_file whose `arguments` are `args` (raw JSON text), with the 2026 envelope when `modern`. */
function toolsCall(id: number, args: string, modern: boolean): string {
  const meta = modern ? `,"_meta":${JSON.stringify(ENVELOPE)}` : "";
  return `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"read_text_file","arguments":${args}${meta}}}`;
}

describe("the same refusal as stdio, over HTTP in both eras", () => {
  const cases = [
    { name: "a message nested deeper than the bound", args: `{"path":${nested(100_000)}}`, pattern: /^Request nested too deep/ },
    { name: 'arguments that are the string "x"', args: '"x"', pattern: /^Invalid params for tools\/call: / },
  ];
  for (const { name, args, pattern } of cases) {
    it(`${name}: answered by its id as stdio answers it`, async () => {
      const [stdio] = await stdioAnswers(toolsCall(5, args, false), 1);
      const refusal = stdio?.error?.message ?? ((stdio?.result as CallToolResult | undefined)?.content[0] as { text: string } | undefined)?.text;
      expect(refusal).toMatch(pattern);

      const session = await httpAnswers(toolsCall(5, args, false), await sessionHeaders());
      expect(session.status).toBe(200);
      expect(session.messages).toEqual([stdio]);

      const modern = await httpAnswers(toolsCall(5, args, true), modernHeaders("tools/call", "read_text_file"));
      expect(modern.status).toBe(200);
      expect(modern.messages).toEqual([stdio]);
      expect(JSON.stringify(modern.messages)).not.toMatch(/Maximum call stack|-32603/);
    });
  }

  it("a JSON-RPC batch is refused with one error per request by id, as on stdio", async () => {
    const batch = JSON.stringify([
      { jsonrpc: "2.0", id: 1, method: "ping" },
      { jsonrpc: "2.0", id: 2, method: "tools/list" },
      { jsonrpc: "2.0", method: "notifications/initialized" },
    ]);
    const stdio = await stdioAnswers(batch, 2);
    expect(stdio).toEqual([1, 2].map((id) => ({ jsonrpc: "2.0", id, error: { code: -32600, message: BATCH_REFUSAL } })));

    const session = await httpAnswers(batch, await sessionHeaders());
    expect(session.status).toBe(400);
    expect(session.messages).toEqual(stdio);
    const modern = await httpAnswers(batch, modernHeaders("ping"));
    expect(modern.status).toBe(400);
    expect(modern.messages).toEqual(stdio);
  });
});

describe("an SDK v2 client in each era", () => {
  for (const era of ERAS as readonly Era[]) {
    it(`${era}: a call with arguments nested too deep is a tool error naming the bound, and the next call is answered`, async () => {
      const connection = await connectHttpEra(running.url, era);
      try {
        let deep: unknown = "leaf";
        for (let i = 0; i < MAX_MESSAGE_DEPTH + 100; i++) deep = [deep];
        const refused = (await connection.client.callTool({ name: "read_text_file", arguments: { path: deep } })) as CallToolResult;
        expect(refused.isError).toBe(true);
        expect((refused.content[0] as { text: string }).text).toBe(
          `Request nested too deep: the tools/call message nests arrays and objects more than ${MAX_MESSAGE_DEPTH} levels deep (the limit is ${MAX_MESSAGE_DEPTH}); it was not read.`,
        );
        const read = (await connection.client.callTool({
          name: "read_text_file",
          arguments: { path: path.join(root, "d", "a.txt") },
        })) as CallToolResult;
        expect(read.content[0]).toEqual({ type: "text", text: "alpha\n" });
      } finally {
        await connection.close();
      }
    });
  }
});
