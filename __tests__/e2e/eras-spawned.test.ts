/**
 * Both protocol eras against the built server, where the process boundary
 * is the point (SPEC §21): the SDK's v2 client spawning it over stdio in
 * `auto` mode (2026-07-28, no fallback), pinned to each era, and a 1.x
 * client; `auto` over HTTP; an oversized line from a 2026 client answered
 * by the bounded transport with the session kept.
 */
import { spawn } from "node:child_process";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { type CallToolResult, Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { VERSION } from "../../src/server/identity.js";
import { eraOptions, type Era } from "../support/eras.js";
import { tempDir } from "../support/fixtures.js";
import { spawnHttp } from "../support/http.js";
import { call as callLegacy, connect as connectLegacy, SERVER_JS, textOf as textOfLegacy } from "../support/spawn.js";

let root: string;
let remove: () => Promise<void>;

beforeAll(async () => {
  ({ dir: root, remove } = await tempDir("bfs-eras-spawned-"));
  await writeFile(path.join(root, "a.txt"), "alpha\n");
});

afterAll(async () => {
  await remove();
});

const textOf = (result: unknown): string => {
  const block = (result as CallToolResult).content[0];
  return block?.type === "text" ? block.text : "";
};

/** The v2 client in `era` over stdio, spawning the built server. */
async function spawnV2(era: Era | "auto"): Promise<{ client: Client; stderr: () => string }> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [SERVER_JS, root], stderr: "pipe" });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  const client = new Client({ name: "eras-spawned", version: "1.0.0" }, eraOptions(era));
  await client.connect(transport);
  return { client, stderr: () => stderr };
}

describe("stdio", () => {
  for (const [era, expected] of [
    ["auto", "modern"],
    ["2026-07-28", "modern"],
    ["2025-11-25", "legacy"],
  ] as const) {
    it(`the v2 client in ${era} mode connects as ${expected} and reads a file`, async () => {
      const { client } = await spawnV2(era);
      try {
        expect(client.getProtocolEra()).toBe(expected);
        expect(client.getServerVersion()).toEqual({ name: "bounded-filesystem", version: VERSION });
        expect(textOf(await client.callTool({ name: "read_text_file", arguments: { path: path.join(root, "a.txt") } }))).toBe("alpha\n");
      } finally {
        await client.close();
      }
    });
  }

  it("a 1.x client still connects and reads a file", async () => {
    const connected = await connectLegacy([root]);
    try {
      expect(connected.client.getServerVersion()).toMatchObject({ name: "bounded-filesystem", version: VERSION });
      expect(textOfLegacy(await callLegacy(connected.client, "read_text_file", { path: path.join(root, "a.txt") }))).toBe("alpha\n");
    } finally {
      await connected.close();
    }
  });

  it("a 2026 request line over the transport bound is answered by its id and the connection goes on", async () => {
    // Raw lines, as no SDK client sends an oversized one: discover, then a 101 MiB tools/call, then tools/list.
    const child = spawn(process.execPath, [SERVER_JS, root], { stdio: ["pipe", "pipe", "ignore"] });
    const envelope = { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} };
    const answers: Record<string, unknown>[] = [];
    let pending = "";
    const got = new Promise<void>((resolve) => {
      child.stdout.on("data", (chunk: Buffer) => {
        pending += chunk.toString("utf8");
        for (let at = pending.indexOf("\n"); at !== -1; at = pending.indexOf("\n")) {
          answers.push(JSON.parse(pending.slice(0, at)));
          pending = pending.slice(at + 1);
          if (answers.length === 3) resolve();
        }
      });
    });
    try {
      child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "server/discover", params: { _meta: envelope } })}\n`);
      const head = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"_meta":${JSON.stringify(envelope)},"name":"write_file","arguments":{"path":"x","content":"`;
      child.stdin.write(head);
      const piece = "y".repeat(1024 * 1024);
      for (let i = 0; i < 101; i++) if (!child.stdin.write(piece)) await new Promise((resolve) => child.stdin.once("drain", resolve));
      child.stdin.write(`"}}}\n${JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/list", params: { _meta: envelope } })}\n`);
      await got;
      const byId = new Map(answers.map((answer) => [answer.id, answer]));
      expect(byId.get(1)).toMatchObject({ result: { supportedVersions: ["2026-07-28"] } });
      expect(byId.get(2)).toMatchObject({ result: { isError: true } });
      expect(textOf(byId.get(2)?.result)).toMatch(/Request too large: the tools\/call message is .* bytes; the limit is 104,857,600 bytes/);
      const listed = byId.get(3) as { result: { tools: unknown[] } };
      expect(listed.result.tools.length).toBeGreaterThan(10);
    } finally {
      child.kill();
    }
  }, 60_000);
});

describe("HTTP", () => {
  it("the v2 client in auto mode connects as 2026-07-28 with no fallback request", async () => {
    const spawned = spawnHttp(["--http", "127.0.0.1:0", root]);
    try {
      const url = await spawned.url;
      const methods: string[] = [];
      const watched = async (target: string | URL, init?: RequestInit) => {
        methods.push(`${init?.method} ${new Headers(init?.headers).get("mcp-method") ?? "(none)"}`);
        return fetch(target, init);
      };
      const client = new Client({ name: "eras-spawned", version: "1.0.0" }, eraOptions("auto"));
      await client.connect(new StreamableHTTPClientTransport(new URL(url), { fetch: watched }));
      try {
        expect(client.getProtocolEra()).toBe("modern");
        expect(textOf(await client.callTool({ name: "read_text_file", arguments: { path: path.join(root, "a.txt") } }))).toBe("alpha\n");
        // One discover, then the call: no initialize, no refused probe.
        expect(methods).toEqual(["POST server/discover", "POST tools/call"]);
      } finally {
        await client.close();
      }
    } finally {
      spawned.child.kill("SIGTERM");
      await spawned.exited;
    }
  });
});
