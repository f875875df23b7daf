/**
 * SPEC §17 over real HTTP on 127.0.0.1 with the SDK's Streamable HTTP
 * client: every tool end to end, sessions that never share roots, the
 * session limit and idle expiry, stateless mode, the request bound, one
 * lock per file across sessions, Origin and Host checks, and /healthz.
 */
import http from "node:http";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { ListRootsRequestSchema, type CallToolResult, type Root } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toolsFor } from "../../../../src/server/catalog.js";
import { MAX_REQUEST_LINE_BYTES } from "../../../../src/transports/wire-limits.js";
import { describeEachStrategy, tempDir } from "../../../support/fixtures.js";
import { connectHttp, INITIALIZE, mcpHeaders, startHttp, type Running } from "../../../support/http.js";

let root: string;
let remove: () => Promise<void>;
const p = (...parts: string[]) => path.join(root, ...parts);
const PNG = Buffer.from("89504e470d0a1a0a0000000d49484452", "hex");

beforeAll(async () => {
  ({ dir: root, remove } = await tempDir("bfs-http-"));
  for (const d of ["one", "two", "three"]) await mkdir(p(d));
  await writeFile(p("one", "a.txt"), "alpha in one\n");
  await writeFile(p("two", "b.txt"), "beta in two\n");
  await writeFile(p("img.png"), PNG);
  await writeFile(p("big.txt"), "0123456789".repeat(500));
});
afterAll(() => remove());

const text = (result: CallToolResult): string => {
  const block = result.content[0];
  return block?.type === "text" ? block.text : "";
};

type Caller = (name: string, args?: Record<string, unknown>) => Promise<CallToolResult>;
const caller =
  (client: { callTool(p: { name: string; arguments: Record<string, unknown> }): Promise<unknown> }): Caller =>
  async (name, args = {}) =>
    (await client.callTool({ name, arguments: args })) as CallToolResult;

/** A raw HTTP request with any headers (fetch refuses to set Host). */
function raw(url: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}) {
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
    const req = http.request(url, { method: options.method ?? "GET", headers: options.headers }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end(options.body);
  });
}

describeEachStrategy("every tool over Streamable HTTP", (_, runtime) => {
  let running: Running;
  beforeAll(async () => {
    running = await startHttp([root], ["--max-result-chars", "1000"], {}, runtime);
  });
  afterAll(() => running.stop());

  it("lists the same tools as the registry and answers each one", async () => {
    const { client, close } = await connectHttp(running.url);
    const call = caller(client);
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toEqual(toolsFor(false).map((t) => t.name));
      const work = p(`work-${Math.random().toString(36).slice(2)}`);
      const done: string[] = [];
      const ok = async (name: string, args: Record<string, unknown>): Promise<string> => {
        const result = await call(name, args);
        expect(result.isError ?? false, `${name}: ${text(result)}`).toBe(false);
        done.push(name);
        return text(result);
      };
      expect(await ok("create_directory", { path: work })).toBe(`Successfully created directory ${work}`);
      expect(await ok("write_file", { path: path.join(work, "w.txt"), content: "one\ntwo\n" })).toBe(
        `Successfully wrote to ${path.join(work, "w.txt")}`,
      );
      expect(await ok("read_text_file", { path: path.join(work, "w.txt") })).toBe("one\ntwo\n");
      expect(await ok("read_file", { path: path.join(work, "w.txt"), head: 1 })).toBe("one");
      expect(await ok("edit_file", { path: path.join(work, "w.txt"), edits: [{ oldText: "two", newText: "deux" }] })).toMatch(/-two\n\+deux/);
      expect(await readFile(path.join(work, "w.txt"), "utf8")).toBe("one\ndeux\n");
      expect(await ok("replace_in_files", { path: work, query: "one", replacement: "un" })).toBe(
        `Replaced 1 occurrence in 1 file; searched 1 file.\n${path.join(work, "w.txt")}: 1 replacement`,
      );
      await writeFile(path.join(work, "w.txt"), "one\ndeux\n");
      expect(await ok("read_multiple_files", { paths: [path.join(work, "w.txt"), p("one", "a.txt")] })).toContain("alpha in one");
      expect(await ok("list_directory", { path: work })).toBe("[FILE] w.txt");
      expect(await ok("list_directory_with_sizes", { path: work })).toMatch(/Total: 1 files, 0 directories/);
      expect(JSON.parse(await ok("directory_tree", { path: work }))).toEqual([{ name: "w.txt", type: "file" }]);
      expect(await ok("move_file", { source: path.join(work, "w.txt"), destination: path.join(work, "m.txt") })).toMatch(/^Successfully moved/);
      expect(await ok("append_file", { path: path.join(work, "m.txt"), content: "trois\n" })).toMatch(
        /^Successfully appended 6 bytes to .*\(it ended with a line break\)$/,
      );
      expect(await ok("copy_file", { source: path.join(work, "m.txt"), destination: path.join(work, "c.txt") })).toMatch(/^Successfully copied/);
      expect(await readFile(path.join(work, "c.txt"), "utf8")).toBe("one\ndeux\ntrois\n");
      expect(await ok("delete_file", { path: path.join(work, "c.txt") })).toBe(`Successfully deleted ${path.join(work, "c.txt")}`);
      expect(await ok("search_files", { path: work, pattern: "*.txt" })).toBe(path.join(work, "m.txt"));
      expect(await ok("search_file_contents", { path: work, query: "deux" })).toMatch(/^.*m\.txt\n2:deux\n\nFound 1 matching line in 1 file/);
      expect(await ok("get_file_info", { path: path.join(work, "m.txt") })).toMatch(/^size: 15$/m);
      expect(await ok("list_allowed_directories", {})).toBe(`Allowed directories:\n${root}`);
      const media = await call("read_media_file", { path: p("img.png") });
      expect(media.content[0]).toMatchObject({ type: "image", mimeType: "image/png", data: PNG.toString("base64") });
      done.push("read_media_file");
      expect([...done].sort()).toEqual([...names].sort());
      expect(await ok("read_text_file", { path: p("big.txt") })).toMatch(
        /\n\[Result truncated: showing characters 1-1,000 of 5,000\. Call again with offset=1000 to continue\.\]$/,
      );
      const refused = await call("read_text_file", { path: "/etc/hostname" });
      expect(refused.isError).toBe(true);
    } finally {
      await close();
    }
  });
});

describeEachStrategy("sessions are isolated", (_, runtime) => {
  let running: Running;
  beforeAll(async () => {
    running = await startHttp([p("one"), p("two")], [], {}, runtime);
  });
  afterAll(() => running.stop());

  it("a client's roots narrow its own session only, never past the command line, and list_changed narrows again", async () => {
    let roots: Root[] = [{ uri: pathToFileURL(p("one")).href }, { uri: pathToFileURL(p("three")).href }];
    let asked = 0;
    const narrowed = await connectHttp(running.url, {
      capabilities: { capabilities: { roots: { listChanged: true } } },
      prepare: (client) =>
        client.setRequestHandler(ListRootsRequestSchema, () => {
          asked++;
          return { roots };
        }),
    });
    const plain = await connectHttp(running.url);
    try {
      const a = caller(narrowed.client);
      const b = caller(plain.client);
      expect(text(await a("list_allowed_directories"))).toBe(`Allowed directories:\n${p("one")}`);
      expect(asked).toBe(1);
      expect(running.lines.join("\n")).toMatch(new RegExp(`Ignoring root ${p("three").replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: it is outside`));
      expect((await a("read_text_file", { path: p("two", "b.txt") })).isError).toBe(true);
      expect(text(await b("read_text_file", { path: p("two", "b.txt") }))).toBe("beta in two\n");
      expect(text(await b("list_allowed_directories"))).toBe(`Allowed directories:\n${p("one")}\n${p("two")}`);

      roots = [{ uri: pathToFileURL(p("two")).href }];
      await narrowed.client.sendRootsListChanged();
      await expect.poll(async () => text(await a("list_allowed_directories"))).toBe(`Allowed directories:\n${p("two")}`);
      expect((await a("read_text_file", { path: p("one", "a.txt") })).isError).toBe(true);
      expect(text(await b("read_text_file", { path: p("one", "a.txt") }))).toBe("alpha in one\n");
    } finally {
      await narrowed.close();
      await plain.close();
    }
  });

  it("a root that contains the command-line directories narrows to them, never to the root itself", async () => {
    const wide = await connectHttp(running.url, {
      capabilities: { capabilities: { roots: {} } },
      prepare: (client) => client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [{ uri: pathToFileURL(root).href }] })),
    });
    try {
      const call = caller(wide.client);
      expect(text(await call("list_allowed_directories"))).toBe(`Allowed directories:\n${p("one")}\n${p("two")}`);
      expect((await call("read_text_file", { path: p("big.txt") })).isError).toBe(true);
    } finally {
      await wide.close();
    }
  });

  it("two sessions editing one file are serialised by one lock: no edit is lost", async () => {
    const file = p("one", "shared.txt");
    const slots = (s: string) => Array.from({ length: 15 }, (_, i) => `${s}-${i}: todo`);
    await writeFile(file, `${[...slots("a"), ...slots("b")].join("\n")}\n`);
    const first = await connectHttp(running.url);
    const second = await connectHttp(running.url);
    try {
      const edits = (session: typeof first, s: string) =>
        Promise.all(
          Array.from({ length: 15 }, (_, i) =>
            caller(session.client)("edit_file", { path: file, edits: [{ oldText: `${s}-${i}: todo`, newText: `${s}-${i}: done` }] }),
          ),
        );
      const results = [...(await Promise.all([edits(first, "a"), edits(second, "b")])).flat()];
      for (const result of results) expect(result.isError ?? false, text(result)).toBe(false);
      const after = await readFile(file, "utf8");
      expect(after).not.toContain("todo");
      expect(after.split("\n").filter((line) => line.endsWith(": done"))).toHaveLength(30);
    } finally {
      await first.close();
      await second.close();
    }
  });
});

describe("session limit, idle expiry, request bound", () => {
  it("refuses a session past --max-sessions with a clear error, and accepts one once another is closed", async () => {
    const running = await startHttp([root], ["--max-sessions", "2"]);
    try {
      const first = await connectHttp(running.url);
      const second = await connectHttp(running.url);
      await expect(connectHttp(running.url)).rejects.toThrow(/Too many sessions: 2 are open, the limit \(--max-sessions\)/);
      expect(running.server.stats()).toHaveLength(2);
      await first.close();
      const third = await connectHttp(running.url);
      expect(text(await caller(third.client)("list_allowed_directories"))).toBe(`Allowed directories:\n${root}`);
      await second.close();
      await third.close();
    } finally {
      await running.stop();
    }
  });

  it("with --instance-name, mints session ids that name the instance before a dot, and serves them", async () => {
    const running = await startHttp([root], ["--instance-name", "inst-2"]);
    try {
      const session = await connectHttp(running.url);
      expect(session.transport.sessionId).toMatch(/^inst-2\.[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(text(await caller(session.client)("list_allowed_directories"))).toBe(`Allowed directories:\n${root}`);
      await session.close();
    } finally {
      await running.stop();
    }
  });

  it("closes a session idle for --session-idle-s; its id is then unknown, and a new session works", async () => {
    const running = await startHttp([root], ["--session-idle-s", "1"]);
    try {
      const idle = await connectHttp(running.url);
      await caller(idle.client)("list_allowed_directories");
      expect(running.server.stats()).toHaveLength(1);
      await expect.poll(() => running.server.stats().length, { timeout: 10_000, interval: 100 }).toBe(0);
      expect(running.lines.join("\n")).toMatch(/Session [0-9a-f]{8} expired after 1 s idle \(0 open\)/);
      await expect(caller(idle.client)("list_allowed_directories")).rejects.toThrow(/Session not found|404/);
      const fresh = await connectHttp(running.url);
      expect(text(await caller(fresh.client)("list_allowed_directories"))).toBe(`Allowed directories:\n${root}`);
      await fresh.close();
    } finally {
      await running.stop();
    }
  });

  it("answers a POST over 100 MiB with 413 and keeps the session; 11 MiB of write_file content is accepted", async () => {
    const running = await startHttp([root]);
    try {
      const session = await connectHttp(running.url);
      const sessionId = session.transport.sessionId as string;
      const huge = await raw(running.url, {
        method: "POST",
        headers: { ...mcpHeaders({ "mcp-session-id": sessionId }), "Content-Length": String(MAX_REQUEST_LINE_BYTES + 1) },
      });
      expect(huge.status).toBe(413);
      expect(huge.body).toMatch(/Payload Too Large/);
      const content = "z".repeat(11 * 1024 * 1024);
      const wrote = await caller(session.client)("write_file", { path: p("eleven.txt"), content });
      expect(text(wrote)).toBe(`Successfully wrote to ${p("eleven.txt")}`);
      expect((await readFile(p("eleven.txt"), "utf8")).length).toBe(content.length);
      await session.close();
    } finally {
      await running.stop();
    }
  });
});

describe("--read-only over HTTP", () => {
  it("lists only the reading tools in every session, and a write is an unknown tool", async () => {
    const running = await startHttp([root], ["--read-only"]);
    try {
      const session = await connectHttp(running.url);
      const tools = (await session.client.listTools()).tools;
      expect(tools.map((t) => t.name)).toEqual(toolsFor(true).map((t) => t.name));
      const refused = await caller(session.client)("write_file", { path: p("ro.txt"), content: "x" });
      expect(refused.isError).toBe(true);
      expect(text(refused)).toMatch(/^Unknown tool: write_file\./);
      await session.close();
    } finally {
      await running.stop();
    }
  });
});

describe("--tools and --disable-tools over HTTP (SPEC §19)", () => {
  it("offers each session only the chosen tools, read-only mode still winning; a left-out tool is unknown", async () => {
    const running = await startHttp([root], ["--read-only", "--tools", "search_files,write_file,read_text_file"]);
    try {
      for (let i = 0; i < 2; i++) {
        const session = await connectHttp(running.url);
        expect((await session.client.listTools()).tools.map((t) => t.name)).toEqual(["read_text_file", "search_files"]);
        for (const name of ["write_file", "list_directory"]) {
          const refused = await caller(session.client)(name, { path: p("one") });
          expect(text(refused)).toMatch(new RegExp(`^Unknown tool: ${name}\\.`));
        }
        expect(text(await caller(session.client)("read_text_file", { path: p("one", "a.txt") }))).toBe("alpha in one\n");
        await session.close();
      }
    } finally {
      await running.stop();
    }
  });

  it("--disable-tools leaves the rest", async () => {
    const running = await startHttp([root], ["--disable-tools", "read_file,delete_file"]);
    try {
      const session = await connectHttp(running.url);
      const expected = toolsFor(false)
        .map((t) => t.name)
        .filter((n) => n !== "read_file" && n !== "delete_file");
      expect((await session.client.listTools()).tools.map((t) => t.name)).toEqual(expected);
      await session.close();
    } finally {
      await running.stop();
    }
  });
});

describe("stateless mode", () => {
  it("serves each request with a fresh server: no session id, no roots asked, GET refused", async () => {
    const running = await startHttp([p("one")], ["--stateless"]);
    let asked = 0;
    try {
      const session = await connectHttp(running.url, {
        capabilities: { capabilities: { roots: {} } },
        prepare: (client) =>
          client.setRequestHandler(ListRootsRequestSchema, () => {
            asked++;
            return { roots: [] };
          }),
      });
      expect(session.transport.sessionId).toBeUndefined();
      const call = caller(session.client);
      expect(text(await call("list_allowed_directories"))).toBe(`Allowed directories:\n${p("one")}`);
      expect(text(await call("read_text_file", { path: p("one", "a.txt") }))).toBe("alpha in one\n");
      expect(asked).toBe(0);
      const init = await raw(running.url, { method: "POST", headers: mcpHeaders(), body: INITIALIZE });
      expect(init.status).toBe(200);
      expect(init.headers["mcp-session-id"]).toBeUndefined();
      expect((await raw(running.url, { headers: { Accept: "text/event-stream" } })).status).toBe(405);
      await session.close();
    } finally {
      await running.stop();
    }
  });
});

describe("Origin, Host and /healthz", () => {
  let running: Running;
  beforeAll(async () => {
    running = await startHttp([root], ["--allowed-origins", "https://app.example"]);
  });
  afterAll(() => running.stop());

  it("refuses a browser Origin not allowed with 403, lets an allowed one through with CORS headers, and no Origin at all", async () => {
    const evil = await raw(running.url, { method: "POST", headers: mcpHeaders({ Origin: "https://evil.example" }), body: INITIALIZE });
    expect(evil.status).toBe(403);
    expect(JSON.parse(evil.body)).toMatchObject({ error: { message: expect.stringMatching(/requests from this Origin are not allowed/) }, id: null });
    const allowed = await raw(running.url, { method: "POST", headers: mcpHeaders({ Origin: "https://app.example" }), body: INITIALIZE });
    expect(allowed.status).toBe(200);
    expect(allowed.headers["access-control-allow-origin"]).toBe("https://app.example");
    expect(allowed.headers["access-control-expose-headers"]).toMatch(/Mcp-Session-Id/);
    expect((await raw(running.url, { method: "POST", headers: mcpHeaders(), body: INITIALIZE })).status).toBe(200);
  });

  it("refuses a Host that names another server (DNS rebinding) and accepts the loopback names", async () => {
    const rebound = await raw(running.url, { method: "POST", headers: mcpHeaders({ Host: "attacker.example:80" }), body: INITIALIZE });
    expect(rebound.status).toBe(403);
    expect(rebound.body).toMatch(/Host header does not name this server/);
    const port = new URL(running.url).port;
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`]) {
      expect((await raw(running.url, { method: "POST", headers: mcpHeaders({ Host: host }), body: INITIALIZE })).status).toBe(200);
    }
  });

  it("answers /healthz with 200 and nothing else, whatever the Host", async () => {
    const health = await raw(new URL("/healthz", running.url).href, { headers: { Host: "anything.example" } });
    expect(health).toMatchObject({ status: 200, body: "ok\n" });
    expect((await raw(new URL("/elsewhere", running.url).href)).status).toBe(404);
  });

  it("keeps an idle connection longer than a proxy in front keeps its own (60 s), and says so", async () => {
    const agent = new http.Agent({ keepAlive: true });
    try {
      const health = await new Promise<http.IncomingMessage>((resolve, reject) => {
        http.get(new URL("/healthz", running.url), { agent }, resolve).on("error", reject);
      });
      health.resume();
      expect(health.headers["keep-alive"]).toBe("timeout=65");
    } finally {
      agent.destroy();
    }
  });
});
