/**
 * The sessions of the HTTP server (SPEC §17). Each session has its own MCP
 * server instance (buildServer) and its own transport, never shared with
 * another client: SDK advisories showed one server or transport shared
 * between clients leaking responses across them. Session ids are random
 * UUIDs (after the instance's name with --instance-name), bound to the principal that opened them; a session idle for
 * --session-idle-s is closed; at most --max-sessions are open. Stateless
 * mode builds a server and transport for each request and closes both after
 * it (a stateless transport must never be reused).
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AuthInfo, Server } from "@modelcontextprotocol/server";
import type { RootsMode } from "../../server/roots.js";
import { Lane } from "./lane.js";
import { HttpMemory, type MemoryBounds } from "./memory.js";
import { refuse } from "./refuse.js";
import { isModernRequest, ModernRequests } from "./modern.js";
import { SessionTransport, type TrafficStats } from "./session-transport.js";

/** What the registry needs from the outside: a server factory, the limits of sessions, and the log. */
export interface SessionOptions {
  /** Builds a fresh MCP server; `log` is prefixed with the session. */
  /** A server for one session (or one stateless request), opened with `auth`. */
  readonly build: (roots: RootsMode, log: (line: string) => void, auth: AuthInfo | undefined) => Server;
  readonly stateless: boolean;
  readonly idleMs: number;
  readonly maxSessions: number;
  /** What every session id starts with (the instance's name and a dot, behind a balancer). @default "" */
  readonly idPrefix?: string;
  /** The server-wide bounds of bodies in flight and answers held (tests lower them). @default wire-limits.ts's */
  readonly memory?: MemoryBounds;
  readonly log: (line: string) => void;
}

/** One open session as tests and the drain see it. */
export interface SessionStats extends TrafficStats {
  /** The first 8 characters of the session id (the whole id is a credential of sorts, so it is never logged). */
  readonly id: string;
}

interface Session {
  readonly id: string;
  readonly principal: string;
  readonly server: Server;
  readonly transport: SessionTransport;
  readonly lane: Lane;
  timer?: NodeJS.Timeout;
}

const short = (id: string): string => id.slice(0, 8);

/** Creates, finds, expires and closes sessions, and serves requests through them. */
export class Sessions {
  private readonly open = new Map<string, Session>();
  private opening = 0;
  /** Request bodies in flight and answers held, over every session and both eras. */
  readonly memory: HttpMemory;
  private readonly statelessLane: Lane;
  private readonly stateless = new Set<SessionTransport>();
  private closing = false;
  private readonly modern: ModernRequests;

  constructor(private readonly options: SessionOptions) {
    this.memory = new HttpMemory(options.memory);
    this.statelessLane = new Lane(this.memory, true);
    // 2026-07-28 requests narrow by the roots each one carries back, never by a session's.
    this.modern = new ModernRequests({
      build: (auth) => options.build("narrow", options.log, auth),
      maxInFlight: options.maxSessions,
      memory: this.memory,
      log: options.log,
    });
  }

  /** Serves one request to /mcp from `principal`. */
  async handle(req: IncomingMessage, res: ServerResponse, auth: AuthInfo | undefined, principal: string): Promise<void> {
    if (this.closing) return refuse(res, 503, "The server is shutting down", { Connection: "close" });
    if (isModernRequest(req)) return this.modern.handle(req, res, auth);
    if (this.options.stateless) return this.serveStateless(req, res, auth);
    const header = req.headers["mcp-session-id"];
    if (typeof header === "string") {
      const session = this.open.get(header);
      // A session is found only by the principal that opened it: a leaked id is no use to another token.
      if (!session || session.principal !== principal) return refuse(res, 404, "Session not found");
      this.touch(session);
      try {
        await session.transport.handle(req, res, auth);
      } finally {
        this.touch(session);
      }
      return;
    }
    if (req.method !== "POST") return refuse(res, 400, "Bad Request: Mcp-Session-Id header is required");
    return this.openSession(req, res, auth, principal);
  }

  private async openSession(req: IncomingMessage, res: ServerResponse, auth: AuthInfo | undefined, principal: string): Promise<void> {
    const { maxSessions } = this.options;
    if (this.open.size + this.opening >= maxSessions) {
      return refuse(
        res,
        503,
        `Too many sessions: ${maxSessions} are open, the limit (--max-sessions). Close one (DELETE /mcp with its ` +
          `Mcp-Session-Id) or wait until an idle one expires (after --session-idle-s ${this.options.idleMs / 1000} s).`,
        { "Retry-After": "5" },
      );
    }
    if (this.memory.over) return refuse(res, 503, this.memory.heldMessage(), { "Retry-After": "2" });
    this.opening++;
    let session: Session | undefined;
    let log = this.options.log;
    const lane = new Lane(this.memory);
    const transport = new SessionTransport(lane, {
      sessionIdGenerator: () => `${this.options.idPrefix ?? ""}${randomUUID()}`,
      onsessioninitialized: (id) => {
        session = { id, principal, server, transport, lane };
        this.open.set(id, session);
        this.opening--;
        this.options.log(`Session ${short(id)} opened (${this.open.size} open)`);
        this.touch(session);
      },
      onsessionclosed: (id) => this.forget(id, "closed by the client"),
    });
    const server = this.options.build("narrow", (line) => log(line), auth);
    log = (line) => this.options.log(session ? `[session ${short(session.id)}] ${line}` : line);
    await server.connect(transport);
    try {
      await transport.handle(req, res, auth);
    } finally {
      // Not an initialize after all (the SDK answered 400): nothing to keep.
      if (!session) {
        this.opening--;
        lane.release();
        await server.close();
      }
    }
  }

  private async serveStateless(req: IncomingMessage, res: ServerResponse, auth: AuthInfo | undefined): Promise<void> {
    if (req.method !== "POST")
      return refuse(res, 405, "Method Not Allowed: this server is stateless; send each request as a POST", { Allow: "POST" });
    if (this.stateless.size >= this.options.maxSessions) {
      return refuse(res, 503, `Too many requests at once: ${this.options.maxSessions} are being served (--max-sessions)`, { "Retry-After": "1" });
    }
    if (this.memory.over) return refuse(res, 503, this.memory.heldMessage(), { "Retry-After": "2" });
    const transport = new SessionTransport(this.statelessLane, {});
    const server = this.options.build("fixed", this.options.log, auth);
    this.stateless.add(transport);
    res.once("close", () => {
      this.stateless.delete(transport);
      void server.close();
    });
    await server.connect(transport);
    await transport.handle(req, res, auth);
  }

  /** Restarts a session's idle clock; an idle session with calls still running is not expired. */
  private touch(session: Session): void {
    clearTimeout(session.timer);
    if (this.open.get(session.id) !== session) return;
    session.timer = setTimeout(() => {
      const { inFlight, queued } = session.transport.stats();
      if (inFlight + queued > 0) return this.touch(session);
      void this.close(session, `expired after ${this.options.idleMs / 1000} s idle`);
    }, this.options.idleMs);
    session.timer.unref();
  }

  private forget(id: string, why: string): void {
    const session = this.open.get(id);
    if (!session) return;
    clearTimeout(session.timer);
    this.open.delete(id);
    session.lane.release();
    this.options.log(`Session ${short(id)} ${why} (${this.open.size} open)`);
  }

  private async close(session: Session, why: string): Promise<void> {
    this.forget(session.id, why);
    await session.transport.abandon(`The call was stopped: the session was ${why}`);
    await session.server.close();
  }

  /** Every open session's traffic, the stateless requests' as one entry, and the 2026-07-28 requests' as another. */
  stats(): SessionStats[] {
    const all = [...this.open.values()].map((s) => ({ id: short(s.id), ...s.transport.stats() }));
    if (this.stateless.size > 0) {
      const each = [...this.stateless].map((t) => t.stats());
      const sum = (key: "inFlight" | "queued" | "droppedProgress" | "withheldAnswers") => each.reduce((n, s) => n + s[key], 0);
      const lane = this.statelessLane;
      all.push({
        id: "stateless",
        inFlight: sum("inFlight"),
        queued: sum("queued"),
        droppedProgress: sum("droppedProgress"),
        withheldAnswers: sum("withheldAnswers"),
        unsent: lane.unsent(),
        largestHeld: lane.largestHeld(),
        responses: lane.exchanges.size,
      });
    }
    const modern = this.modern.busy();
    if (modern > 0) {
      const unsent = this.modern.unsent();
      all.push({ id: "2026-07-28", inFlight: modern, queued: 0, ...this.modern.screenedOut(), unsent, largestHeld: unsent, responses: modern });
    }
    return all;
  }

  /** Calls started or waiting, over all sessions. */
  busy(): number {
    return this.stats().reduce((n, s) => n + s.inFlight + s.queued, 0);
  }

  /** Refuses new requests from now on (SIGTERM); calls in flight go on. */
  stopAccepting(): void {
    this.closing = true;
  }

  /** Closes every session and stateless request: their streams end and what still runs is aborted. */
  async closeAll(): Promise<void> {
    this.closing = true;
    this.statelessLane.release();
    const sessions = [...this.open.values()];
    await this.modern.close();
    await Promise.all([...this.stateless].map((t) => t.abandon("The call was stopped: the server is shutting down")));
    await Promise.all(sessions.map((s) => this.close(s, "closed: the server is shutting down")));
  }
}
