/** What the HTTP transport is given by the command line (SPEC §17), and the host predicates both use. */
import net from "node:net";

/** How the server listens and whom it lets in, when --http is given. */
export interface HttpSettings {
  /** The address to bind, without brackets (`127.0.0.1`, `::1`, `0.0.0.0`, a host name). */
  readonly host: string;
  /** 0 picks a free port (tests; the startup line names the one chosen). */
  readonly port: number;
  /** True for 127.0.0.0/8, ::1 and localhost: only this machine can connect. */
  readonly loopback: boolean;
  /** The URL clients use for /mcp (behind a proxy, and the OAuth audience); defaults to the bind's. */
  readonly publicUrl?: string;
  /** Each request gets a fresh server and transport, and there are no sessions. @default false */
  readonly stateless: boolean;
  /** @default 1800 */
  readonly sessionIdleSeconds: number;
  /** Sessions (or, stateless, requests) served at once. @default 64 */
  readonly maxSessions: number;
  /** TCP connections held at once (transports/http/connections.ts). @default 1024 */
  readonly maxConnections: number;
  /** Behind a balancer: the prefix of every session id minted here (`<name>.<uuid>`), so a session is routed back. */
  readonly instanceName?: string;
  readonly authTokenFile?: string;
  /** The issuer exactly as given (it is compared with each token's `iss`). */
  readonly oauthIssuer?: string;
  readonly oauthJwksUrl?: string;
  /** The `typ` header access tokens must carry, or "any". @default "at+jwt" (RFC 9068) */
  readonly oauthTokenType?: string;
  /** Origins (scheme://host[:port]) whose browsers may call; requests without Origin are not affected. */
  readonly allowedOrigins: readonly string[];
  readonly tlsCert?: string;
  readonly tlsKey?: string;
}

/** True for 127.0.0.0/8, ::1 and localhost. */
export function isLoopback(host: string): boolean {
  const h = host.toLowerCase();
  if (h === "localhost" || h === "::1" || h === "0:0:0:0:0:0:0:1") return true;
  return net.isIPv4(h) && h.startsWith("127.");
}

/** True for the addresses that bind every interface. */
export function isWildcard(host: string): boolean {
  return host === "0.0.0.0" || host === "::" || host === "0:0:0:0:0:0:0:0";
}
