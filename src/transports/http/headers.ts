/**
 * DNS-rebinding defences (SPEC §17): the Host header must name this server —
 * its bind address, its loopback names, its interfaces when it binds all of
 * them, or the public URL's host — and a browser's Origin must be allowed.
 * Pure functions of their arguments; the interface list is passed in.
 */
import { isLoopback, isWildcard } from "./settings.js";

/** How Host names are compared: the hostname only (a proxy may change the port), lower case, IPv6 in brackets. */
function hostnameOf(hostHeader: string): string | undefined {
  try {
    return new URL(`http://${hostHeader}`).hostname.toLowerCase();
  } catch {
    return undefined;
  }
}

const bracket = (host: string): string => (host.includes(":") ? `[${host}]` : host).toLowerCase();

/**
 * The host names a request may carry, for a server bound to `bindHost` and reached at `publicUrl`;
 * `interfaces` are this machine's addresses (used when the bind is a wildcard) and its name.
 */
export function allowedHostnames(bindHost: string, publicUrl: string, interfaces: readonly string[]): ReadonlySet<string> {
  const names = new Set<string>([new URL(publicUrl).hostname.toLowerCase()]);
  if (isWildcard(bindHost)) for (const address of interfaces) names.add(bracket(address));
  else names.add(bracket(bindHost));
  if (isLoopback(bindHost) || isWildcard(bindHost)) for (const name of ["localhost", "127.0.0.1", "[::1]"]) names.add(name);
  return names;
}

/** True when the Host header names one of `allowed`. */
export function hostAllowed(hostHeader: string | undefined, allowed: ReadonlySet<string>): boolean {
  const name = hostHeader === undefined ? undefined : hostnameOf(hostHeader);
  return name !== undefined && allowed.has(name);
}

/**
 * True when a request may proceed by its Origin: no Origin (not a browser), the server's own
 * origin, or one of `allowedOrigins`.
 */
export function originAllowed(origin: string | undefined, allowedOrigins: readonly string[], ownOrigins: readonly string[]): boolean {
  if (origin === undefined) return true;
  const normal = origin.toLowerCase().replace(/\/$/, "");
  return allowedOrigins.includes(normal) || ownOrigins.includes(normal);
}

/** The CORS response headers for an allowed browser Origin, so a web client can read answers and challenges. */
export function corsHeaders(origin: string): Record<string, string> {
  return {
    "Access-Control-Allow-Origin": origin,
    Vary: "Origin",
    "Access-Control-Allow-Methods": "GET, POST, DELETE, OPTIONS",
    "Access-Control-Allow-Headers": "Authorization, Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID",
    "Access-Control-Expose-Headers": "Mcp-Session-Id, WWW-Authenticate",
    "Access-Control-Max-Age": "600",
  };
}
