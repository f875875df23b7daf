/**
 * HttpMemory: what the HTTP server holds across all its requests and
 * sessions, in both eras (SPEC §13 and §17, issue 28 rows 3 and 4), and the
 * one rule that screens every outgoing message.
 * - Request bodies: each body's bytes are reserved before they are read (its
 *   Content-Length, or chunk by chunk without one) and released when its
 *   response ends; a body that does not fit is refused with 503 and
 *   Retry-After, so fifty uploads at the 100 MiB bound cannot exhaust memory.
 * - Answers held for clients that do not read: the sum over every lane. Past
 *   the bound, a client that has not read what it was sent gets no further
 *   answer (an error in its place) and no further progress; a client that
 *   took everything is still answered, so one stalled client cannot starve
 *   the others.
 */
import { type JSONRPCMessage, ProtocolErrorCode as ErrorCode, type RequestId } from "@modelcontextprotocol/server";
import { formatCount } from "../../kernel/bounded.js";
import { HTTP_BODY_BYTES_IN_FLIGHT, HTTP_HELD_OUTPUT_BYTES } from "../wire-limits.js";
import type { Exchange } from "./exchange.js";

/** A response holding more than this (bytes not taken by the client) gets no further progress notifications. */
export const PROGRESS_HOLD_BYTES = 256 * 1024;

/** The two bounds; each defaults to the constant of the same meaning in wire-limits.ts. */
export interface MemoryBounds {
  readonly bodyBytes?: number;
  readonly heldBytes?: number;
}

/** What HttpMemory needs of a lane: its unsent bytes, and a way to tell it to look at its gate again. */
export interface Held {
  unsent(): number;
  recheck(): void;
}

/** The server-wide account of request bodies in flight and answers not yet taken. */
export class HttpMemory {
  readonly bodyBound: number;
  readonly heldBound: number;
  private bodies = 0;
  private readonly lanes = new Set<Held>();
  private wasOver = false;

  constructor(bounds: MemoryBounds = {}) {
    this.bodyBound = bounds.bodyBytes ?? HTTP_BODY_BYTES_IN_FLIGHT;
    this.heldBound = bounds.heldBytes ?? HTTP_HELD_OUTPUT_BYTES;
  }

  /** Bytes of request bodies reserved now. */
  get bodyBytes(): number {
    return this.bodies;
  }

  /** Reserves `bytes` of body; false (nothing reserved) when they do not fit. */
  reserve(bytes: number): boolean {
    if (this.bodies + bytes > this.bodyBound) return false;
    this.bodies += bytes;
    return true;
  }

  /** Gives back `bytes` reserved earlier. */
  release(bytes: number): void {
    this.bodies = Math.max(0, this.bodies - bytes);
  }

  /** Counts `lane` in from now on; the returned function counts it out. */
  track(lane: Held): () => void {
    this.lanes.add(lane);
    return () => {
      this.lanes.delete(lane);
      this.drained();
    };
  }

  /** Bytes of answers handed to every open response that their clients have not taken. */
  held(): number {
    let total = 0;
    for (const lane of this.lanes) total += lane.unsent();
    return total;
  }

  /** True while the answers held reach the bound. */
  get over(): boolean {
    const over = this.held() >= this.heldBound;
    if (over) this.wasOver = true;
    return over;
  }

  /** Output drained somewhere: once under the bound again, every lane looks at its gate again. */
  drained(): void {
    if (!this.wasOver || this.over) return;
    this.wasOver = false;
    for (const lane of this.lanes) lane.recheck();
  }

  /** The refusal of a body over `bodyBound` (503: it may fit once other bodies are answered). */
  busyMessage(bytes: number | undefined): string {
    const size = bytes === undefined ? "this request body" : `a request body of ${formatCount(bytes)} bytes`;
    return (
      `Server busy: ${size} does not fit beside the ${formatCount(this.bodies)} bytes of request bodies being served ` +
      `(the limit is ${formatCount(this.bodyBound)} bytes over all requests); retry after the Retry-After time.`
    );
  }

  /** The refusal of a new request or session while the answers held reach the bound. */
  heldMessage(): string {
    return (
      `Server busy: clients that do not read their responses hold ${formatCount(this.held())} bytes of answers ` +
      `(the limit is ${formatCount(this.heldBound)} bytes over all sessions); retry after the Retry-After time.`
    );
  }
}

const isProgress = (m: JSONRPCMessage): boolean => "method" in m && m.method === "notifications/progress";
const isAnswer = (m: JSONRPCMessage): m is JSONRPCMessage & { id: RequestId } => !("method" in m) && "id" in m;

/**
 * The one rule for a message about to go to `exchange` (both eras): what to send, or undefined to leave it out.
 * `lagging` says whether this client has not taken what it was sent (its session's lane, or for a request
 * that stands alone its own response). Progress is left out once the response holds PROGRESS_HOLD_BYTES; past
 * the server's bound, a lagging client's answer is replaced by an error saying why.
 */
export function screen(message: JSONRPCMessage, exchange: Exchange | undefined, memory: HttpMemory, lagging: boolean): JSONRPCMessage | undefined {
  if (isProgress(message) && exchange && (exchange.held > PROGRESS_HOLD_BYTES || (lagging && memory.over))) {
    exchange.droppedProgress++;
    return undefined;
  }
  if (!isAnswer(message) || !lagging || !memory.over) return message;
  if (exchange) exchange.withheldAnswers++;
  return {
    jsonrpc: "2.0",
    id: message.id,
    error: {
      code: ErrorCode.InternalError,
      message:
        `Answer not sent: this client has not read the answers it was already sent, and clients that do not read hold ` +
        `${formatCount(memory.held())} bytes of answers (the limit is ${formatCount(memory.heldBound)} bytes over all sessions). ` +
        "The call itself ran (a change it made stands); only its result was dropped. Read the open responses before calling again.",
    },
  };
}
