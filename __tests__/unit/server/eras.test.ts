/**
 * Both protocol eras on one command line (SPEC §21), in process: the SDK's
 * v2 client pinned to 2025-11-25 and to 2026-07-28, and in `auto` mode,
 * through the stdio entry (serveStdio over an in-memory pair) and over
 * Streamable HTTP. The same tools, instructions, identity, cap, refusals,
 * read-only mode and --tools in both; what the 2026 era adds (server/discover,
 * cache hints, -32022, the Mcp-Method/Mcp-Name check, X-Accel-Buffering, no
 * state between requests); roots asked through input_required only where the
 * 2025 era would use them; authentication identical.
 */
import { randomBytes } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import type { CallToolResult, Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { endsWithNotice } from "../../../src/kernel/bounded.js";
import { DEFAULTS } from "../../../src/cli/config.js";
import { VERSION } from "../../../src/server/identity.js";
import { buildServer, type ServerOptions } from "../../../src/server/index.js";
import { type Connection, connectHttpEra, connectStdioEntry, ERAS, type Era } from "../../support/eras.js";
import { tempDir } from "../../support/fixtures.js";
import { type Running, startHttp } from "../../support/http.js";
import { createRuntime } from "../../../src/server/runtime.js";

// The process resources these tests share, as one server process shares them.
const runtime = createRuntime();

let root: string;
let inside: string;
let remove: () => Promise<void>;
const LONG = "x".repeat(5_000);

beforeAll(async () => {
  ({ dir: root, remove } = await tempDir("bfs-eras-"));
  inside = path.join(root, "inside");
  await mkdir(inside);
  await writeFile(path.join(root, "long.txt"), LONG);
  await writeFile(path.join(inside, "note.txt"), "inside\n");
});

afterAll(async () => {
  await remove();
});

const textOf = (result: unknown): string => {
  const block = (result as CallToolResult).content[0];
  return block?.type === "text" ? block.text : "";
};

/** What a client learns of the server: identity, instructions, the tool list. */
async function surface(client: Client): Promise<{ identity: unknown; instructions: string | undefined; tools: unknown }> {
  const { tools } = await client.listTools();
  return { identity: client.getServerVersion(), instructions: client.getInstructions(), tools };
}

type Connect = (era: Era | "auto", server?: Partial<ServerOptions>, client?: { roots?: string[] }) => Promise<Connection>;

const withRoots = (roots: string[] | undefined) =>
  roots === undefined
    ? {}
    : {
        capabilities: { roots: {} },
        prepare: (client: Client) => client.setRequestHandler("roots/list", () => ({ roots: roots.map((dir) => ({ uri: `file://${dir}` })) })),
      };

const stdioEntry: Connect = (era, server = {}, client = {}) =>
  connectStdioEntry(
    () => buildServer({ runtime, limits: { ...DEFAULTS, maxResultChars: 1_000 }, directories: [root], log: () => undefined, ...server }),
    era,
    withRoots(client.roots),
  );

describe("the stdio entry and HTTP serve both eras alike", () => {
  let running: Running;
  let readOnly: Running;
  beforeAll(async () => {
    running = await startHttp([root], ["--max-result-chars", "1000"]);
    readOnly = await startHttp(
      [root],
      ["--max-result-chars", "1000", "--read-only", "--tools", "read_text_file,write_file,list_allowed_directories"],
    );
  });
  afterAll(async () => {
    await running.stop();
    await readOnly.stop();
  });
  const http: Connect = (era, server = {}, client = {}) => connectHttpEra(server.readOnly ? readOnly.url : running.url, era, withRoots(client.roots));

  for (const [transport, connect] of [
    ["stdio entry", stdioEntry],
    ["HTTP", (...args: Parameters<Connect>) => http(...args)],
  ] as const) {
    describe(transport, () => {
      it("auto mode connects as 2026-07-28, with the identity, instructions and tools of 2025-11-25", async () => {
        const seen = [];
        for (const era of [...ERAS, "auto"] as const) {
          const connection = await connect(era);
          try {
            seen.push(await surface(connection.client));
          } finally {
            await connection.close();
          }
        }
        const [legacy, modern, auto] = seen;
        expect(modern?.identity).toEqual({ name: "bounded-filesystem", version: VERSION });
        expect(modern?.instructions).toContain("allowed directories");
        expect(modern).toEqual(legacy);
        expect(auto).toEqual(modern);
      });

      for (const era of ERAS) {
        it(`${era}: the cap, its notice and a parameter's refusal are the same`, async () => {
          const connection = await connect(era);
          try {
            const capped = textOf(await connection.client.callTool({ name: "read_text_file", arguments: { path: path.join(root, "long.txt") } }));
            // The cap bounds the text before the notice.
            const kept = /^x*/.exec(capped)?.[0].length ?? 0;
            expect(kept).toBeGreaterThan(0);
            expect(kept).toBeLessThanOrEqual(1_000);
            expect(endsWithNotice(capped)).toBe(true);
            const refused = (await connection.client.callTool({
              name: "read_text_file",
              arguments: { path: path.join(root, "long.txt"), head: -1 },
            })) as CallToolResult;
            expect(refused.isError).toBe(true);
            expect(textOf(refused)).toContain("head");
          } finally {
            await connection.close();
          }
        });

        it(`${era}: read-only mode and --tools leave out the write tools; calling one writes nothing`, async () => {
          const connection = await connect(era, { readOnly: true, tools: ["read_text_file", "write_file", "list_allowed_directories"] });
          try {
            const { tools } = await connection.client.listTools();
            expect(tools.map((tool) => tool.name).sort()).toEqual(["list_allowed_directories", "read_text_file"]);
            const target = path.join(root, `never-${era}.txt`);
            const refused = (await connection.client.callTool({ name: "write_file", arguments: { path: target, content: "no" } })) as CallToolResult;
            expect(refused.isError).toBe(true);
            expect(textOf(refused)).toContain("Unknown tool: write_file");
            await expect(readFile(target)).rejects.toThrow(/ENOENT/);
          } finally {
            await connection.close();
          }
        });
      }
    });
  }
});

describe("roots in the 2026-07-28 era (SPEC §21)", () => {
  it("stdio without a directory on the command line: the client's roots, asked by input_required, replace the empty set", async () => {
    const lines: string[] = [];
    const connection = await connectStdioEntry(
      () => buildServer({ runtime, limits: DEFAULTS, directories: [], log: (line) => lines.push(line) }),
      "2026-07-28",
      withRoots([inside]),
    );
    try {
      const listed = textOf(await connection.client.callTool({ name: "list_allowed_directories", arguments: {} }));
      expect(listed).toBe(`Allowed directories:\n${inside}`);
      expect(textOf(await connection.client.callTool({ name: "read_text_file", arguments: { path: path.join(inside, "note.txt") } }))).toBe(
        "inside\n",
      );
      expect(lines).toContain("Updated allowed directories from MCP roots: 1 valid directories");
      // Asked once, not on every call.
      expect(lines.filter((line) => line.startsWith("Updated allowed directories")).length).toBe(1);
    } finally {
      await connection.close();
    }
  });

  it("stdio with a directory on the command line: roots are not asked, the command line stands", async () => {
    let asked = 0;
    const connection = await connectStdioEntry(
      () => buildServer({ runtime, limits: DEFAULTS, directories: [root], log: () => undefined }),
      "2026-07-28",
      {
        capabilities: { roots: {} },
        prepare: (client) =>
          client.setRequestHandler("roots/list", () => {
            asked++;
            return { roots: [{ uri: `file://${inside}` }] };
          }),
      },
    );
    try {
      expect(textOf(await connection.client.callTool({ name: "list_allowed_directories", arguments: {} }))).toBe(`Allowed directories:\n${root}`);
      expect(asked).toBe(0);
    } finally {
      await connection.close();
    }
  });

  describe("over HTTP", () => {
    let running: Running;
    beforeAll(async () => {
      running = await startHttp([inside]);
    });
    afterAll(async () => {
      await running.stop();
    });

    it("a client's roots narrow that request and never widen it; without roots the command line stands", async () => {
      const narrowed = await connectHttpEra(running.url, "2026-07-28", withRoots([path.join(inside, "missing-is-skipped"), inside, root]));
      const wider = await connectHttpEra(running.url, "2026-07-28", withRoots([root]));
      const none = await connectHttpEra(running.url, "2026-07-28");
      try {
        // `root` contains the ceiling `inside`: it narrows to the ceiling, never to `root` itself.
        expect(textOf(await narrowed.client.callTool({ name: "list_allowed_directories", arguments: {} }))).toBe(`Allowed directories:\n${inside}`);
        expect(textOf(await wider.client.callTool({ name: "list_allowed_directories", arguments: {} }))).toBe(`Allowed directories:\n${inside}`);
        const outside = (await wider.client.callTool({ name: "read_text_file", arguments: { path: path.join(root, "long.txt") } })) as CallToolResult;
        expect(outside.isError).toBe(true);
        expect(textOf(outside)).toContain("Access denied");
        expect(textOf(await none.client.callTool({ name: "list_allowed_directories", arguments: {} }))).toBe(`Allowed directories:\n${inside}`);
      } finally {
        await Promise.all([narrowed.close(), wider.close(), none.close()]);
      }
    });
  });
});

/** A raw 2026-07-28 request: the headers and `_meta` envelope an SDK client sends. */
function modernRequest(
  method: string,
  params: Record<string, unknown> = {},
  headers: Record<string, string> = {},
  version = "2026-07-28",
): RequestInit & { headers: Record<string, string> } {
  const name: Record<string, string> = typeof params.name === "string" ? { "Mcp-Name": params.name } : {};
  const envelope = {
    "io.modelcontextprotocol/protocolVersion": version,
    "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
    "io.modelcontextprotocol/clientCapabilities": {},
  };
  return {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      "MCP-Protocol-Version": version,
      "Mcp-Method": method,
      ...name,
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 7, method, params: { ...params, _meta: envelope } }),
  };
}

/** The JSON-RPC message of a response, whether sent as JSON or as one SSE event. */
async function messageOf(
  response: Response,
): Promise<{ result?: Record<string, unknown>; error?: { code: number; message: string; data?: unknown } }> {
  const text = await response.text();
  const data = response.headers.get("content-type")?.startsWith("text/event-stream")
    ? text
        .split("\n")
        .filter((line) => line.startsWith("data: "))
        .map((line) => line.slice(6))
        .pop()
    : text;
  return JSON.parse(data ?? "{}");
}

describe("HTTP, 2026-07-28 era", () => {
  let running: Running;
  let other: Running;
  beforeAll(async () => {
    running = await startHttp([root]);
    other = await startHttp([root]);
  });
  afterAll(async () => {
    await running.stop();
    await other.stop();
  });

  it("server/discover names the server, its version and the instructions of initialize, with cache hints", async () => {
    const discovered = await messageOf(await fetch(running.url, modernRequest("server/discover")));
    expect(discovered.result?.supportedVersions).toEqual(["2026-07-28"]);
    expect(discovered.result?._meta).toMatchObject({ "io.modelcontextprotocol/serverInfo": { name: "bounded-filesystem", version: VERSION } });
    expect(discovered.result?.ttlMs).toBe(300_000);
    const legacy = await connectHttpEra(running.url, "2025-11-25");
    try {
      expect(discovered.result?.instructions).toBe(legacy.client.getInstructions());
    } finally {
      await legacy.close();
    }
    const listed = await messageOf(await fetch(running.url, modernRequest("tools/list")));
    expect(listed.result).toMatchObject({ ttlMs: 300_000, cacheScope: "private" });
  });

  it("a 2025-11-25 tools/list carries no cache fields", async () => {
    const legacy = await connectHttpEra(running.url, "2025-11-25");
    try {
      const raw = (await legacy.client.request({ method: "tools/list", params: {} })) as Record<string, unknown>;
      expect(Object.keys(raw)).not.toContain("ttlMs");
      expect(Object.keys(raw)).not.toContain("cacheScope");
    } finally {
      await legacy.close();
    }
  });

  it("an unsupported revision gets -32022 listing the supported ones", async () => {
    const answer = await messageOf(await fetch(running.url, modernRequest("tools/list", {}, {}, "2099-01-01")));
    expect(answer.error?.code).toBe(-32022);
    expect(JSON.stringify(answer.error?.data)).toContain("2026-07-28");
  });

  it("Mcp-Method and Mcp-Name must agree with the body", async () => {
    const method = await fetch(running.url, modernRequest("tools/list", {}, { "Mcp-Method": "tools/call" }));
    expect(method.status).toBe(400);
    expect((await messageOf(method)).error?.code).toBe(-32020);
    const named = await fetch(
      running.url,
      modernRequest("tools/call", { name: "list_allowed_directories", arguments: {} }, { "Mcp-Name": "write_file" }),
    );
    expect(named.status).toBe(400);
    expect((await messageOf(named)).error?.code).toBe(-32020);
  });

  it("a streamed answer carries X-Accel-Buffering: no", async () => {
    // The walker reports progress at its 1,000th entry: the answer is streamed from then on.
    const many = path.join(root, "many");
    await mkdir(many);
    await Promise.all(Array.from({ length: 1_100 }, (_, i) => writeFile(path.join(many, `f${i}.txt`), "")));
    const request = modernRequest("tools/call", { name: "search_files", arguments: { path: many, pattern: "**/f1099.txt" } });
    const body = JSON.parse(String(request.body));
    body.params._meta.progressToken = "p";
    const response = await fetch(running.url, { ...request, body: JSON.stringify(body) });
    expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(response.headers.get("x-accel-buffering")).toBe("no");
    expect(textOf((await messageOf(response)).result)).toContain("f1099.txt");
  });

  it("keeps nothing between requests: a client's calls may alternate between two instances", async () => {
    const urls = [running.url, other.url];
    let next = 0;
    const hosts = new Set<string>();
    const alternate = (_url: string | URL, init?: RequestInit) => {
      const url = urls[next++ % urls.length] as string;
      hosts.add(url);
      return fetch(url, init);
    };
    const client = await connectHttpEra(running.url, "2026-07-28", { fetch: alternate });
    try {
      const file = path.join(root, "alternating.txt");
      for (let i = 0; i < 4; i++) {
        await client.client.callTool({ name: "write_file", arguments: { path: file, content: `round ${i}` } });
        expect(textOf(await client.client.callTool({ name: "read_text_file", arguments: { path: file } }))).toBe(`round ${i}`);
      }
      expect(hosts.size).toBe(2);
    } finally {
      await client.close();
    }
  });
});

describe("authentication is the same in both eras", () => {
  const writeToken = randomBytes(32).toString("base64url");
  const readToken = randomBytes(32).toString("base64url");
  let running: Running;
  beforeAll(async () => {
    const tokens = path.join(root, "tokens");
    await writeFile(tokens, `${writeToken}\n${readToken} read-only\n`, { mode: 0o600 });
    running = await startHttp(
      [root],
      ["--auth-token-file", tokens, "--oauth-issuer", "https://issuer.invalid", "--oauth-jwks-url", "https://issuer.invalid/jwks"],
    );
  });
  afterAll(async () => {
    await running.stop();
  });

  it("no token: 401 naming the resource metadata, before any era is looked at", async () => {
    const modern = await fetch(running.url, modernRequest("server/discover"));
    expect(modern.status).toBe(401);
    expect(modern.headers.get("www-authenticate")).toContain('resource_metadata="');
    await expect(connectHttpEra(running.url, "2025-11-25")).rejects.toThrow();
  });

  for (const era of ERAS) {
    it(`${era}: a read-only token lists the reading tools only and a write is refused naming the scope`, async () => {
      const connection = await connectHttpEra(running.url, era, { headers: { Authorization: `Bearer ${readToken}` } });
      try {
        const names = (await connection.client.listTools()).tools.map((tool) => tool.name);
        expect(names).toContain("read_text_file");
        expect(names).not.toContain("write_file");
        const target = path.join(root, `refused-${era}.txt`);
        const refused = (await connection.client.callTool({ name: "write_file", arguments: { path: target, content: "no" } })) as CallToolResult;
        expect(refused.isError).toBe(true);
        expect(textOf(refused)).toContain("fs:write");
        await expect(readFile(target)).rejects.toThrow(/ENOENT/);
      } finally {
        await connection.close();
      }
      const writer = await connectHttpEra(running.url, era, { headers: { Authorization: `Bearer ${writeToken}` } });
      try {
        expect((await writer.client.listTools()).tools.map((tool) => tool.name)).toContain("write_file");
      } finally {
        await writer.close();
      }
    });
  }
});
