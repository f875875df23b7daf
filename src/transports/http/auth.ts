/**
 * Who may call (SPEC §17): a request's `Authorization: Bearer` token checked
 * against the static tokens, then as an OAuth access token, turned into the
 * SDK's AuthInfo (with the token itself left out, so it can never be passed
 * on) or into a refusal with its RFC 6750 challenge. The SDK's
 * requireBearerAuth is Express middleware and labels a missing token
 * invalid_token; this is the same check for node:http, with the SDK's error codes.
 */
import type { AuthInfo } from "@modelcontextprotocol/server";
import { jwtOwner, SCOPE_READ, SCOPE_WRITE, TokenRejected, type JwtVerifier } from "./oauth.js";
import type { StaticTokens } from "./tokens.js";

/** A request let in: its credentials as handlers see them, and the principal its sessions are bound to. */
export interface Admitted {
  readonly auth: AuthInfo | undefined;
  readonly principal: string;
}

/** A request refused: the status, the RFC 6750 error code (absent when no token was sent) and a safe description. */
export interface Refused {
  readonly status: 401 | 403 | 503;
  readonly error?: "invalid_token" | "insufficient_scope";
  readonly description: string;
  /** The scope the request would need (insufficient_scope). */
  readonly scope?: string;
}

// RFC 6750 §2.1: the scheme, then a b64token.
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/** True when these credentials allow the tools that change files (no credentials: nothing is required). */
export function mayWrite(auth: AuthInfo | undefined): boolean {
  return auth === undefined || auth.scopes.includes(SCOPE_WRITE);
}

/** The authentication of one HTTP server: none (loopback without flags), static tokens, OAuth, or both. */
export class Authenticator {
  constructor(
    private readonly tokens: StaticTokens | undefined,
    private readonly jwt: JwtVerifier | undefined,
    /** The RFC 9728 metadata URL, named in challenges when OAuth is on. */
    private readonly metadataUrl: string | undefined,
  ) {}

  /** True when requests must carry a token. */
  get required(): boolean {
    return this.tokens !== undefined || this.jwt !== undefined;
  }

  /** Lets a request in or says why not, from its Authorization header. */
  async check(header: string | undefined): Promise<Admitted | Refused> {
    if (!this.required) return { auth: undefined, principal: "anonymous" };
    if (header === undefined || header.trim() === "") {
      return { status: 401, description: "This server needs a bearer token: send Authorization: Bearer <token>" };
    }
    const token = BEARER.exec(header)?.[1];
    if (token === undefined) return { status: 401, error: "invalid_token", description: "Expected Authorization: Bearer <token>" };
    const grant = this.tokens?.match(token);
    if (grant) {
      const scopes = grant.readOnly ? [SCOPE_READ] : [SCOPE_READ, SCOPE_WRITE];
      return { auth: { token: "", clientId: `token-file line ${grant.line}`, scopes }, principal: `token:${grant.line}` };
    }
    if (!this.jwt || token.split(".").length !== 3)
      return { status: 401, error: "invalid_token", description: "The token is not valid for this server" };
    try {
      const jwt = await this.jwt.verify(token);
      // Tokens with neither sub nor client id would all share one owner, and so each other's sessions.
      const principal = jwtOwner(jwt);
      if (principal === undefined) throw TokenRejected.of({ kind: "noOwner" });
      if (!jwt.scopes.includes(SCOPE_READ) && !jwt.scopes.includes(SCOPE_WRITE)) {
        return {
          status: 403,
          error: "insufficient_scope",
          scope: SCOPE_READ,
          description: `The access token grants neither ${SCOPE_READ} nor ${SCOPE_WRITE}`,
        };
      }
      const clientId = jwt.clientId ?? jwt.subject ?? "";
      const auth: AuthInfo = { token: "", clientId, scopes: [...jwt.scopes], expiresAt: jwt.expiresAt };
      return { auth, principal };
    } catch (error) {
      if (!(error instanceof TokenRejected)) throw error;
      return error.unavailable
        ? { status: 503, description: error.description }
        : { status: 401, error: "invalid_token", description: error.description };
    }
  }

  /** The WWW-Authenticate value for a refusal (none for 503: the token was not judged). */
  challenge(refused: Refused): string | undefined {
    if (refused.status === 503) return undefined;
    const parts: string[] = [];
    if (!this.metadataUrl) parts.push('realm="bounded-filesystem-mcp"');
    if (refused.error) parts.push(`error="${refused.error}"`, `error_description="${refused.description}"`);
    // MCP 2025-11-25: a challenge may name the scopes to ask for.
    const scope = refused.scope ?? (this.jwt ? `${SCOPE_READ} ${SCOPE_WRITE}` : undefined);
    if (scope) parts.push(`scope="${scope}"`);
    if (this.metadataUrl) parts.push(`resource_metadata="${this.metadataUrl}"`);
    return `Bearer ${parts.join(", ")}`;
  }
}

/** True for a refusal. */
export function isRefused(outcome: Admitted | Refused): outcome is Refused {
  return "status" in outcome;
}
