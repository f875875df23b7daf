/**
 * The two protocol eras as the SDK's v2 client meets them (SPEC §21): a
 * client pinned to 2025-11-25 (the `initialize` handshake) or to 2026-07-28
 * (`server/discover`, per-request versions), connected in process through
 * the SDK's stdio entry (serveStdio over an in-memory pair, as the server's
 * own stdio does) or over Streamable HTTP.
 */
import { Client, type ClientOptions, InMemoryTransport, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import type { Server, Transport } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";

/** The revisions the server speaks, oldest first. */
export const ERAS = ["2025-11-25", "2026-07-28"] as const;
/** One of ERAS. */
export type Era = (typeof ERAS)[number];

/** Client options that connect in `era` and nothing else (no fallback). */
export function eraOptions(era: Era | "auto", options: ClientOptions = {}): ClientOptions {
  const mode = era === "auto" ? "auto" : era === "2026-07-28" ? { pin: era } : "legacy";
  return { ...options, versionNegotiation: { mode }, ...(era === "2025-11-25" && { supportedProtocolVersions: [era] }) };
}

/** Throws unless `client` connected in `era` (an "auto" client must land on 2026-07-28: the server speaks it). */
function expectEra(client: Client, era: Era | "auto"): void {
  const wanted = era === "2025-11-25" ? "legacy" : "modern";
  if (client.getProtocolEra() !== wanted) throw new Error(`connected as ${client.getProtocolEra()}, not ${era}`);
}

/** A connected client and how to close both ends. */
export interface Connection {
  readonly client: Client;
  close(): Promise<void>;
}

/** A v2 client in `era`, served in process by the SDK's stdio entry over servers from `build`. */
export async function connectStdioEntry(
  build: () => Server,
  era: Era | "auto",
  options: { capabilities?: ClientOptions["capabilities"]; prepare?: (client: Client) => void } = {},
): Promise<Connection> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  // The client's and the server's packages bundle the same Transport shape under separate types.
  const served = serveStdio(build, { transport: serverSide as unknown as Transport });
  const client = new Client({ name: `eras-${era}`, version: "1.0.0" }, eraOptions(era, { capabilities: options.capabilities ?? {} }));
  options.prepare?.(client);
  await client.connect(clientSide);
  expectEra(client, era);
  return {
    client,
    close: async () => {
      await client.close();
      await served.close();
    },
  };
}

/** A v2 client in `era` over Streamable HTTP at `url`. */
export async function connectHttpEra(
  url: string,
  era: Era | "auto",
  options: {
    headers?: Record<string, string>;
    capabilities?: ClientOptions["capabilities"];
    prepare?: (client: Client) => void;
    fetch?: (url: string | URL, init?: RequestInit) => Promise<Response>;
  } = {},
): Promise<Connection> {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: options.headers ?? {} },
    ...(options.fetch && { fetch: options.fetch }),
  });
  const client = new Client({ name: `eras-${era}`, version: "1.0.0" }, eraOptions(era, { capabilities: options.capabilities ?? {} }));
  options.prepare?.(client);
  await client.connect(transport);
  expectEra(client, era);
  return {
    client,
    close: async () => {
      await transport.terminateSession().catch(() => undefined);
      await client.close();
    },
  };
}
