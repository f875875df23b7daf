/** What a test does with a connected client, whether the server is spawned (spawn.ts) or in process (in-process.ts). */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

/** Calls a tool and returns the result (tool errors are results, not throws). */
export async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

/** The text of a result's only text block. */
export function textOf(result: CallToolResult): string {
  const block = result.content[0];
  if (block?.type !== "text") throw new Error(`expected a text block, got ${JSON.stringify(result).slice(0, 200)}`);
  return block.text;
}
