/**
 * The 2026-07-28 era over HTTP (SPEC §21): every request stands alone. The
 * SDK's createMcpHandler serves it (server/discover, per-request versions,
 * the Mcp-Method / Mcp-Name checks, -32022 for an unsupported version,
 * `X-Accel-Buffering: no` on streams) with a fresh server per request, so any
 * instance can answer any request and nothing is kept between requests.
 * Around it, as for the 2025 era's sessions (§13, §17):
 * - the era is told by the request's MCP-Protocol-Version header, which a
 *   2026-07-28 client sends on every request and a 2025 client never sends
 *   with a 2026 value;
 * - a body is read only while the output all these requests hold for their
 *   clients is under the high-water mark (Lane), as stdio reads a line
 *   (body.ts: the server's budget of bodies, the nesting bound, the guards);
 * - at most `maxInFlight` requests are served at once, beyond that 503, and
 *   none while clients that do not read hold the server's bound (memory.ts);
 * - every message the SDK sends passes memory.ts's screen, as in the 2025
 *   era: progress left out for a response its client is not reading, an
 *   answer replaced by an error past the server's bound;
 * - a client that goes away aborts its request's work (web-serve.ts aborts
 *   the request's signal; the SDK cancels the handler).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import {
  type AuthInfo,
  createMcpHandler,
  type McpHttpHandler,
  type Server,
  SUPPORTED_PROTOCOL_VERSIONS,
  type Transport,
} from "@modelcontextprotocol/server";
import { MAX_REQUEST_LINE_BYTES } from "../wire-limits.js";
import { readMessage } from "./body.js";
import { currentExchange, Exchange } from "./exchange.js";
import { Lane } from "./lane.js";
import { type HttpMemory, screen } from "./memory.js";
import { refuse } from "./refuse.js";
import { serveParsed } from "./web-serve.js";

/** What the 2026-era requests need: a server per request, their bound, and the log. */
export interface ModernOptions {
  /** A server for one request, with the caller's credentials. */
  readonly build: (auth: AuthInfo | undefined) => Server;
  /** Requests served at once, beyond which 503. */
  readonly maxInFlight: number;
  /** The server-wide account of bodies and held answers. */
  readonly memory: HttpMemory;
  readonly log: (line: string) => void;
}

/** True when the request names a protocol revision later than those of the 2025 era (2026-07-28, or one not supported). */
export function isModernRequest(req: IncomingMessage): boolean {
  const version = req.headers["mcp-protocol-version"];
  return typeof version === "string" && version !== "" && !SUPPORTED_PROTOCOL_VERSIONS.includes(version);
}

/** Serves the 2026-07-28 era's requests, each on its own server. */
export class ModernRequests {
  private readonly handler: McpHttpHandler;
  private readonly onerror: (error: Error) => void;
  private readonly lane: Lane;
  private inFlight = 0;
  private dropped = 0;
  private withheld = 0;

  constructor(private readonly options: ModernOptions) {
    this.lane = new Lane(options.memory, true);
    this.onerror = (error: Error) => options.log(`2026-07-28 request failed: ${error.message}`);
    this.handler = createMcpHandler(({ authInfo }) => this.screened(options.build(authInfo)), {
      legacy: "reject",
      maxRequestBodySize: MAX_REQUEST_LINE_BYTES,
      onerror: this.onerror,
    });
  }

  /** Requests being served now. */
  busy(): number {
    return this.inFlight;
  }

  /** Bytes these requests hold that their clients have not taken. */
  unsent(): number {
    return this.lane.unsent();
  }

  /** Progress notifications left out, and answers replaced by an error, so far (memory.ts's screen). */
  screenedOut(): { droppedProgress: number; withheldAnswers: number } {
    return { droppedProgress: this.dropped, withheldAnswers: this.withheld };
  }

  /**
   * `server`, whose transport (the SDK's per-request one, connected by createMcpHandler) sends through the
   * screen and is counted against the request's exchange, found by the async context the request runs in.
   */
  private screened(server: Server): Server {
    const connect = server.connect.bind(server);
    server.connect = async (transport: Transport) => {
      const exchange = currentExchange.getStore();
      if (exchange) {
        const send = transport.send.bind(transport);
        transport.send = async (original, options) => {
          const message = screen(original, exchange, this.options.memory, this.lane.lagging(exchange));
          if (message === undefined) {
            this.dropped++;
            return;
          }
          if (message !== original) this.withheld++;
          exchange.enqueue(message);
          await send(message, options);
        };
      }
      await connect(transport);
    };
    return server;
  }

  /** Serves one request, `auth` passed on to the handlers (without the token). */
  async handle(req: IncomingMessage, res: ServerResponse, auth: AuthInfo | undefined): Promise<void> {
    if (this.inFlight >= this.options.maxInFlight) {
      return refuse(res, 503, `Too many requests at once: ${this.options.maxInFlight} are being served (--max-sessions)`, { "Retry-After": "1" });
    }
    if (this.options.memory.over) return refuse(res, 503, this.options.memory.heldMessage(), { "Retry-After": "2" });
    this.inFlight++;
    const exchange = new Exchange(
      res,
      () => this.lane.drained(),
      () => {
        this.lane.exchanges.delete(exchange);
        this.lane.drained();
      },
    );
    this.lane.exchanges.add(exchange);
    try {
      await this.lane.room();
      const body = req.method === "POST" ? await readMessage(req, res, this.options.memory) : undefined;
      if (req.method === "POST" && body === undefined) return;
      await currentExchange.run(exchange, () => serveParsed(this.handler, req, res, body, auth, this.onerror));
    } finally {
      this.inFlight--;
    }
  }

  /** Aborts the requests in flight and closes their servers. */
  async close(): Promise<void> {
    this.lane.release();
    await this.handler.close();
  }
}
