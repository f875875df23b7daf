/**
 * The connections the HTTP server holds, at most --max-connections. Each holds a descriptor, and descriptors are what
 * the tools open files with: 19,500 idle connections from a client without a token held 19,521 of this process's
 * 20,000, and past that every session's calls failed to open files and no new client was served. At the bound, a new
 * connection closes the oldest one that has not yet carried a request past authentication, so a flood of such
 * connections never shuts out a client with a token (its connection would be the newest of the flood's); only when
 * every connection has carried one is the new one refused, with a 503 that names the limit.
 */
import type { Socket } from "node:net";
import { formatCount } from "../../kernel/bounded.js";

// At most one log line this often, while connections are being closed or refused at the bound.
const LOG_EVERY_MS = 10_000;

/**
 * Answers a refused connection 503 naming the limit, as an HTTP response before any request (clients read it as the
 * answer to theirs), then closes it. It is not read from, so no request of it reaches the server.
 */
function refuse(socket: Socket, max: number): void {
  socket.pause();
  const body = JSON.stringify({
    jsonrpc: "2.0",
    error: {
      code: -32000,
      message: `Too many connections: ${formatCount(max)} are open, each of which has carried an authenticated request, the limit (--max-connections). Retry shortly, or reuse a connection.`,
    },
    id: null,
  });
  socket.on("error", () => undefined);
  socket.end(
    "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\nConnection: close\r\n" +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    () => socket.destroy(),
  );
}

/** The connections of one HTTP(S) server, oldest first, by whether they have carried an authenticated request. */
export class Connections {
  // Connections that have carried no request past authentication, oldest first (a Set keeps insertion order).
  private readonly untrusted = new Set<Socket>();
  private readonly trusted = new Set<Socket>();
  private closed = 0;
  private refused = 0;
  private lastLog = 0;

  constructor(
    private readonly max: number,
    private readonly log: (line: string) => void,
  ) {}

  /** Connections held now. */
  get size(): number {
    return this.untrusted.size + this.trusted.size;
  }

  /** Takes a new connection (the server's "connection" event, or "secureConnection" over TLS), making room or refusing it. */
  admit(socket: Socket): void {
    if (this.size >= this.max) {
      const oldest = this.untrusted.values().next().value;
      if (oldest === undefined) {
        this.refused++;
        refuse(socket, this.max);
        this.report();
        return;
      }
      this.untrusted.delete(oldest);
      oldest.destroy();
      this.closed++;
      this.report();
    }
    this.untrusted.add(socket);
    socket.once("close", () => {
      if (!this.untrusted.delete(socket)) this.trusted.delete(socket);
    });
  }

  /** Marks the connection a request came on once the request passed authentication: it is no longer closed to make room. */
  trust(socket: Socket): void {
    if (this.untrusted.delete(socket)) this.trusted.add(socket);
  }

  private report(): void {
    const now = Date.now();
    if (now - this.lastLog < LOG_EVERY_MS) return;
    this.lastLog = now;
    this.log(
      `Connections at the limit of ${formatCount(this.max)} (--max-connections): ${formatCount(this.closed)} closed so far that had ` +
        `carried no authenticated request, ${formatCount(this.refused)} refused because every connection had`,
    );
  }
}
