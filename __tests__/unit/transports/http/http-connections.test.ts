/**
 * The connections an HTTP server holds (transports/http/connections.ts, --max-connections): at the bound a new one
 * closes the oldest that has carried no authenticated request, one that has carried one is never closed for room, and
 * when every one has, the new one is refused; over real sockets on 127.0.0.1, a flood of idle connections from a
 * client without a token neither takes more than the bound nor shuts out a client with one.
 */
import { execFileSync } from "node:child_process";
import { EventEmitter } from "node:events";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import https from "node:https";
import net, { type Socket } from "node:net";
import path from "node:path";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { Connections } from "../../../../src/transports/http/connections.js";
import { tempDir } from "../../../support/fixtures.js";
import { connectHttp, INITIALIZE, startHttp, type Running } from "../../../support/http.js";

/** A stand-in socket: destroy() marks it and emits close, as a socket does. */
class FakeSocket extends EventEmitter {
  destroyed = false;
  written = "";
  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.emit("close");
  }
  pause(): void {}
  end(data: string, done: () => void): void {
    this.written += data;
    done();
  }
}

const sockets = (n: number): FakeSocket[] => Array.from({ length: n }, () => new FakeSocket());
const asSocket = (s: FakeSocket): Socket => s as unknown as Socket;

describe("Connections", () => {
  it("closes the oldest connection that carried no authenticated request to make room, never a trusted one", () => {
    const lines: string[] = [];
    const held = new Connections(3, (line) => lines.push(line));
    const [a, b, c, d, e] = sockets(5) as [FakeSocket, FakeSocket, FakeSocket, FakeSocket, FakeSocket];
    for (const s of [a, b, c]) held.admit(asSocket(s));
    held.trust(asSocket(a));
    held.admit(asSocket(d));
    // a is trusted, so b, the oldest of the others, made room.
    expect([a, b, c, d].map((s) => s.destroyed)).toEqual([false, true, false, false]);
    expect(held.size).toBe(3);
    held.admit(asSocket(e));
    expect(c.destroyed).toBe(true);
    expect(held.size).toBe(3);
    expect(lines).toEqual([
      "Connections at the limit of 3 (--max-connections): 1 closed so far that had carried no authenticated request, 0 refused because every connection had",
    ]);
  });

  it("refuses a new connection when every one held has carried an authenticated request, and takes one again once one closes", () => {
    const held = new Connections(2, () => undefined);
    const [a, b, c, d] = sockets(4) as [FakeSocket, FakeSocket, FakeSocket, FakeSocket];
    for (const s of [a, b]) {
      held.admit(asSocket(s));
      held.trust(asSocket(s));
    }
    held.admit(asSocket(c));
    expect([a.destroyed, b.destroyed, c.destroyed]).toEqual([false, false, true]);
    expect(c.written).toMatch(/^HTTP\/1\.1 503 Service Unavailable\r\n/);
    expect(c.written).toContain(
      "Too many connections: 2 are open, each of which has carried an authenticated request, the limit (--max-connections).",
    );
    a.destroy();
    expect(held.size).toBe(1);
    held.admit(asSocket(d));
    expect(d.destroyed).toBe(false);
    expect(held.size).toBe(2);
  });
});

/** Opens `n` connections that send nothing; resolves once each is connected. */
async function idle(port: number, n: number): Promise<{ sockets: net.Socket[]; closed: () => number }> {
  let closed = 0;
  const opened: net.Socket[] = [];
  for (let i = 0; i < n; i++) {
    const socket = net.connect({ host: "127.0.0.1", port });
    socket.on("error", () => undefined);
    socket.on("close", () => closed++);
    await new Promise((resolve) => socket.once("connect", resolve));
    opened.push(socket);
  }
  return { sockets: opened, closed: () => closed };
}

/** Waits (at most 5 s) until `done` holds. */
async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 50));
}

describe("--max-connections over 127.0.0.1", () => {
  const TOKEN = "t".repeat(40);
  const MAX = 8;
  let root: string;
  let remove: () => Promise<void>;
  let running: Running;
  let port: number;

  beforeAll(async () => {
    ({ dir: root, remove } = await tempDir("bfs-conns-"));
    await mkdir(path.join(root, "d"));
    await writeFile(path.join(root, "d", "a.txt"), "alpha\n");
    await writeFile(path.join(root, "tokens"), `${TOKEN}\n`, { mode: 0o600 });
  });
  afterAll(async () => remove?.());
  // A server of its own for each test: connections a client keeps alive would take places in the next.
  beforeEach(async () => {
    const flags = ["--auth-token-file", path.join(root, "tokens"), "--max-connections", String(MAX)];
    running = await startHttp([path.join(root, "d")], flags);
    port = Number(new URL(running.url).port);
  });
  afterEach(async () => running?.stop());

  it("holds at most the bound of idle connections, the newest, and a client with a token is still served", async () => {
    const flood = await idle(port, 3 * MAX);
    try {
      await until(() => flood.closed() >= 2 * MAX);
      // The oldest were closed to make room for the newer ones.
      expect(flood.closed()).toBe(2 * MAX);
      expect(flood.sockets.slice(0, 2 * MAX).every((s) => s.destroyed || s.readableEnded)).toBe(true);
      expect(flood.sockets.slice(2 * MAX).some((s) => s.readableEnded)).toBe(false);
      const { client, close } = await connectHttp(running.url, { headers: { Authorization: `Bearer ${TOKEN}` } });
      try {
        const result = (await client.callTool({ name: "read_text_file", arguments: { path: path.join(root, "d", "a.txt") } })) as CallToolResult;
        expect(result.content).toEqual([{ type: "text", text: "alpha\n" }]);
      } finally {
        await close();
      }
      expect(running.lines.some((line) => line.startsWith(`Connections at the limit of ${MAX} (--max-connections):`))).toBe(true);
    } finally {
      for (const s of flood.sockets) s.destroy();
    }
  });

  /** A connection that sends an authenticated initialize at once; resolves with it, once answered, and what it read. */
  async function initialized(): Promise<{ socket: net.Socket; answer: string; closed: () => boolean }> {
    const socket = net.connect({ host: "127.0.0.1", port });
    let closed = false;
    let got = "";
    socket.on("close", () => (closed = true));
    socket.on("error", () => undefined);
    socket.on("data", (chunk: Buffer) => (got += chunk.toString("utf8")));
    await new Promise((resolve) => socket.once("connect", resolve));
    socket.write(
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\n` +
        `Accept: application/json, text/event-stream\r\nContent-Length: ${Buffer.byteLength(INITIALIZE)}\r\n\r\n${INITIALIZE}`,
    );
    await until(() => closed || /\r\n\r\n/.test(got));
    return { socket, answer: got, closed: () => closed };
  }

  it("keeps a connection that carried an authenticated request while a flood comes after it", async () => {
    const trusted = await initialized();
    expect(trusted.answer).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    const flood = await idle(port, 3 * MAX);
    try {
      // One place is the trusted connection's: the flood keeps MAX - 1 of its own.
      await until(() => flood.closed() >= 3 * MAX - (MAX - 1));
      expect(flood.closed()).toBe(3 * MAX - (MAX - 1));
      expect(trusted.closed()).toBe(false);
    } finally {
      for (const s of flood.sockets) s.destroy();
      trusted.socket.destroy();
    }
  });

  it("answers a connection past the bound 503 naming the limit when every one held has carried an authenticated request, and runs nothing it sent", async () => {
    const held: Array<Awaited<ReturnType<typeof initialized>>> = [];
    try {
      for (let i = 0; i < MAX; i++) held.push(await initialized());
      expect(held.every((c) => c.answer.startsWith("HTTP/1.1 200 OK\r\n"))).toBe(true);
      const extra = await initialized();
      held.push(extra);
      await until(extra.closed);
      expect(extra.closed()).toBe(true);
      expect(extra.answer).toMatch(/^HTTP\/1\.1 503 Service Unavailable\r\n/);
      expect(extra.answer).toContain(
        `Too many connections: ${MAX} are open, each of which has carried an authenticated request, the limit (--max-connections).`,
      );
      // Its initialize opened no session: the MAX held connections' sessions are all there are.
      expect(running.server.stats()).toHaveLength(MAX);
      expect(held.slice(0, MAX).some((c) => c.closed())).toBe(false);
    } finally {
      for (const c of held) c.socket.destroy();
    }
  });
});

describe.skipIf(process.platform === "win32")("--max-connections over TLS", () => {
  const MAX = 4;
  let root: string;
  let remove: () => Promise<void>;
  let running: Running;

  beforeAll(async () => {
    ({ dir: root, remove } = await tempDir("bfs-conns-tls-"));
    const [cert, key] = [path.join(root, "cert.pem"), path.join(root, "key.pem")];
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
        "-keyout",
        key,
        "-out",
        cert,
        "-days",
        "1",
        "-subj",
        "/CN=127.0.0.1",
        "-addext",
        "subjectAltName=IP:127.0.0.1",
      ],
      { stdio: "ignore" },
    );
    running = await startHttp([root], ["--tls-cert", cert, "--tls-key", key, "--max-connections", String(MAX)]);
  });
  afterAll(async () => {
    await running?.stop();
    await remove?.();
  });

  it("holds at most twice the bound of connections stalled before their handshake, and serves once they go", async () => {
    const port = Number(new URL(running.url).port);
    const stalled = await idle(port, 5 * MAX);
    try {
      await until(() => stalled.closed() >= 3 * MAX);
      // Node's own bound, twice ours, closes each one past it at once; the first 2 * MAX stay, waiting on a handshake.
      expect(stalled.closed()).toBe(3 * MAX);
      expect(stalled.sockets.slice(0, 2 * MAX).some((s) => s.destroyed)).toBe(false);
    } finally {
      for (const s of stalled.sockets) s.destroy();
    }
    const ca = await readFile(path.join(root, "cert.pem"));
    const status = await new Promise<number>((resolve, reject) => {
      const req = https.get(new URL("/healthz", running.url), { ca }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on("error", reject);
    });
    expect(status).toBe(200);
  });
});
