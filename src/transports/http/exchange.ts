/**
 * One HTTP request and its response as the transport serves it: which
 * JSON-RPC requests arrived in it, and how many bytes the server handed it
 * that the client has not taken yet. The SDK's transport enqueues SSE events
 * on a web stream without limit and @hono/node-server writes them to the
 * socket as it drains; the difference, plus what Node itself buffers, is
 * what a client that stops reading makes the server hold.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { ServerResponse } from "node:http";
import type { JSONRPCMessage, RequestId } from "@modelcontextprotocol/server";

/** The exchange whose request the transport is handling now (the transport hands us messages, not requests). */
export const currentExchange = new AsyncLocalStorage<Exchange>();

/** The bytes the SDK's transport enqueues for one message: its SSE frame (webStandardStreamableHttp.js writeSSEEvent). */
function sseBytes(message: JSONRPCMessage): number {
  return Buffer.byteLength(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
}

/** One request/response pair: its JSON-RPC request ids and its output not yet taken by the client. */
export class Exchange {
  /** JSON-RPC requests that arrived in this request. */
  readonly requests = new Set<RequestId>();
  private enqueued = 0;
  private written = 0;
  /** Progress notifications left out because the client was not reading. */
  droppedProgress = 0;
  /** Answers replaced by an error because the client was not reading and the server held too much (memory.ts). */
  withheldAnswers = 0;
  /** True once the response ended or the connection closed. */
  closed = false;

  /**
   * @param onWritten called after each write to the socket (output drained a little)
   * @param onClose called once when the response is over; `early` when the client went away before it finished
   */
  constructor(
    readonly res: ServerResponse,
    onWritten: () => void,
    onClose: (early: boolean) => void,
  ) {
    // Counting what reaches res.write is the one place where the web stream's drain becomes visible.
    const write = res.write.bind(res) as (...args: unknown[]) => boolean;
    res.write = ((chunk: unknown, ...rest: unknown[]) => {
      this.written += typeof chunk === "string" ? Buffer.byteLength(chunk) : ((chunk as Uint8Array | undefined)?.byteLength ?? 0);
      const ok = write(chunk, ...rest);
      onWritten();
      return ok;
    }) as ServerResponse["write"];
    res.on("drain", onWritten);
    res.once("close", () => {
      this.closed = true;
      onClose(!res.writableFinished);
    });
  }

  /** Records a message about to be enqueued for this response. */
  enqueue(message: JSONRPCMessage): void {
    this.enqueued += sseBytes(message);
  }

  /** Bytes handed to this response that have not reached the kernel yet. */
  get held(): number {
    if (this.closed) return 0;
    return Math.max(0, this.enqueued - this.written) + this.res.writableLength;
  }
}
