/**
 * Guards between the wire and the SDK's Protocol: every line becomes either a
 * message the Protocol can handle without failing, or a refusal answered by
 * id. The SDK's own transport drops a line that fails its message schema
 * without a word, and its Protocol answers a request whose params fail the
 * method's schema with -32603 and a dump of the validation issues; here both
 * get -32602 (or -32700/-32600) naming what was wrong.
 */
import { ClientRequestSchema, ErrorCode, JSONRPCMessageSchema, RequestSchema, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { ZodError } from "zod";
import type { ScannedHead } from "./line-scan.js";

/** A line turned into what the transport does with it. */
export type Verdict =
  | { readonly kind: "message"; readonly message: JSONRPCMessage }
  | { readonly kind: "reply"; readonly reply: JSONRPCMessage }
  | { readonly kind: "drop"; readonly reason: string };

type Schema = { safeParse(value: unknown): { success: true } | { success: false; error: ZodError } };

// The SDK's schema for each client request method, so params are checked before the Protocol sees them.
const REQUEST_SCHEMAS = new Map<string, Schema>(
  (ClientRequestSchema.options as unknown as { shape: { method: { value: string } } }[]).map((schema) => [
    schema.shape.method.value,
    schema as unknown as Schema,
  ]),
);

/**
 * The answer that refuses a request: for tools/call with `asToolError`, a tool
 * result with isError (what the model sees); otherwise a JSON-RPC error. Without
 * an id there is nobody to answer: a drop.
 */
export function refusal(head: ScannedHead, code: number, message: string, asToolError = false): Verdict {
  if (head.id === undefined) return { kind: "drop", reason: message };
  if (asToolError && head.method === "tools/call") {
    return { kind: "reply", reply: { jsonrpc: "2.0", id: head.id, result: { content: [{ type: "text", text: message }], isError: true } } };
  }
  return { kind: "reply", reply: { jsonrpc: "2.0", id: head.id, error: { code, message } } };
}

/** Classifies one complete line (its nesting already checked by the scanner). */
export function classifyLine(text: string, head: ScannedHead): Verdict {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const reason = `Parse error: the line is not valid JSON (${error instanceof Error ? error.message : String(error)})`;
    return head.id === undefined
      ? { kind: "reply", reply: { jsonrpc: "2.0", error: { code: ErrorCode.ParseError, message: reason } } as JSONRPCMessage }
      : refusal(head, ErrorCode.ParseError, reason);
  }
  const parsed = JSONRPCMessageSchema.safeParse(value);
  const object = isObject(value) ? value : undefined;
  const method = typeof object?.method === "string" ? object.method : undefined;
  const id = object && validId(object.id) ? (object.id as string | number) : undefined;
  if (parsed.success) {
    if (method === undefined || id === undefined) return { kind: "message", message: parsed.data };
    const schema = REQUEST_SCHEMAS.get(method);
    const checked = schema?.safeParse(value);
    if (!checked || checked.success) return { kind: "message", message: parsed.data };
    return refusal({ id, method }, ErrorCode.InvalidParams, `Invalid params for ${method}: ${describe(checked.error, value)}`);
  }
  if (object === undefined) return invalidRequest("a JSON-RPC message must be an object");
  if (!("id" in object)) return { kind: "drop", reason: `Malformed notification ${method ?? "(no method)"}: ${describe(parsed.error, value)}` };
  if (id === undefined) return invalidRequest(`id must be a string or an integer (got ${kindOf(object.id)})`);
  if (method === undefined) {
    if ("result" in object || "error" in object) return { kind: "drop", reason: `Malformed response to request ${String(id)}` };
    return refusal({ id }, ErrorCode.InvalidRequest, "Invalid Request: method must be a string");
  }
  if (object.jsonrpc !== "2.0") return refusal({ id, method }, ErrorCode.InvalidRequest, 'Invalid Request: jsonrpc must be "2.0"');
  const base = (RequestSchema as unknown as Schema).safeParse(object);
  if (base.success) return refusal({ id, method }, ErrorCode.InvalidRequest, `Invalid Request: ${describe(parsed.error, value)}`);
  return refusal({ id, method }, ErrorCode.InvalidParams, `Invalid params for ${method}: ${describe(base.error, value)}`);
}

function invalidRequest(reason: string): Verdict {
  return {
    kind: "reply",
    reply: { jsonrpc: "2.0", error: { code: ErrorCode.InvalidRequest, message: `Invalid Request: ${reason}` } } as JSONRPCMessage,
  };
}

function validId(id: unknown): boolean {
  return typeof id === "string" || (typeof id === "number" && Number.isSafeInteger(id));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The first few issues as `path: message (got <kind>)`, with no value echoed. */
function describe(error: ZodError, root: unknown): string {
  return error.issues
    .slice(0, 3)
    .map((issue) => {
      let seen: unknown = root;
      for (const key of issue.path) seen = isObject(seen) || Array.isArray(seen) ? (seen as Record<PropertyKey, unknown>)[key] : undefined;
      const where = issue.path.length > 0 ? issue.path.join(".") : "message";
      return `${where}: ${issue.message} (got ${kindOf(seen)})`;
    })
    .join("; ");
}

function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "number" && !Number.isInteger(value)) return `the fraction ${value}`;
  if (typeof value === "object") return "an object";
  if (typeof value === "string") return value.length <= 40 ? JSON.stringify(value) : "a string";
  return typeof value === "undefined" ? "nothing" : `${typeof value} ${String(value)}`;
}
