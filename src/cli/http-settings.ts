/**
 * The options of the Streamable HTTP mode (SPEC §17): their table, their help
 * text, and one function that turns them into frozen settings, refusing every
 * bad value or combination at startup. Pure: files named here are read later.
 */
import net from "node:net";
import { type HttpSettings, isLoopback, isWildcard } from "../transports/http/settings.js";
import { invalid, PACKAGE_NAME, parseWhole, UsageError, type Given, type OptionSpec, type ReadOptions } from "./options.js";

export type { HttpSettings };

const spec = (flag: string, env: string, expects?: string): OptionSpec =>
  expects === undefined ? { flag, env, kind: "switch" } : { flag, env, kind: "value", expects };

const HTTP = spec("--http", "BOUNDED_FS_HTTP", "[HOST:]PORT");
const PUBLIC_URL = spec("--public-url", "BOUNDED_FS_PUBLIC_URL", "a URL");
const STATELESS = spec("--stateless", "BOUNDED_FS_STATELESS");
const SESSION_IDLE = spec("--session-idle-s", "BOUNDED_FS_SESSION_IDLE_S", "a positive whole number");
const MAX_SESSIONS = spec("--max-sessions", "BOUNDED_FS_MAX_SESSIONS", "a positive whole number");
const MAX_CONNECTIONS = spec("--max-connections", "BOUNDED_FS_MAX_CONNECTIONS", "a positive whole number");
const INSTANCE = spec("--instance-name", "BOUNDED_FS_INSTANCE_NAME", "a name of 1-32 letters, digits and dashes");
const TOKEN_FILE = spec("--auth-token-file", "BOUNDED_FS_AUTH_TOKEN_FILE", "a file");
const OAUTH_ISSUER = spec("--oauth-issuer", "BOUNDED_FS_OAUTH_ISSUER", "a URL");
const OAUTH_JWKS = spec("--oauth-jwks-url", "BOUNDED_FS_OAUTH_JWKS_URL", "a URL");
const OAUTH_TYP = spec("--oauth-token-type", "BOUNDED_FS_OAUTH_TOKEN_TYPE", 'a JWT typ such as at+jwt, or "any"');
const ORIGINS = spec("--allowed-origins", "BOUNDED_FS_ALLOWED_ORIGINS", "a comma-separated list of origins");
const TLS_CERT = spec("--tls-cert", "BOUNDED_FS_TLS_CERT", "a file");
const TLS_KEY = spec("--tls-key", "BOUNDED_FS_TLS_KEY", "a file");

// Enough for --max-sessions' 64 sessions each with a stream and many calls at once, few beside the descriptors a
// process has for files (20,000 on the machines measured; macOS and Linux give 10,240 and more).
const DEFAULT_MAX_CONNECTIONS = 1024;

/** The HTTP options, in --help order. */
export const HTTP_OPTIONS: readonly OptionSpec[] = [
  HTTP,
  PUBLIC_URL,
  STATELESS,
  SESSION_IDLE,
  MAX_SESSIONS,
  MAX_CONNECTIONS,
  INSTANCE,
  TOKEN_FILE,
  OAUTH_ISSUER,
  OAUTH_JWKS,
  OAUTH_TYP,
  ORIGINS,
  TLS_CERT,
  TLS_KEY,
];

/** The HTTP part of --help. */
export const HTTP_USAGE = `  --http [HOST:]PORT     serve MCP over Streamable HTTP at /mcp instead of stdio
                         (env BOUNDED_FS_HTTP; HOST defaults to 127.0.0.1; any
                         non-loopback HOST needs --auth-token-file or --oauth-issuer)
  --public-url URL       the URL clients use for /mcp, e.g. behind a proxy; it is
                         the OAuth audience (env BOUNDED_FS_PUBLIC_URL)
  --stateless            a fresh server for every request, no sessions and no
                         roots, for instances behind a load balancer
  --session-idle-s N     close a session idle this long (default 1800)
  --max-sessions N       sessions open at once (default 64)
  --max-connections N    TCP connections held at once (default 1024); at the
                         limit a new one closes the oldest that has carried no
                         authenticated request, else it is refused
  --auth-token-file FILE bearer tokens, one per line (32+ characters), each
                         optionally followed by " read-only"
  --oauth-issuer URL     accept JWT access tokens from this OAuth issuer (scopes
                         fs:read, fs:write; audience: the public URL)
  --oauth-jwks-url URL   the issuer's JWKS, when its metadata does not name one
                         (read up to 1 MiB; a larger key set is refused)
  --oauth-token-type TYP the typ header access tokens must carry (default at+jwt,
                         RFC 9068; "any" for issuers that set none or another)
  --instance-name NAME   behind a load balancer: session ids start with NAME and a
                         dot, so the balancer can route a session back to this
                         instance (deploy/nginx-mcp.conf)
  --allowed-origins LIST browser origins allowed to call (comma-separated)
  --tls-cert FILE, --tls-key FILE   serve HTTPS with this certificate and key
`;

const HOST_NAME = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*$/i;

// A media type (RFC 6838 restricted-name characters), optionally with its `application/` prefix.
const TOKEN_TYP = /^[A-Za-z0-9][A-Za-z0-9!#$&^_.+/-]{0,126}$/;

// A session id carries it before a dot, and a balancer matches it with a regex: nothing that needs escaping.
const INSTANCE_NAME = /^[A-Za-z0-9-]{1,32}$/;

/** `PORT`, `HOST:PORT` or `[IPV6]:PORT`. */
function parseBind(given: Given): { host: string; port: number } {
  const match = /^(?:\[([^\]]+)\]:|([^:[\]]+):)?(\d{1,5})$/.exec(given.value);
  const host = match?.[1] ?? match?.[2] ?? "127.0.0.1";
  const port = Number(match?.[3]);
  const hostOk = match?.[1] !== undefined ? net.isIPv6(host) : net.isIPv4(host) || HOST_NAME.test(host);
  if (!match || !hostOk || port > 65535) throw invalid(given, "expected [HOST:]PORT, e.g. 8080, 0.0.0.0:8080 or [::1]:8080");
  return { host, port };
}

/** An http(s) URL without a fragment; plain http only towards this machine. */
function parseUrl(given: Given, what: string): URL {
  let url: URL;
  try {
    url = new URL(given.value);
  } catch {
    throw invalid(given, `expected ${what}, an absolute http(s) URL`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw invalid(given, `expected ${what}, an http(s) URL`);
  if (url.hash !== "" || url.search !== "") throw invalid(given, `expected ${what} without a query or fragment`);
  if (url.protocol === "http:" && !isLoopback(url.hostname.replace(/^\[|\]$/g, ""))) {
    throw invalid(given, `expected ${what} with https (plain http is accepted only for this machine)`);
  }
  return url;
}

function parseOrigins(given: Given): string[] {
  const origins = given.value
    .split(",")
    .map((o) => o.trim())
    .filter((o) => o !== "");
  for (const origin of origins) {
    let parsed: string | undefined;
    try {
      parsed = new URL(origin).origin;
    } catch {
      parsed = undefined;
    }
    if (parsed !== origin.replace(/\/$/, "").toLowerCase() || parsed === "null") {
      throw invalid(given, `expected origins like https://app.example.com, comma-separated; ${JSON.stringify(origin)} is not one`);
    }
  }
  return origins.map((o) => new URL(o).origin);
}

/** A file name, which cannot be empty. */
function fileName(given: Given | undefined): string | undefined {
  if (given === undefined) return undefined;
  if (given.value === "") throw invalid(given, "expected a file");
  return given.value;
}

function needs(flag: string, other: string, why: string): UsageError {
  return new UsageError(`${PACKAGE_NAME}: ${flag} needs ${other} (${why})`);
}

/**
 * The HTTP settings, or undefined when --http (and BOUNDED_FS_HTTP) is absent.
 * @throws UsageError for a bad value, an HTTP flag without --http, or a combination that would be unsafe
 */
export function httpSettings(read: ReadOptions): HttpSettings | undefined {
  const http = read.get(HTTP);
  if (http === undefined) {
    const stray = HTTP_OPTIONS.find((s) => read.flagged(s));
    if (stray) throw needs(stray.flag, "--http [HOST:]PORT", "it only applies to the HTTP mode");
    return undefined;
  }
  const { host, port } = parseBind(http);
  const loopback = isLoopback(host);
  const publicGiven = read.get(PUBLIC_URL);
  const publicUrl = publicGiven && parseUrl(publicGiven, "the public URL");
  const tokens = fileName(read.get(TOKEN_FILE));
  const issuerGiven = read.get(OAUTH_ISSUER);
  const issuer = issuerGiven && parseUrl(issuerGiven, "the issuer");
  const jwksGiven = read.get(OAUTH_JWKS);
  const jwks = jwksGiven && parseUrl(jwksGiven, "the JWKS URL");
  const typ = read.get(OAUTH_TYP);
  if (typ && !TOKEN_TYP.test(typ.value)) throw invalid(typ, 'expected a JWT typ such as at+jwt or application/at+jwt, or "any"');
  const cert = fileName(read.get(TLS_CERT));
  const key = fileName(read.get(TLS_KEY));
  const idle = read.get(SESSION_IDLE);
  const max = read.get(MAX_SESSIONS);
  const connections = read.get(MAX_CONNECTIONS);
  const instance = read.get(INSTANCE);
  if (instance && !INSTANCE_NAME.test(instance.value)) throw invalid(instance, "expected 1-32 letters, digits and dashes, e.g. mcp-1");
  const origins = read.get(ORIGINS);

  if (!loopback && !tokens && !issuer) {
    throw new UsageError(
      `${PACKAGE_NAME}: ${http.source} ${http.value} listens on ${host}, which other machines can reach, so clients must ` +
        "authenticate: pass --auth-token-file FILE or --oauth-issuer URL (or bind 127.0.0.1)",
    );
  }
  if (jwks && !issuer) throw needs("--oauth-jwks-url", "--oauth-issuer", "the key set belongs to an issuer");
  if (typ && !issuer) throw needs("--oauth-token-type", "--oauth-issuer", "it says which access tokens to accept");
  if (issuer && !publicUrl && isWildcard(host)) {
    throw needs("--oauth-issuer", "--public-url", `tokens name the public URL as their audience, and ${host} does not say it`);
  }
  if ((cert === undefined) !== (key === undefined)) {
    throw needs(cert === undefined ? "--tls-key" : "--tls-cert", cert === undefined ? "--tls-cert" : "--tls-key", "HTTPS needs both");
  }
  return Object.freeze({
    host,
    port,
    loopback,
    ...(publicUrl && { publicUrl: publicUrl.href }),
    stateless: read.on(STATELESS),
    sessionIdleSeconds: idle ? parseWhole(idle) : 1800,
    maxSessions: max ? parseWhole(max) : 64,
    maxConnections: connections ? parseWhole(connections) : DEFAULT_MAX_CONNECTIONS,
    ...(instance && { instanceName: instance.value }),
    ...(tokens !== undefined && { authTokenFile: tokens }),
    ...(issuerGiven && { oauthIssuer: issuerGiven.value }),
    ...(jwks && { oauthJwksUrl: jwks.href }),
    ...(typ && { oauthTokenType: typ.value }),
    allowedOrigins: Object.freeze(origins ? parseOrigins(origins) : []),
    ...(cert !== undefined && key !== undefined && { tlsCert: cert, tlsKey: key }),
  });
}
