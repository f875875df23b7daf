/**
 * The Streamable HTTP server (SPEC §17): reads the token file, the TLS
 * files and the issuer's metadata, listens, and serves /mcp through the
 * sessions; shutdown() is the SIGTERM drain.
 */
import fs from "node:fs/promises";
import http from "node:http";
import https from "node:https";
import type { AddressInfo, Socket } from "node:net";
import os from "node:os";
import type { Limits } from "../../kernel/bounded.js";
import { type HttpSettings, isWildcard } from "./settings.js";
import { buildServer } from "../../server/index.js";
import type { Runtime } from "../../server/runtime.js";
import { UsageError } from "../../kernel/usage-error.js";
import { MCP_PATH, requestListener } from "./app.js";
import { Authenticator, mayWrite } from "./auth.js";
import { Connections } from "./connections.js";
import { allowedHostnames } from "./headers.js";
import { discoverJwksUrl, jwtVerifier, metadataUrl, protectedResourceMetadata } from "./oauth.js";
import type { MemoryBounds } from "./memory.js";
import { Sessions, type SessionStats } from "./sessions.js";
import { parseTokenFile, TokenFileError, type StaticTokens } from "./tokens.js";

/** What the HTTP server serves: the settings, and what buildServer needs. */
export interface HttpServerOptions {
  readonly settings: HttpSettings;
  readonly limits: Limits;
  readonly directories: readonly string[];
  readonly readOnly?: boolean;
  /** The tools to offer (SPEC §19). @default every tool */
  readonly tools?: readonly string[];
  readonly log: (line: string) => void;
  /** The process resources every session's server shares (server/runtime.ts). */
  readonly runtime: Runtime;
  /** The bounds of bodies in flight and answers held over all requests (tests lower them). @default wire-limits.ts's */
  readonly memory?: MemoryBounds;
}

/**
 * How long an idle connection is kept open: longer than what a proxy or load balancer in front keeps its
 * own idle connection to the server (nginx's upstream keepalive_timeout and common load balancers: 60 s),
 * so the proxy always closes first. With Node's 5 s the server could close a connection just as the proxy
 * sent a request on it; nginx does not send a POST again, so the client got a 502.
 */
const KEEP_ALIVE_MS = 65_000;

/** A listening server. */
export interface HttpServer {
  /** Where it listens, e.g. http://127.0.0.1:43817/mcp. */
  readonly url: string;
  /** The URL clients are told about (--public-url, or `url`). */
  readonly publicUrl: string;
  /** Each open session's traffic (tests, and the drain). */
  stats(): SessionStats[];
  /** Bytes of request bodies in flight and of answers held for clients now, over all requests. */
  memory(): { readonly bodyBytes: number; readonly heldBytes: number };
  /** Stops accepting, lets calls in flight finish for up to `graceMs`, then closes every session. */
  shutdown(graceMs?: number): Promise<void>;
}

/** How long SIGTERM waits for calls in flight. */
export const DRAIN_MS = 10_000;

async function readTokens(file: string, log: (line: string) => void): Promise<StaticTokens> {
  let text: string;
  try {
    text = await fs.readFile(file, "utf8");
    const { mode } = await fs.stat(file);
    if ((mode & 0o077) !== 0) log(`Warning: ${file} is readable by other users; tokens are credentials (chmod 600 ${file})`);
  } catch (error) {
    throw new UsageError(`Cannot read --auth-token-file ${file}: ${(error as Error).message}`, { cause: error });
  }
  try {
    return parseTokenFile(text, file);
  } catch (error) {
    if (error instanceof TokenFileError) throw new UsageError(`Bad --auth-token-file: ${error.message}`, { cause: error });
    throw error;
  }
}

async function readTls(settings: HttpSettings): Promise<{ cert: Buffer; key: Buffer } | undefined> {
  if (settings.tlsCert === undefined || settings.tlsKey === undefined) return undefined;
  const read = async (flag: string, file: string) =>
    fs.readFile(file).catch((error: Error) => {
      throw new UsageError(`Cannot read ${flag} ${file}: ${error.message}`, { cause: error });
    });
  return { cert: await read("--tls-cert", settings.tlsCert), key: await read("--tls-key", settings.tlsKey) };
}

function localAddresses(): string[] {
  const found = [os.hostname()];
  for (const list of Object.values(os.networkInterfaces())) for (const info of list ?? []) found.push(info.address.replace(/%.*$/, ""));
  return found;
}

const urlHost = (host: string): string => (host.includes(":") ? `[${host}]` : host);

/**
 * Starts the server and resolves once it listens.
 * @throws UsageError for an unreadable or bad token, certificate or key file; Error when the issuer's metadata cannot be read
 */
export async function startHttpServer(options: HttpServerOptions): Promise<HttpServer> {
  const { settings, log } = options;
  const tokens = settings.authTokenFile === undefined ? undefined : await readTokens(settings.authTokenFile, log);
  const tls = await readTls(settings);
  const issuer = settings.oauthIssuer;
  const jwksUrl = issuer === undefined ? undefined : (settings.oauthJwksUrl ?? (await discoverJwksUrl(issuer)));

  const sessions = new Sessions({
    build: (roots, sessionLog, auth) =>
      buildServer({
        limits: options.limits,
        directories: options.directories,
        log: sessionLog,
        readOnly: options.readOnly,
        tools: options.tools,
        roots,
        mayWrite,
        openedWith: auth,
        runtime: options.runtime,
      }),
    stateless: settings.stateless,
    idleMs: settings.sessionIdleSeconds * 1000,
    maxSessions: settings.maxSessions,
    ...(settings.instanceName !== undefined && { idPrefix: `${settings.instanceName}.` }),
    ...(options.memory !== undefined && { memory: options.memory }),
    log,
  });
  // The request listener is added once the URL, and with it the token audience, is known.
  const server = tls ? https.createServer(tls) : http.createServer();
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  const connections = new Connections(settings.maxConnections, log);
  // Over TLS a connection is counted once its handshake is done (the socket requests then arrive on); until then the
  // server's own bound holds, twice ours, so connections stalled in a handshake cannot take every descriptor either.
  server.on(tls ? "secureConnection" : "connection", (socket: Socket) => connections.admit(socket));
  if (tls) server.maxConnections = 2 * settings.maxConnections;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(settings.port, settings.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const scheme = tls ? "https" : "http";
  const url = `${scheme}://${urlHost(settings.host)}:${port}${MCP_PATH}`;
  const publicUrl = settings.publicUrl ?? (isWildcard(settings.host) ? `${scheme}://localhost:${port}${MCP_PATH}` : url);
  const metadata = issuer === undefined ? undefined : metadataUrl(publicUrl);
  const jwt =
    issuer === undefined || jwksUrl === undefined ? undefined : jwtVerifier(issuer, jwksUrl, publicUrl, { typ: settings.oauthTokenType, log });
  const listen = requestListener({
    sessions,
    connections,
    auth: new Authenticator(tokens, jwt, metadata),
    hosts: allowedHostnames(settings.host, publicUrl, localAddresses()),
    allowedOrigins: settings.allowedOrigins,
    ownOrigins: [...new Set([new URL(url).origin, new URL(publicUrl).origin, `${scheme}://localhost:${port}`, `${scheme}://127.0.0.1:${port}`])],
    ...(metadata !== undefined &&
      issuer !== undefined && {
        metadata: {
          paths: new Set([new URL(metadata).pathname, "/.well-known/oauth-protected-resource", `/.well-known/oauth-protected-resource${MCP_PATH}`]),
          document: protectedResourceMetadata(publicUrl, issuer),
        },
      }),
    log,
  });
  server.on("request", listen);

  return {
    url,
    publicUrl,
    stats: () => sessions.stats(),
    memory: () => ({ bodyBytes: sessions.memory.bodyBytes, heldBytes: sessions.memory.held() }),
    async shutdown(graceMs = DRAIN_MS) {
      sessions.stopAccepting();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const deadline = Date.now() + graceMs;
      while (sessions.busy() > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      await sessions.closeAll();
      server.closeAllConnections();
      await closed;
    },
  };
}
