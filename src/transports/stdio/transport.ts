/**
 * BoundedStdioTransport: the stdio transport with bounds the SDK's own lacks
 * (SPEC §13). The SDK's StdioServerTransport buffers input in a ReadBuffer
 * that throws past 10 MiB, and its data handler then closes the transport —
 * the session ends with exit 0 and no word; it drops lines that fail its
 * message schema without an answer; and its send() queues output without
 * limit while the client does not read. Here:
 * - lines up to MAX_REQUEST_LINE_BYTES are read; a longer or deeper line is
 *   discarded as it streams in and answered by the id the scanner found;
 * - every line with an id gets an answer (see guards.ts);
 * - requests start only while fewer than MAX_IN_FLIGHT are unanswered and
 *   unsent output is under OUTPUT_HIGH_WATER; received requests wait in a
 *   queue, and stdin is paused while that queue holds over QUEUED_REQUEST_BYTES.
 */
import process from "node:process";
import type { Readable, Writable } from "node:stream";
import type { JSONRPCMessage, Transport } from "@modelcontextprotocol/server";
import { isLightRequest, RequestFlow } from "../flow.js";
import { classifyLine, reusedId, tooDeep, tooLarge, type Verdict } from "../guards.js";
import { LineScanner } from "../line-scan.js";
import { MAX_MESSAGE_DEPTH, MAX_REQUEST_LINE_BYTES, UNSENT_MESSAGE_BYTES } from "../wire-limits.js";

/** Bounds of one transport; each defaults to the constant of the same meaning in wire-limits.ts. */
export interface BoundedStdioOptions {
  readonly maxLineBytes?: number;
  readonly maxDepth?: number;
  readonly outputHighWater?: number;
  readonly maxInFlight?: number;
  readonly queuedRequestBytes?: number;
  /** Where dropped lines (no id to answer) are reported. @default console.error */
  readonly log?: (line: string) => void;
}

const NEWLINE = 0x0a;

/** A Transport over stdin/stdout that never ends the session on input and never buffers without bound. */
export class BoundedStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private readonly maxLineBytes: number;
  private readonly maxDepth: number;
  private readonly log: (line: string) => void;
  private readonly flow: RequestFlow<JSONRPCMessage>;
  private readonly scanner = new LineScanner();
  private pieces: Buffer[] = [];
  private lineBytes = 0;
  private discarding: "size" | "depth" | undefined;
  private drainWaiters: (() => void)[] = [];
  private closed = false;

  constructor(
    private readonly stdin: Readable = process.stdin,
    private readonly stdout: Writable = process.stdout,
    options: BoundedStdioOptions = {},
  ) {
    this.maxLineBytes = options.maxLineBytes ?? MAX_REQUEST_LINE_BYTES;
    this.maxDepth = options.maxDepth ?? MAX_MESSAGE_DEPTH;
    this.log = options.log ?? ((line) => console.error(line));
    this.flow = new RequestFlow(
      (message) => this.onmessage?.(message),
      () => this.stdout.writableLength + this.drainWaiters.length * UNSENT_MESSAGE_BYTES,
      options,
      (full) => (full ? this.stdin.pause() : this.stdin.resume()),
    );
  }

  /** Starts reading stdin. */
  async start(): Promise<void> {
    this.stdin.on("data", this.onData);
    this.stdin.on("error", this.onStreamError);
    this.stdout.on("drain", this.onDrain);
  }

  /** Writes one message of the protocol's (an answer frees its request's place in the flow); resolves once the output buffer has room again. */
  send(message: JSONRPCMessage): Promise<void> {
    if ("id" in message && message.id !== undefined && message.id !== null && !("method" in message)) this.flow.answered(message.id);
    return this.write(message);
  }

  /** Writes one message, as is: the guards' refusals of requests never admitted, which free no place in the flow. */
  private write(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.stdout.write(`${JSON.stringify(message)}\n`)) resolve();
      else this.drainWaiters.push(resolve);
    });
  }

  /** Stops reading and drops requests not yet started. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stdin.off("data", this.onData);
    this.stdin.off("error", this.onStreamError);
    this.stdout.off("drain", this.onDrain);
    if (this.stdin.listenerCount("data") === 0) this.stdin.pause();
    this.pieces = [];
    this.flow.stop();
    for (const resolve of this.drainWaiters.splice(0)) resolve();
    this.onclose?.();
  }

  private readonly onStreamError = (error: Error): void => this.onerror?.(error);

  private readonly onDrain = (): void => {
    for (const resolve of this.drainWaiters.splice(0)) resolve();
    this.flow.pump();
  };

  private readonly onData = (chunk: Buffer): void => {
    let start = 0;
    while (start < chunk.length && !this.closed) {
      const newline = chunk.indexOf(NEWLINE, start);
      const end = newline === -1 ? chunk.length : newline;
      if (end > start) this.take(chunk.subarray(start, end));
      if (newline === -1) break;
      this.endLine();
      start = newline + 1;
    }
    this.flow.pump();
  };

  /** Adds bytes to the current line, switching to discarding when it gets too long or too deep. */
  private take(bytes: Buffer): void {
    this.scanner.feed(bytes);
    this.lineBytes += bytes.length;
    if (this.discarding) return;
    if (this.lineBytes > this.maxLineBytes) this.discarding = "size";
    else if (this.scanner.maxDepth > this.maxDepth) this.discarding = "depth";
    if (this.discarding) this.pieces = [];
    else this.pieces.push(bytes);
  }

  private endLine(): void {
    const head = this.scanner.head();
    let verdict: Verdict | undefined;
    if (this.discarding === "size") verdict = tooLarge(head, this.lineBytes, this.maxLineBytes);
    else if (this.discarding === "depth") verdict = tooDeep(head, this.maxDepth);
    else if (this.lineBytes > 0) {
      const text = Buffer.concat(this.pieces).toString("utf8").replace(/\r$/, "");
      if (text.trim() !== "") verdict = classifyLine(text, head);
    }
    const bytes = this.lineBytes;
    this.pieces = [];
    this.lineBytes = 0;
    this.discarding = undefined;
    this.scanner.reset();
    if (verdict) this.act(verdict, bytes);
  }

  private act(verdict: Verdict, bytes: number): void {
    if (verdict.kind === "drop") {
      this.log(`Dropped a message that cannot be answered (it has no id): ${verdict.reason}`);
      return;
    }
    if (verdict.kind === "reply") {
      this.write(verdict.reply).catch(() => undefined);
      return;
    }
    if (verdict.kind === "replies") {
      for (const reply of verdict.replies) this.write(reply).catch(() => undefined);
      if (verdict.unanswered > 0) this.log(`Refused a JSON-RPC batch; ${verdict.unanswered} of its messages had no id to answer`);
      return;
    }
    const message = verdict.message;
    if ("method" in message && "id" in message) {
      if (!this.flow.admit(message.id, message, bytes, isLightRequest(message))) this.write(reusedId(message.id)).catch(() => undefined);
      return;
    }
    if ("method" in message && message.method === "notifications/cancelled") {
      const id = message.params?.requestId;
      if (typeof id === "string" || typeof id === "number") this.flow.forget(id);
    }
    this.onmessage?.(message);
  }
}
