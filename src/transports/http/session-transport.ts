/**
 * SessionTransport: the SDK's NodeStreamableHTTPServerTransport with the
 * promises of SPEC §13 kept per session (§17). Everything on the wire is the
 * SDK's; around it:
 * - a POST body is read as stdio reads a line (body.ts: the server's budget
 *   of bodies in flight, the nesting bound, the same guards and errors);
 * - requests start through a RequestFlow (at most MAX_IN_FLIGHT at once,
 *   none while the client has not taken OUTPUT_HIGH_WATER of output);
 * - every outgoing message passes memory.ts's screen: progress for a
 *   response the client is not reading is left out (its result is still
 *   sent), and past the server's bound an answer to a client that is not
 *   reading is replaced by an error, so paused streams stay bounded;
 * - a client that goes away mid-call cancels the calls of that request, as
 *   notifications/cancelled would, so their walks and reads stop;
 * - the stream of a request cancelled by the client is closed, so the
 *   client's connection is not held open forever.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { NodeStreamableHTTPServerTransport } from "@modelcontextprotocol/node";
import {
  type AuthInfo,
  ProtocolErrorCode as ErrorCode,
  type JSONRPCMessage,
  type MessageExtraInfo,
  type RequestId,
  type Transport,
  type TransportSendOptions,
} from "@modelcontextprotocol/server";
import { isLightRequest, RequestFlow, requestKey } from "../flow.js";
import { MAX_REQUEST_LINE_BYTES } from "../wire-limits.js";
import { reusedId } from "../guards.js";
import { answer, readMessage } from "./body.js";
import { currentExchange, Exchange } from "./exchange.js";
import type { Lane } from "./lane.js";
import { screen } from "./memory.js";

interface Received {
  readonly message: JSONRPCMessage;
  readonly extra: MessageExtraInfo | undefined;
}

/** What tests and the drain on SIGTERM read of a session's traffic. */
export interface TrafficStats {
  readonly inFlight: number;
  readonly queued: number;
  /** Bytes of output the client has not taken, over all its open responses. */
  readonly unsent: number;
  /** The most any one open response holds. */
  readonly largestHeld: number;
  /** HTTP responses still open (the GET stream included). */
  readonly responses: number;
  readonly droppedProgress: number;
  /** Answers replaced by an error because the client was not reading past the server's bound. */
  readonly withheldAnswers: number;
}

const isResponse = (m: JSONRPCMessage): m is JSONRPCMessage & { id: RequestId } => !("method" in m) && "id" in m;

/** One session's (or one stateless request's) transport; `sessionIdGenerator` absent means stateless. */
export class SessionTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;

  private readonly inner: NodeStreamableHTTPServerTransport;
  private readonly flow: RequestFlow<Received>;
  private readonly exchangeOf = new Map<string, Exchange>();
  private standalone: Exchange | undefined;
  private droppedProgress = 0;
  private withheldAnswers = 0;
  private readonly detach: (() => void)[] = [];

  constructor(
    private readonly lane: Lane,
    options: { sessionIdGenerator?: () => string; onsessioninitialized?: (id: string) => void; onsessionclosed?: (id: string) => void },
  ) {
    this.inner = new NodeStreamableHTTPServerTransport({ ...options, maxRequestBodySize: MAX_REQUEST_LINE_BYTES });
    this.flow = new RequestFlow<Received>(
      ({ message, extra }) => this.onmessage?.(message, extra),
      () => lane.gateBytes(),
    );
    this.detach.push(
      lane.onDrain(this.flow.pump),
      lane.closeWhile(() => this.flow.full),
    );
  }

  /** The session id, once initialize was answered (stateful mode). */
  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  /** Requests and output of this transport now. */
  stats(): TrafficStats {
    const { lane, flow } = this;
    return {
      inFlight: flow.inFlight,
      // A body waiting at its session's gate is a request received and not started, as one in the flow's queue is.
      queued: flow.queued + (lane.shared ? 0 : lane.waiting),
      unsent: lane.unsent(),
      largestHeld: lane.largestHeld(),
      responses: lane.exchanges.size,
      droppedProgress: this.droppedProgress,
      withheldAnswers: this.withheldAnswers,
    };
  }

  /** Starts the SDK transport with this one between it and the protocol. */
  async start(): Promise<void> {
    this.inner.onmessage = (message, extra) => this.receive(message, extra);
    this.inner.onerror = (error) => this.onerror?.(error);
    this.inner.onclose = () => {
      this.flow.stop();
      for (const undo of this.detach.splice(0)) undo();
      this.onclose?.();
    };
    await this.inner.start();
  }

  /** Serves one HTTP request of this session, `auth` passed on to the handlers (without the token). */
  async handle(req: IncomingMessage & { auth?: AuthInfo }, res: ServerResponse, auth: AuthInfo | undefined): Promise<void> {
    const exchange = new Exchange(
      res,
      () => this.lane.drained(),
      (early) => this.ended(exchange, early),
    );
    this.lane.exchanges.add(exchange);
    if (req.method === "GET") this.standalone = exchange;
    let body: JSONRPCMessage | undefined;
    if (req.method === "POST") {
      await this.lane.room();
      body = await readMessage(req, res, this.lane.memory);
      if (body === undefined) return;
      // Refused here, before the SDK's transport files the id under this response: the first request keeps its own.
      if ("method" in body && "id" in body && this.flow.inUse(body.id)) {
        answer(res, { kind: "reply", reply: reusedId(body.id) });
        return;
      }
    }
    if (auth) req.auth = auth;
    await currentExchange.run(exchange, () => this.inner.handleRequest(req, res, body));
  }

  /** Sends one message through the SDK transport, recording it against the response it goes to. */
  async send(original: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const id = isResponse(original) ? original.id : options?.relatedRequestId;
    const exchange = id === undefined ? this.standalone : this.exchangeOf.get(requestKey(id));
    const message = screen(original, exchange, this.lane.memory, this.lane.lagging(exchange));
    if (message === undefined) {
      this.droppedProgress++;
      return;
    }
    if (message !== original) this.withheldAnswers++;
    exchange?.enqueue(message);
    if (isResponse(message)) {
      this.flow.answered(message.id);
      this.exchangeOf.delete(requestKey(message.id));
    }
    await this.inner.send(message, options);
  }

  /** Closes the SDK transport: its streams end and the protocol aborts what still runs. */
  async close(): Promise<void> {
    await this.inner.close();
  }

  /** Answers every call still running with an error saying `why`, so no client waits for an answer that cannot come. */
  async abandon(why: string): Promise<void> {
    const ids = this.flow.runningIds();
    await Promise.all(
      ids.map((id) => this.send({ jsonrpc: "2.0", id, error: { code: ErrorCode.InternalError, message: why } }).catch(() => undefined)),
    );
  }

  private receive(message: JSONRPCMessage, extra: MessageExtraInfo | undefined): void {
    if ("method" in message && "id" in message) {
      // Two bodies with one id read at once pass handle()'s look; the second is refused here, as it stands.
      if (this.flow.inUse(message.id)) {
        this.inner.send(reusedId(message.id)).catch(() => undefined);
        return;
      }
      const exchange = currentExchange.getStore();
      if (exchange) {
        exchange.requests.add(message.id);
        this.exchangeOf.set(requestKey(message.id), exchange);
      }
      const bytes = Number(exchange?.res.req.headers["content-length"]) || JSON.stringify(message).length;
      this.flow.admit(message.id, { message, extra }, bytes, isLightRequest(message));
      return;
    }
    if ("method" in message && message.method === "notifications/cancelled") {
      const id = message.params?.requestId;
      if ((typeof id === "string" || typeof id === "number") && this.flow.forget(id)) this.closeStreamOf(id);
    }
    this.onmessage?.(message, extra);
  }

  /** After a client's cancel, ends the request's stream once none of its requests awaits an answer. */
  private closeStreamOf(id: RequestId): void {
    const exchange = this.exchangeOf.get(requestKey(id));
    this.exchangeOf.delete(requestKey(id));
    if (!exchange || exchange.closed) return;
    exchange.requests.delete(id);
    const pending = [...exchange.requests].some((other) => this.exchangeOf.get(requestKey(other)) === exchange);
    if (!pending) this.inner.closeSSEStream(id);
  }

  private ended(exchange: Exchange, early: boolean): void {
    this.lane.exchanges.delete(exchange);
    if (this.standalone === exchange) this.standalone = undefined;
    for (const id of exchange.requests) {
      const key = requestKey(id);
      if (this.exchangeOf.get(key) !== exchange) continue;
      this.exchangeOf.delete(key);
      const wasRunning = this.flow.isRunning(id);
      this.flow.forget(id);
      // The client went away before the answer: stop the work, as its cancel would have.
      if (early && wasRunning) {
        this.onmessage?.({
          jsonrpc: "2.0",
          method: "notifications/cancelled",
          params: { requestId: id, reason: "The client closed the connection" },
        });
      }
    }
    this.lane.drained();
  }
}
