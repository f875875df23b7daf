/**
 * SPEC §13-§14 through the built binary: no line a client sends ends the
 * session, every request gets an answer, a client that does not read cannot
 * grow the server's memory, and --read-only leaves out the write tools.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BATCH_REFUSAL } from "../../src/transports/guards.js";
import { MAX_MEDIA_BYTES_BOUND, MAX_MESSAGE_DEPTH, MAX_REQUEST_LINE_BYTES } from "../../src/transports/wire-limits.js";
import { call, connect, runServer, SERVER_JS, textOf } from "../support/spawn.js";
import { tempDir } from "../support/fixtures.js";

type Reply = { id?: string | number | null; result?: Record<string, unknown>; error?: { code: number; message: string } };

/** A server spoken to in raw lines; replies are collected in order, so answers without an id can be awaited too. */
interface Raw {
  readonly child: ChildProcess;
  send(line: string): void;
  /** Resolves with the first reply (not yet taken) that matches. */
  next(match: (reply: Reply) => boolean, ms?: number): Promise<Reply>;
  /** Writes `bytes` of filler inside a JSON string in 1 MiB writes, waiting whenever the pipe is full. */
  stream(before: string, bytes: number, after: string): Promise<void>;
  /** A line of /proc/<pid>/status in kB (VmHWM: the peak resident memory so far). */
  memoryKb(field: "VmHWM" | "VmRSS"): number;
  stop(): Promise<void>;
}

async function openRaw(args: readonly string[]): Promise<Raw> {
  const child = spawn(process.execPath, [SERVER_JS, ...args], { stdio: ["pipe", "pipe", "pipe"] });
  child.stderr!.resume();
  child.stdin!.on("error", () => undefined);
  const replies: Reply[] = [];
  const waiters: (() => void)[] = [];
  let buffered = "";
  child.stdout!.on("data", (chunk: Buffer) => {
    buffered += chunk.toString("utf8");
    let nl: number;
    while ((nl = buffered.indexOf("\n")) !== -1) {
      replies.push(JSON.parse(buffered.slice(0, nl)) as Reply);
      buffered = buffered.slice(nl + 1);
    }
    for (const wake of waiters.splice(0)) wake();
  });
  const raw: Raw = {
    child,
    send: (line) => void child.stdin!.write(`${line}\n`),
    async next(match, ms = 15_000) {
      const deadline = Date.now() + ms;
      for (;;) {
        const at = replies.findIndex(match);
        if (at !== -1) return replies.splice(at, 1)[0] as Reply;
        if (Date.now() > deadline || child.exitCode !== null) throw new Error(`no matching reply; exit ${String(child.exitCode)}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 200);
        });
      }
    },
    async stream(before, bytes, after) {
      const filler = Buffer.alloc(1024 * 1024, "x");
      const write = (data: string | Buffer) =>
        new Promise<void>((resolve) => (child.stdin!.write(data) ? resolve() : child.stdin!.once("drain", resolve)));
      await write(before);
      for (let sent = 0; sent < bytes; sent += filler.length) await write(sent + filler.length <= bytes ? filler : filler.subarray(0, bytes - sent));
      await write(`${after}\n`);
    },
    memoryKb(field) {
      const status = readFileSync(`/proc/${child.pid}/status`, "utf8");
      return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1]);
    },
    async stop() {
      child.stdin!.end();
      if (child.exitCode === null) await new Promise((resolve) => child.on("exit", resolve));
    },
  };
  raw.send(
    JSON.stringify({
      jsonrpc: "2.0",
      id: "init",
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    }),
  );
  await raw.next((r) => r.id === "init");
  raw.send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }));
  return raw;
}

const byId = (id: string | number) => (reply: Reply) => reply.id === id;
const toolCall = (id: number, name: string, args: Record<string, unknown>) =>
  JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } });
const toolText = (reply: Reply): string => (reply.result?.content as { text: string }[] | undefined)?.[0]?.text ?? "";

let dir: string;
let remove: () => Promise<void>;
beforeAll(async () => {
  ({ dir, remove } = await tempDir("bfs-session-"));
  await fs.writeFile(path.join(dir, "page.txt"), `${"y".repeat(99)}\n`.repeat(600));
});
afterAll(() => remove());

describe("large messages (SPEC §13)", () => {
  it("accepts write_file content of 11 MiB and 70 MiB, refuses a line over the transport bound, and keeps the session", async () => {
    const server = await connect([dir]);
    try {
      for (const size of [11 * 1024 * 1024, 70 * 1024 * 1024]) {
        const result = await call(server.client, "write_file", { path: path.join(dir, `big-${size}.txt`), content: "a".repeat(size) });
        expect(result.isError ?? false, textOf(result)).toBe(false);
        expect((await fs.stat(path.join(dir, `big-${size}.txt`))).size).toBe(size);
        await fs.rm(path.join(dir, `big-${size}.txt`));
      }
      // The SDK client sends the id after the params, so the scanner has to find it at the very end of the line.
      const over = await call(server.client, "write_file", { path: path.join(dir, "over.txt"), content: "b".repeat(MAX_REQUEST_LINE_BYTES) });
      expect(over.isError).toBe(true);
      expect(textOf(over)).toMatch(/^Request too large: the tools\/call message is [\d,]+ bytes; the limit is 104,857,600 bytes/);
      await expect(fs.stat(path.join(dir, "over.txt"))).rejects.toThrow(/ENOENT/);
      const after = await call(server.client, "list_allowed_directories");
      expect(textOf(after)).toContain(dir);
    } finally {
      await server.close();
    }
  });

  it("discards an over-long line as it streams: 400 MiB do not raise the peak memory past a bound", async () => {
    const raw = await openRaw([dir]);
    try {
      await raw.stream('{"jsonrpc":"2.0","method":"ping","params":{"pad":"', 400 * 1024 * 1024, '"},"id":7}');
      const reply = await raw.next(byId(7));
      expect(reply.error?.code).toBe(-32600);
      expect(reply.error?.message).toMatch(/Request too large: the ping message is 419,430,4\d\d bytes; the limit is 104,857,600/);
      // Holding the line would take over 400 MiB; the line limit's 100 MiB plus the process itself stay well under 330 MB.
      expect(raw.memoryKb("VmHWM")).toBeLessThan(330 * 1024);
      raw.send(JSON.stringify({ jsonrpc: "2.0", id: 8, method: "ping" }));
      expect((await raw.next(byId(8))).result).toEqual({});
    } finally {
      await raw.stop();
    }
  });

  it("refuses a media limit whose answer would not fit SDK clients, and serves a file at the bound to an SDK client", async () => {
    // The SDK's stdio ReadBuffer default, which its client uses (verified in node_modules).
    const { STDIO_DEFAULT_MAX_BUFFER_SIZE } = await import("@modelcontextprotocol/sdk/shared/stdio.js");
    expect(STDIO_DEFAULT_MAX_BUFFER_SIZE).toBe(10 * 1024 * 1024);
    expect(Math.ceil(MAX_MEDIA_BYTES_BOUND / 3) * 4).toBeLessThan(STDIO_DEFAULT_MAX_BUFFER_SIZE - 60_000);

    const refused = await runServer(["--max-media-bytes", String(MAX_MEDIA_BYTES_BOUND + 1), dir]);
    expect(refused.code).toBe(2);
    expect(refused.stderr.trim().split("\n")).toHaveLength(1);
    expect(refused.stderr).toContain(`--max-media-bytes is ${MAX_MEDIA_BYTES_BOUND + 1}, over the bound of ${MAX_MEDIA_BYTES_BOUND} bytes`);

    await fs.writeFile(path.join(dir, "at-bound.png"), Buffer.alloc(MAX_MEDIA_BYTES_BOUND, 0xab));
    const server = await connect([`--max-media-bytes=${MAX_MEDIA_BYTES_BOUND}`, dir]);
    try {
      const result = await call(server.client, "read_media_file", { path: path.join(dir, "at-bound.png") });
      const block = result.content[0] as { type: string; data: string };
      expect(block.type).toBe("image");
      expect(Buffer.from(block.data, "base64").length).toBe(MAX_MEDIA_BYTES_BOUND);
    } finally {
      await server.close();
      await fs.rm(path.join(dir, "at-bound.png"));
    }
  });
});

describe("every request is answered (SPEC §13)", () => {
  let raw: Raw;
  beforeAll(async () => (raw = await openRaw([dir])));
  afterAll(() => raw.stop());

  const list = { name: "list_allowed_directories", arguments: {} };
  const invalid: [string, string, unknown, RegExp][] = [
    ["progressToken {}", "tools/call", { ...list, _meta: { progressToken: {} } }, /params\._meta\.progressToken: .*\(got an object\)/],
    ["progressToken null", "tools/call", { ...list, _meta: { progressToken: null } }, /params\._meta\.progressToken: .*\(got null\)/],
    ["progressToken true", "tools/call", { ...list, _meta: { progressToken: true } }, /params\._meta\.progressToken: .*\(got boolean true\)/],
    ["progressToken 1.5", "tools/call", { ...list, _meta: { progressToken: 1.5 } }, /params\._meta\.progressToken: .*\(got the fraction 1\.5\)/],
    ["_meta a string", "tools/call", { ...list, _meta: "x" }, /params\._meta: .*expected object/],
    ["params null", "tools/call", null, /params: .*expected object, received null/],
    ["params an array", "tools/call", [list], /params: .*expected object, received array/],
    ["arguments a string", "tools/call", { name: "write_file", arguments: "x" }, /params\.arguments: .*expected record/],
    ["tools/list params an array", "tools/list", [], /params: .*expected object/],
    ["ping params null", "ping", null, /params: .*received null/],
    ["initialize without fields", "initialize", {}, /params\.protocolVersion: .*expected string/],
  ];
  it.each(invalid)("%s gets -32602 naming the field", async (_label, method, params, reason) => {
    const id = Math.floor(Math.random() * 1e9);
    raw.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    const reply = await raw.next(byId(id));
    expect(reply.error?.code, JSON.stringify(reply)).toBe(-32602);
    expect(reply.error?.message).toMatch(new RegExp(`^Invalid params for ${method}: `));
    expect(reply.error?.message).toMatch(reason);
  });

  it("answers a line that is not JSON with -32700 and a bad id with -32600, both with id null (issue 18)", async () => {
    raw.send("{not json");
    expect((await raw.next((r) => r.error?.code === -32700)).id).toBeNull();
    raw.send(JSON.stringify({ jsonrpc: "2.0", id: { x: 1 }, method: "ping" }));
    expect((await raw.next((r) => r.error?.code === -32600)).error?.message).toMatch(/id must be a string or an integer \(got an object\)/);
  });

  it("answers an unparsable line by the id the raw text still shows, and a JSON value that is no object with id null", async () => {
    raw.send('{"jsonrpc":"2.0","id":"half","method":"ping","params":{');
    const half = await raw.next(byId("half"));
    expect(half.error?.code).toBe(-32700);
    expect(half.error?.message).toMatch(/^Parse error: the line is not valid JSON/);
    raw.send("42");
    const scalar = await raw.next((r) => r.error?.code === -32600 && /must be an object/.test(r.error.message));
    expect(scalar.id).toBeNull();
  });

  // Issue 18: a batch was answered by one error without an id, so a batching client waited forever.
  it("refuses a JSON-RPC batch with one error per request, by its id, and answers nothing for its notifications and responses", async () => {
    raw.send(
      JSON.stringify([
        { jsonrpc: "2.0", id: "b1", method: "ping" },
        { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "list_allowed_directories", arguments: {} } },
        { jsonrpc: "2.0", method: "notifications/roots/list_changed" },
        { jsonrpc: "2.0", id: 99, result: {} },
        "not a message",
      ]),
    );
    raw.send(JSON.stringify({ jsonrpc: "2.0", id: "after-batch", method: "ping" }));
    const first = await raw.next(byId("b1"));
    const second = await raw.next(byId(7));
    for (const reply of [first, second]) {
      expect(reply.error).toEqual({ code: -32600, message: BATCH_REFUSAL });
      expect(reply.result).toBeUndefined();
    }
    const stray = await raw.next((r) => r.id === null && r.error?.message === BATCH_REFUSAL);
    expect(stray.error?.code).toBe(-32600);
    // Replies go out in order: once the ping after the batch is answered, nothing else of the batch can follow.
    expect((await raw.next(byId("after-batch"))).result).toEqual({});
    await expect(raw.next(byId(99), 0)).rejects.toThrow(/no matching reply/);
  });

  it("answers an empty batch with one Invalid Request error, id null", async () => {
    raw.send("[]");
    const reply = await raw.next((r) => r.error?.code === -32600 && /empty batch/.test(r.error.message));
    expect(reply.id).toBeNull();
  });

  it("refuses arguments nested 100,000 deep with a tool error naming the limit, not a stack overflow", async () => {
    const deep = `${"[".repeat(100_000)}1${"]".repeat(100_000)}`;
    raw.send(`{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"a","content":${deep}}}}`);
    const reply = await raw.next(byId(41));
    expect(reply.result?.isError).toBe(true);
    expect(toolText(reply)).toMatch(
      new RegExp(`nests arrays and objects more than ${MAX_MESSAGE_DEPTH} levels deep \\(the limit is ${MAX_MESSAGE_DEPTH}\\)`),
    );
    // A deep notification has no id to answer; it must not disturb the session either.
    raw.send(`{"jsonrpc":"2.0","method":"notifications/x","params":{"a":${deep}}}`);
    const tooDeep = MAX_MESSAGE_DEPTH + 1;
    raw.send(`{"jsonrpc":"2.0","id":42,"method":"ping","params":{"a":${"[".repeat(tooDeep)}${"]".repeat(tooDeep)}}}`);
    expect((await raw.next(byId(42))).error?.message).toMatch(/^Request nested too deep: the ping message/);
    // One level less is read, and the tool's own validation names the parameter.
    const deepest = `${"[".repeat(MAX_MESSAGE_DEPTH - 5)}${"]".repeat(MAX_MESSAGE_DEPTH - 5)}`;
    raw.send(`{"jsonrpc":"2.0","id":43,"method":"tools/call","params":{"name":"read_text_file","arguments":{"path":${deepest}}}}`);
    expect(toolText(await raw.next(byId(43)))).toMatch(/^Invalid arguments for read_text_file: path: /);
  });

  it("answers initialize twice and an unknown method, and still serves tool calls", async () => {
    const init = { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "again", version: "1" } };
    raw.send(JSON.stringify({ jsonrpc: "2.0", id: 51, method: "initialize", params: init }));
    expect((await raw.next(byId(51))).result?.serverInfo).toMatchObject({ name: "bounded-filesystem" });
    raw.send(JSON.stringify({ jsonrpc: "2.0", id: 52, method: "no/such" }));
    expect((await raw.next(byId(52))).error?.code).toBe(-32601);
    raw.send(toolCall(53, "read_text_file", { path: path.join(dir, "page.txt"), limit: 200 }));
    expect(toolText(await raw.next(byId(53)))).toMatch(/^y{99}\n/);
  });
});

describe("backpressure (SPEC §13)", () => {
  it("a client that sends 3,000 reads without reading answers does not grow the server past a bound; all are answered later", async () => {
    const raw = await openRaw([dir]);
    try {
      raw.child.stdout!.pause();
      const count = 3000;
      for (let id = 1; id <= count; id++) raw.send(toolCall(id, "read_text_file", { path: path.join(dir, "page.txt") }));
      // Let the server do its worst: wait until its resident memory stops changing (no time is asserted).
      let last = 0;
      for (let steady = 0; steady < 5; ) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        const rss = raw.memoryKb("VmRSS");
        steady = Math.abs(rss - last) < 1024 ? steady + 1 : 0;
        last = rss;
      }
      // Each answer is about 60 KB: holding them all would take over 180 MB (the unbounded server peaked above 800 MB).
      expect(raw.memoryKb("VmHWM")).toBeLessThan(200 * 1024);
      raw.child.stdout!.resume();
      for (let id = 1; id <= count; id++) expect(toolText(await raw.next(byId(id)))).toMatch(/^y{99}\n/);
    } finally {
      await raw.stop();
    }
  });
});

describe("read-only mode (SPEC §14)", () => {
  const WRITE_TOOLS = ["write_file", "edit_file", "replace_in_files", "create_directory", "move_file", "append_file", "copy_file", "delete_file"];

  it.each([
    ["--read-only", ["--read-only"], {}],
    ["BOUNDED_FS_READ_ONLY=1", [], { BOUNDED_FS_READ_ONLY: "1" }],
  ])("%s leaves out the write tools; calling one is an unknown-tool error", async (_label, flags, env) => {
    const server = await connect([...flags, dir], { env: { PATH: process.env.PATH ?? "", ...env } });
    try {
      const names = (await server.client.listTools()).tools.map((tool) => tool.name);
      expect(names).toHaveLength(11);
      for (const name of WRITE_TOOLS) expect(names).not.toContain(name);
      expect(names).toContain("read_text_file");
      const result = await call(server.client, "write_file", { path: path.join(dir, "ro.txt"), content: "x" });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/^Unknown tool: write_file\./);
      await expect(fs.stat(path.join(dir, "ro.txt"))).rejects.toThrow(/ENOENT/);
      // SPEC §14, §15, §22: the new changing tools are absent too, and a call to one changes nothing.
      await fs.writeFile(path.join(dir, "kept.txt"), "kept");
      for (const [tool, args] of [
        ["append_file", { path: path.join(dir, "kept.txt"), content: "x" }],
        ["copy_file", { source: path.join(dir, "kept.txt"), destination: path.join(dir, "copy.txt") }],
        ["delete_file", { path: path.join(dir, "kept.txt") }],
        ["replace_in_files", { path: path.join(dir, "kept.txt"), query: "kept", replacement: "gone" }],
      ] as const) {
        const refused = await call(server.client, tool, args);
        expect(refused.isError).toBe(true);
        expect(textOf(refused)).toMatch(new RegExp(`^Unknown tool: ${tool}\\.`));
      }
      expect(await fs.readFile(path.join(dir, "kept.txt"), "utf8")).toBe("kept");
      await expect(fs.stat(path.join(dir, "copy.txt"))).rejects.toThrow(/ENOENT/);
    } finally {
      await server.close();
    }
  });

  it("--help lists --read-only and the media bound", async () => {
    const help = await runServer(["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/--read-only/);
    expect(help.stdout).toContain(String(MAX_MEDIA_BYTES_BOUND));
  });
});
