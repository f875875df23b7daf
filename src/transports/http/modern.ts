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
 *   clients is under the high-water mark (Lane), up to the 100 MiB bound;
 * - at most `maxInFlight` requests are served at once, beyond that 503;
 * - a client that goes away aborts its request's work (toNodeHandler aborts
 *   the request's signal; the SDK cancels the handler).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { toNodeHandler } from "@modelcontextprotocol/node";
import { type AuthInfo, createMcpHandler, type McpHttpHandler, type Server, SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/server";
import { MAX_REQUEST_LINE_BYTES } from "../wire-limits.js";
import { Exchange } from "./exchange.js";
import { Lane } from "./lane.js";
import { refuse } from "./refuse.js";

/** What the 2026-era requests need: a server per request, their bound, and the log. */
export interface ModernOptions {
  /** A server for one request, with the caller's credentials. */
  readonly build: (auth: AuthInfo | undefined) => Server;
  /** Requests served at once, beyond which 503. */
  readonly maxInFlight: number;
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
  private readonly serve: (req: IncomingMessage & { auth?: AuthInfo }, res: ServerResponse) => Promise<void>;
  private readonly lane = new Lane();
  private inFlight = 0;

  constructor(private readonly options: ModernOptions) {
    const onerror = (error: Error) => options.log(`2026-07-28 request failed: ${error.message}`);
    this.handler = createMcpHandler(({ authInfo }) => options.build(authInfo), {
      legacy: "reject",
      maxRequestBodySize: MAX_REQUEST_LINE_BYTES,
      onerror,
    });
    this.serve = toNodeHandler(this.handler, { maxRequestBodySize: MAX_REQUEST_LINE_BYTES, onerror });
  }

  /** Requests being served now. */
  busy(): number {
    return this.inFlight;
  }

  /** Bytes these requests hold that their clients have not taken. */
  unsent(): number {
    return this.lane.unsent();
  }

  /** Serves one request, `auth` passed on to the handlers (without the token). */
  async handle(req: IncomingMessage & { auth?: AuthInfo }, res: ServerResponse, auth: AuthInfo | undefined): Promise<void> {
    if (this.inFlight >= this.options.maxInFlight) {
      return refuse(res, 503, `Too many requests at once: ${this.options.maxInFlight} are being served (--max-sessions)`, { "Retry-After": "1" });
    }
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
      if (auth) req.auth = auth;
      await this.serve(req, res);
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
