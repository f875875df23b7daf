/**
 * Guards between the wire and the SDK's Protocol: every line becomes either a
 * message the Protocol can handle without failing, or a refusal answered by
 * id. The SDK's own transport drops a line that fails its message schema
 * without a word, and its Protocol answers a request whose params fail the
 * method's schema with -32603 and a dump of the validation issues; here both
 * get -32602 (or -32700/-32600) naming what was wrong.
 */
import {
  type JSONRPCMessage,
  ProtocolErrorCode as ErrorCode,
  type RequestId,
  type SpecTypeName,
  specTypeSchemas,
} from "@modelcontextprotocol/server";
import { formatCount } from "../kernel/bounded.js";
import { shortened } from "../kernel/escape.js";
import type { ScannedHead } from "./line-scan.js";
import { MAX_NAMES, NAMED_LEVELS } from "./wire-limits.js";

/** A line turned into what the transport does with it (a refused batch: several replies, and what could not be answered). */
export type Verdict =
  | { readonly kind: "message"; readonly message: JSONRPCMessage }
  | { readonly kind: "reply"; readonly reply: JSONRPCMessage }
  | { readonly kind: "replies"; readonly replies: readonly JSONRPCMessage[]; readonly unanswered: number }
  | { readonly kind: "drop"; readonly reason: string };

/** The refusal of a JSON-RPC batch, sent once per request in it. */
export const BATCH_REFUSAL =
  "Invalid Request: JSON-RPC batches are not supported (MCP 2025-06-18 removed batching); send each request as its own message";

/** One problem a schema found: where, and what. */
interface Issue {
  readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }>;
  readonly message: string;
}

/** A spec type's check, as the SDK's Standard Schema validators give it (synchronous). */
function check(type: SpecTypeName, value: unknown): { ok: true; value: unknown } | { ok: false; issues: readonly Issue[] } {
  const result = specTypeSchemas[type]["~standard"].validate(value) as { value?: unknown; issues?: readonly Issue[] };
  return result.issues ? { ok: false, issues: result.issues } : { ok: true, value: result.value };
}

// The spec's request type for each client request method, so params are checked before the Protocol sees them.
const REQUEST_TYPES = new Map<string, SpecTypeName>([
  ["initialize", "InitializeRequest"],
  ["ping", "PingRequest"],
  ["server/discover", "DiscoverRequest"],
  ["tools/list", "ListToolsRequest"],
  ["tools/call", "CallToolRequest"],
  ["resources/list", "ListResourcesRequest"],
  ["resources/templates/list", "ListResourceTemplatesRequest"],
  ["resources/read", "ReadResourceRequest"],
  ["resources/subscribe", "SubscribeRequest"],
  ["resources/unsubscribe", "UnsubscribeRequest"],
  ["prompts/list", "ListPromptsRequest"],
  ["prompts/get", "GetPromptRequest"],
  ["completion/complete", "CompleteRequest"],
  ["logging/setLevel", "SetLevelRequest"],
]);

/**
 * The answer that refuses a request: for tools/call with `asToolError`, a tool
 * result with isError (what the model sees); otherwise a JSON-RPC error. Without
 * an id there is nobody to answer: a drop.
 */
function refusal(head: ScannedHead, code: number, message: string, asToolError = false): Verdict {
  if (head.id === undefined) return { kind: "drop", reason: message };
  if (asToolError && head.method === "tools/call") {
    // A line refused unread has no era to tell: `resultType` is what a 2026-07-28 client requires of every
    // result, and a 2025 client's result schema lets an unknown key through.
    const result = { content: [{ type: "text", text: message }], isError: true, resultType: "complete" };
    return { kind: "reply", reply: { jsonrpc: "2.0", id: head.id, result } as JSONRPCMessage };
  }
  return { kind: "reply", reply: { jsonrpc: "2.0", id: head.id, error: { code, message } } };
}

/**
 * The refusal of a request whose id is that of one this server has not answered yet (MCP: a request id is never
 * reused within a session). It is not run: run beside the first, it would escape the bound on requests in flight.
 */
export function reusedId(id: RequestId): JSONRPCMessage {
  return {
    jsonrpc: "2.0",
    id,
    error: {
      code: ErrorCode.InvalidRequest,
      message:
        `Invalid Request: id ${shortened(JSON.stringify(id), 40)} is the id of a request this server has not answered yet; ` +
        "this request was not run. Give each request an id of its own.",
    },
  };
}

/** The refusal of a message over the size bound, answered by the id its scan found (a tool error for tools/call). */
export function tooLarge(head: ScannedHead, bytes: number, maxBytes: number): Verdict {
  return refusal(
    head,
    ErrorCode.InvalidRequest,
    `Request too large: the ${head.method ?? "request"} message is ${formatCount(bytes)} bytes; the limit is ` +
      `${formatCount(maxBytes)} bytes per message. Its bytes were discarded; send less in one call.`,
    true,
  );
}

/** The refusal of a message nested deeper than `maxDepth`, answered by the id its scan found (a tool error for tools/call). */
export function tooDeep(head: ScannedHead, maxDepth: number): Verdict {
  return refusal(
    head,
    ErrorCode.InvalidParams,
    `Request nested too deep: the ${head.method ?? "request"} message nests arrays and objects more than ` +
      `${maxDepth} levels deep (the limit is ${maxDepth}); it was not read.`,
    true,
  );
}

/** Classifies one complete line (its nesting already checked by the scanner). */
export function classifyLine(text: string, head: ScannedHead): Verdict {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const reason = `Parse error: the line is not valid JSON (${error instanceof Error ? error.message : String(error)})`;
    return head.id === undefined ? noIdReply(ErrorCode.ParseError, reason) : refusal(head, ErrorCode.ParseError, reason);
  }
  if (Array.isArray(value)) return refuseBatch(value);
  const crowded = isObject(value) ? crowdedObject(value, "", 0) : undefined;
  if (crowded !== undefined) return tooManyNames(head, value as Record<string, unknown>, crowded);
  const parsed = check("JSONRPCMessage", value);
  const object = isObject(value) ? value : undefined;
  const method = typeof object?.method === "string" ? object.method : undefined;
  const id = object && validId(object.id) ? (object.id as string | number) : undefined;
  if (parsed.ok) {
    // The message itself goes on, not the parsed copy: a schema may strip what the SDK reads (the 2026 `_meta` envelope).
    const message = value as JSONRPCMessage;
    if (method === undefined || id === undefined) return { kind: "message", message };
    const type = REQUEST_TYPES.get(method);
    const checked = type === undefined ? undefined : check(type, value);
    if (!checked || checked.ok) return { kind: "message", message };
    return refusal({ id, method }, ErrorCode.InvalidParams, `Invalid params for ${method}: ${describe(checked.issues, value)}`);
  }
  if (object === undefined) return invalidRequest("a JSON-RPC message must be an object");
  if (!("id" in object)) return { kind: "drop", reason: `Malformed notification ${method ?? "(no method)"}: ${describe(parsed.issues, value)}` };
  if (id === undefined) return invalidRequest(`id must be a string or an integer (got ${kindOf(object.id)})`);
  if (method === undefined) {
    if ("result" in object || "error" in object) return { kind: "drop", reason: `Malformed response to request ${String(id)}` };
    return refusal({ id }, ErrorCode.InvalidRequest, "Invalid Request: method must be a string");
  }
  if (object.jsonrpc !== "2.0") return refusal({ id, method }, ErrorCode.InvalidRequest, 'Invalid Request: jsonrpc must be "2.0"');
  const base = check("Request", object);
  if (base.ok) return refusal({ id, method }, ErrorCode.InvalidRequest, `Invalid Request: ${describe(parsed.issues, value)}`);
  return refusal({ id, method }, ErrorCode.InvalidParams, `Invalid params for ${method}: ${describe(base.issues, value)}`);
}

/**
 * Where the first object of the message's first NAMED_LEVELS levels holding more than MAX_NAMES names is (`""` for the
 * message itself, else its path: `params.arguments`), or undefined. Counting stops at the bound; the work is at most
 * the names of those levels, each read once.
 */
function crowdedObject(object: Record<string, unknown>, where: string, level: number): string | undefined {
  let names = 0;
  for (const key in object) {
    if (++names > MAX_NAMES) return where;
    const inner = object[key];
    if (level === NAMED_LEVELS || !isObject(inner)) continue;
    const found = crowdedObject(inner, `${where}${where === "" ? "" : "."}${shortened(key, 40)}`, level + 1);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** The refusal of a message with too many names in one object (a tool error for tools/call), before any schema reads them. */
function tooManyNames(head: ScannedHead, message: Record<string, unknown>, where: string): Verdict {
  const limit = `more than ${formatCount(MAX_NAMES)} names; the limit is ${formatCount(MAX_NAMES)} in one object`;
  const params = isObject(message.params) ? message.params : undefined;
  const tool = typeof params?.name === "string" && /^[\w.-]{1,64}$/.test(params.name) ? params.name : undefined;
  if (head.method === "tools/call" && where === "params.arguments" && tool !== undefined) {
    return refusal(
      head,
      ErrorCode.InvalidParams,
      `Invalid arguments for ${tool}: arguments holds ${limit}. Nothing was done; send only the tool's parameters.`,
      true,
    );
  }
  const what = where === "" ? "the message" : where;
  return refusal(
    head,
    ErrorCode.InvalidParams,
    `Invalid params for ${head.method ?? "the request"}: ${what} holds ${limit}. Nothing was done.`,
    true,
  );
}

function invalidRequest(reason: string): Verdict {
  return noIdReply(ErrorCode.InvalidRequest, `Invalid Request: ${reason}`);
}

/** An error for a message whose id cannot be read: JSON-RPC 2.0 answers it with id null. */
function noIdReply(code: number, message: string): Verdict {
  return { kind: "reply", reply: { jsonrpc: "2.0", id: null, error: { code, message } } as unknown as JSONRPCMessage };
}

/**
 * One error per request of a batch, by its id (the SDK's stdio client cannot read an array, so the
 * errors go out as separate messages); notifications and responses in it cannot be answered.
 */
function refuseBatch(batch: readonly unknown[]): Verdict {
  if (batch.length === 0) return invalidRequest("an empty batch");
  const replies: JSONRPCMessage[] = [];
  let unanswered = 0;
  for (const element of batch) {
    const object = isObject(element) ? element : undefined;
    const isResponse = object !== undefined && ("result" in object || "error" in object) && !("method" in object);
    if (object !== undefined && (!("id" in object) || isResponse)) unanswered++;
    else if (object !== undefined && validId(object.id)) {
      replies.push({ jsonrpc: "2.0", id: object.id as string | number, error: { code: ErrorCode.InvalidRequest, message: BATCH_REFUSAL } });
    } else {
      const reply = noIdReply(ErrorCode.InvalidRequest, BATCH_REFUSAL);
      if (reply.kind === "reply") replies.push(reply.reply);
    }
  }
  return { kind: "replies", replies, unanswered };
}

function validId(id: unknown): boolean {
  return typeof id === "string" || (typeof id === "number" && Number.isSafeInteger(id));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The first few issues as `path: message (got <kind>)`, with no value echoed. */
function describe(issues: readonly Issue[], root: unknown): string {
  return issues
    .slice(0, 3)
    .map((issue) => {
      const path = (issue.path ?? []).map((step) => (typeof step === "object" ? step.key : step));
      let seen: unknown = root;
      for (const key of path) seen = isObject(seen) || Array.isArray(seen) ? (seen as Record<PropertyKey, unknown>)[key] : undefined;
      const where = path.length > 0 ? path.map(String).join(".") : "message";
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
