/**
 * One POST body read as stdio reads one line (SPEC §13, §17; issue 28 rows 3
 * and 7), for both eras: its bytes reserved in the server's budget of bodies
 * in flight (HttpMemory) before they are read, its nesting measured as it
 * streams in (LineScanner: a body too deep is not kept), then judged by the
 * same guards as a stdio line (guards.ts). A message goes on to the SDK as
 * its parsed body; whatever the guards refuse is answered here with the
 * error stdio gives, as JSON (200 when it answers a request by id, 400
 * otherwise; a refused batch is answered with one error per request in it,
 * as an array).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { type JSONRPCMessage, ProtocolErrorCode as ErrorCode } from "@modelcontextprotocol/server";
import { formatCount } from "../../kernel/bounded.js";
import { BATCH_REFUSAL, classifyLine, tooDeep, type Verdict } from "../guards.js";
import { LineScanner } from "../line-scan.js";
import { MAX_MESSAGE_DEPTH, MAX_REQUEST_LINE_BYTES } from "../wire-limits.js";
import type { HttpMemory } from "./memory.js";

/** Seconds a client refused for lack of room is asked to wait. */
const RETRY_AFTER_S = "2";

/** The bounds of one body; each defaults to the constant of the same meaning in wire-limits.ts. */
export interface BodyBounds {
  readonly maxBytes?: number;
  readonly maxDepth?: number;
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, { "Content-Type": "application/json", "Cache-Control": "no-store", ...headers });
  res.end(JSON.stringify(body));
}

/**
 * An error with no id to answer. The rest of the body is read and thrown away, not kept, and the connection
 * stays open: a socket closed with bytes still unread is reset, and the client, still sending, would lose the
 * answer.
 */
function refuseBody(req: IncomingMessage, res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  send(res, status, { jsonrpc: "2.0", id: null, error: { code: ErrorCode.InvalidRequest, message } }, headers);
  req.resume();
}

/** Answers what the guards refused (anything but a message). */
export function answer(res: ServerResponse, verdict: Exclude<Verdict, { kind: "message" }>): void {
  if (verdict.kind === "reply") {
    const answered = "id" in verdict.reply && verdict.reply.id !== null;
    send(res, answered ? 200 : 400, verdict.reply);
  } else if (verdict.kind === "replies") {
    const refused = { jsonrpc: "2.0", id: null, error: { code: ErrorCode.InvalidRequest, message: BATCH_REFUSAL } };
    send(res, 400, verdict.replies.length > 0 ? verdict.replies : refused);
  } else {
    send(res, 400, { jsonrpc: "2.0", id: null, error: { code: ErrorCode.InvalidRequest, message: `Invalid Request: ${verdict.reason}` } });
  }
}

/**
 * Reads `req`'s body and returns the message in it, or undefined when the response was already given (a
 * refusal, a body that does not fit, or a client gone). The reserved bytes are given back when `res` closes.
 */
export async function readMessage(
  req: IncomingMessage,
  res: ServerResponse,
  memory: HttpMemory,
  bounds: BodyBounds = {},
): Promise<JSONRPCMessage | undefined> {
  const maxBytes = bounds.maxBytes ?? MAX_REQUEST_LINE_BYTES;
  const maxDepth = bounds.maxDepth ?? MAX_MESSAGE_DEPTH;
  // Node's parser refuses a malformed Content-Length; anything but a whole number is treated as absent all the same.
  const length = Number(req.headers["content-length"] ?? Number.NaN);
  const declared = Number.isSafeInteger(length) && length >= 0 ? length : undefined;
  const tooLargeText = (bytes: number, exact: boolean) =>
    `Payload Too Large: the request body is ${exact ? "" : "over "}${formatCount(bytes)} bytes; the limit is ${formatCount(maxBytes)} bytes ` +
    "per message. Its bytes were not read; send less in one call.";
  if (declared !== undefined && declared > maxBytes) {
    refuseBody(req, res, 413, tooLargeText(declared, true));
    return undefined;
  }
  let reserved = 0;
  res.once("close", () => memory.release(reserved));
  if (declared !== undefined) {
    if (!memory.reserve(declared)) {
      refuseBody(req, res, 503, memory.busyMessage(declared), { "Retry-After": RETRY_AFTER_S });
      return undefined;
    }
    reserved = declared;
  }

  const scanner = new LineScanner();
  const decoder = new TextDecoder();
  const parts: string[] = [];
  let received = 0;
  let deep = false;
  const outcome = await collect(req, (chunk) => {
    received += chunk.length;
    if (received > maxBytes) {
      refuseBody(req, res, 413, tooLargeText(maxBytes, false));
      return false;
    }
    if (received > reserved) {
      if (!memory.reserve(received - reserved)) {
        refuseBody(req, res, 503, memory.busyMessage(undefined), { "Retry-After": RETRY_AFTER_S });
        return false;
      }
      reserved = received;
    }
    scanner.feed(chunk);
    if (!deep && scanner.maxDepth > maxDepth) {
      // As stdio does with a line too deep: nothing more of it is kept; it is answered by the id found.
      deep = true;
      parts.length = 0;
    }
    if (!deep) parts.push(decoder.decode(chunk, { stream: true }));
    return true;
  });
  if (outcome !== "end") return undefined;
  let verdict: Verdict;
  if (deep) verdict = tooDeep(scanner.head(), maxDepth);
  else {
    const text = parts.join("") + decoder.decode();
    // The pieces go before the parse: at most the text and its parsed value are held at once.
    parts.length = 0;
    verdict = classifyLine(text, scanner.head());
  }
  if (verdict.kind === "message") return verdict.message;
  answer(res, verdict);
  return undefined;
}

/** Feeds the body's chunks to `take` until it ends, `take` returns false (then nothing more is kept), or the client goes. */
function collect(req: IncomingMessage, take: (chunk: Buffer) => boolean): Promise<"end" | "stopped" | "gone"> {
  return new Promise((resolve) => {
    let settled = false;
    const finish = (how: "end" | "stopped" | "gone") => {
      if (settled) return;
      settled = true;
      req.off("data", data);
      req.off("end", end);
      req.off("close", close);
      resolve(how);
    };
    const data = (chunk: Buffer) => {
      // A refusal keeps the stream flowing (refuseBody): with no listener left, the rest is thrown away.
      if (!take(chunk)) finish("stopped");
    };
    const end = () => finish("end");
    const close = () => finish(req.complete ? "end" : "gone");
    req.on("data", data);
    req.once("end", end);
    req.once("close", close);
  });
}
