/** The one form of a refusal the HTTP routes answer before any message is read. */
import type { ServerResponse } from "node:http";

/** Writes a JSON-RPC error body with id null, as the SDK's transport does for refusals before any message is read. */
export function refuse(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  if (res.headersSent) return void res.end();
  res.writeHead(status, { "Content-Type": "application/json", ...headers });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }));
}
