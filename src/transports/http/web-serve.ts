/**
 * Serves one Node request through the SDK's web-standard handler
 * (createMcpHandler's `fetch`) with a body this server already read and
 * parsed (body.ts). The SDK's toNodeHandler does the same, but hands the
 * parsed body back as JSON text in the web Request: one more copy of a body
 * that may be 100 MiB. Here the Request carries the headers, the client's
 * abort signal and an empty body; the handler reads the parsed value, which
 * is what it does whenever one is given. The answer is written as
 * toNodeHandler writes it: headers, then the stream with the socket's
 * backpressure, stopped when the client goes away.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { toWebRequest } from "@modelcontextprotocol/node";
import type { AuthInfo, JSONRPCMessage, McpHttpHandler } from "@modelcontextprotocol/server";

/** Serves `req` (its body already read as `body`) with `handler`; `onerror` hears a failure before the 500. */
export async function serveParsed(
  handler: McpHttpHandler,
  req: IncomingMessage,
  res: ServerResponse,
  body: JSONRPCMessage | undefined,
  auth: AuthInfo | undefined,
  onerror: (error: Error) => void,
): Promise<void> {
  const abort = new AbortController();
  let finished = false;
  res.on("close", () => {
    if (!finished) abort.abort();
  });
  if (res.destroyed) abort.abort();
  let response: Response;
  try {
    // `null` stands for the body: the Request gets four bytes, the handler the parsed value.
    const request = await toWebRequest(req, body === undefined ? undefined : null, { signal: abort.signal });
    response = await handler.fetch(request, { ...(auth !== undefined && { authInfo: auth }), ...(body !== undefined && { parsedBody: body }) });
  } catch (error) {
    onerror(error instanceof Error ? error : new Error(String(error)));
    response = Response.json({ jsonrpc: "2.0", id: null, error: { code: -32603, message: "Internal server error" } }, { status: 500 });
  }
  res.writeHead(response.status, Object.fromEntries(response.headers));
  if (response.body === null) {
    finished = true;
    res.end();
    return;
  }
  const closed = new Promise<void>((resolve) => abort.signal.addEventListener("abort", () => resolve(), { once: true }));
  try {
    for await (const chunk of response.body) {
      if (abort.signal.aborted) break;
      if (!res.write(chunk)) await Promise.race([new Promise((resolve) => res.once("drain", resolve)), closed]);
    }
  } catch {
    // The stream failed or was cancelled: what was written stands, and the response ends below.
  }
  finished = true;
  res.end();
}
