/**
 * The HTTP routes (SPEC §17), in the order a request meets them: /healthz
 * (no checks, reveals nothing), the Host check, the RFC 9728 metadata
 * documents, and /mcp behind the Origin check and authentication, served by
 * the sessions. Anything else is 404.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { OAuthProtectedResourceMetadata } from "@modelcontextprotocol/server";
import { isRefused, type Authenticator } from "./auth.js";
import type { Connections } from "./connections.js";
import { corsHeaders, hostAllowed, originAllowed } from "./headers.js";
import { refuse } from "./refuse.js";
import type { Sessions } from "./sessions.js";

/** The MCP endpoint's path. */
export const MCP_PATH = "/mcp";

/** Everything the routes consult. */
export interface Routes {
  readonly sessions: Sessions;
  /** The connections held, told which carried a request past authentication. */
  readonly connections?: Connections;
  readonly auth: Authenticator;
  /** Host names the Host header may carry. */
  readonly hosts: ReadonlySet<string>;
  /** Browser origins allowed besides the server's own. */
  readonly allowedOrigins: readonly string[];
  readonly ownOrigins: readonly string[];
  /** The metadata document and the paths it is served at (OAuth only). */
  readonly metadata?: { readonly paths: ReadonlySet<string>; readonly document: OAuthProtectedResourceMetadata };
  readonly log: (line: string) => void;
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "Content-Type": "application/json", "Cache-Control": "no-store", ...headers });
  res.end(JSON.stringify(body));
}

async function serveMcp(routes: Routes, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const origin = req.headers.origin;
  if (!originAllowed(origin, routes.allowedOrigins, routes.ownOrigins)) {
    return refuse(res, 403, "Forbidden: requests from this Origin are not allowed (see --allowed-origins)");
  }
  if (origin !== undefined) for (const [name, value] of Object.entries(corsHeaders(origin))) res.setHeader(name, value);
  if (req.method === "OPTIONS") {
    res.writeHead(204);
    return void res.end();
  }
  const outcome = await routes.auth.check(req.headers.authorization);
  if (isRefused(outcome)) {
    const challenge = routes.auth.challenge(outcome);
    const body = { ...(outcome.error && { error: outcome.error }), error_description: outcome.description };
    return json(res, outcome.status, body, {
      ...(challenge && { "WWW-Authenticate": challenge }),
      ...(outcome.status === 503 && { "Retry-After": "5" }),
    });
  }
  dropCredentials(req);
  routes.connections?.trust(req.socket);
  await routes.sessions.handle(req, res, outcome.auth, outcome.principal);
}

/** Removes the Authorization header once checked: the SDK's transport hands every header to the handlers. */
function dropCredentials(req: IncomingMessage): void {
  delete req.headers.authorization;
  const kept: string[] = [];
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    if (req.rawHeaders[i]?.toLowerCase() !== "authorization") kept.push(req.rawHeaders[i] as string, req.rawHeaders[i + 1] as string);
  }
  req.rawHeaders = kept;
}

/** The request listener of the HTTP(S) server. */
export function requestListener(routes: Routes): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    req.on("error", () => undefined);
    const path = new URL(req.url ?? "/", "http://unused").pathname;
    const route = async (): Promise<void> => {
      if (path === "/healthz" && (req.method === "GET" || req.method === "HEAD")) {
        res.writeHead(200, { "Content-Type": "text/plain", "Cache-Control": "no-store" });
        return void res.end(req.method === "HEAD" ? undefined : "ok\n");
      }
      if (!hostAllowed(req.headers.host, routes.hosts)) {
        return refuse(res, 403, "Forbidden: the Host header does not name this server (its address or --public-url)");
      }
      if (routes.metadata?.paths.has(path)) {
        if (req.method !== "GET" && req.method !== "HEAD") return refuse(res, 405, "Method Not Allowed", { Allow: "GET" });
        // A public document: any web client may read it.
        return json(res, 200, routes.metadata.document, { "Access-Control-Allow-Origin": "*" });
      }
      if (path === MCP_PATH) return serveMcp(routes, req, res);
      refuse(res, 404, `Not Found: MCP is served at ${MCP_PATH}`);
    };
    route().catch((error: unknown) => {
      routes.log(`HTTP request failed: ${error instanceof Error ? error.message : String(error)}`);
      if (!res.headersSent) refuse(res, 500, "Internal Server Error");
      else res.destroy();
    });
  };
}
