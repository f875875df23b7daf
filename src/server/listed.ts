/**
 * A tool definition as tools/list shows it (no title: it repeats the name, and a model pays for every
 * character of the list, issue 26): the JSON Schema of its input
 * without the noise a model pays for and cannot use (`$schema`, the safe-integer
 * bounds zod adds to every integer, a minimum of 0 on a count that cannot be negative anyway, and defaults
 * of 0 or [] — what an absent optional number or list means anyway), and its annotations exactly as the tool
 * sets them (STYLE 11, SPEC §3): no hint is dropped for being what MCP would assume anyway.
 */
import type { Tool } from "@modelcontextprotocol/server";
import { z } from "zod";
import type { Limits } from "../kernel/bounded.js";
import type { ToolDefinition } from "../tools/context.js";

function withoutNoise(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutNoise);
  if (node === null || typeof node !== "object") return node;
  // Kept although a model could do without: "type" beside an enum (Gemini refuses an enum without it) and an empty
  // "properties" (OpenAI refuses an object schema without it).
  const out: Record<string, unknown> = {};
  const ranged = "maximum" in node && node.maximum !== Number.MAX_SAFE_INTEGER;
  for (const [key, value] of Object.entries(node)) {
    if (key === "$schema") continue;
    if (key === "maximum" && value === Number.MAX_SAFE_INTEGER) continue;
    if (key === "minimum" && value === Number.MIN_SAFE_INTEGER) continue;
    // A count's 0 is only kept where a maximum makes it a range (contextLines 0-10).
    if (key === "minimum" && value === 0 && !ranged) continue;
    // A boolean's default is kept: "off" is not what a model assumes of every flag (issue 26).
    if (key === "default" && (value === 0 || (Array.isArray(value) && value.length === 0))) continue;
    out[key] = withoutNoise(value);
  }
  return out;
}

/** The tools/list entry of `tool` under `limits`. */
export function listedTool(tool: ToolDefinition, limits: Limits): Tool {
  const schema = z.toJSONSchema(z.object(tool.input), { target: "draft-7", io: "input" });
  return {
    name: tool.name,
    description: tool.description(limits),
    inputSchema: withoutNoise(schema) as Tool["inputSchema"],
    annotations: tool.annotations,
  };
}
