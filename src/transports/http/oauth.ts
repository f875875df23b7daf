/**
 * The OAuth 2.1 resource server of SPEC §17 (MCP authorization 2025-06-18 and
 * 2025-11-25): access tokens are JWTs verified with jose against the issuer's
 * JWKS — signature, allowed algorithms, `iss`, `aud` containing the public
 * URL, `exp` and `nbf` — and the Protected Resource Metadata (RFC 9728)
 * that tells clients which issuer to ask. No cryptography is written here.
 */
import { discoverAuthorizationServerMetadata } from "@modelcontextprotocol/client";
import type { OAuthProtectedResourceMetadata } from "@modelcontextprotocol/server";
import { createRemoteJWKSet, errors, jwtVerify, type JWTPayload } from "jose";

/** The scope that gives the tools that only read. */
export const SCOPE_READ = "fs:read";
/** The scope that also gives the tools that change files. */
export const SCOPE_WRITE = "fs:write";

/**
 * Asymmetric algorithms only: a symmetric one (HS*) would let anyone holding the public JWKS
 * forge tokens, and `none` is no signature at all.
 */
const ALLOWED_ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA", "Ed25519"];

/** Seconds of clock difference tolerated between the issuer and this machine for `exp` and `nbf`. */
const CLOCK_TOLERANCE_S = 30;

const DISCOVERY_TIMEOUT_MS = 10_000;

/** What a valid access token says: who, through which client, with which scopes, until when. */
interface JwtGrant {
  readonly subject: string;
  readonly clientId: string;
  readonly scopes: readonly string[];
  /** Seconds since the epoch. */
  readonly expiresAt: number;
}

/** A token that is not accepted, with a description safe to send (it never quotes the token). */
export class TokenRejected extends Error {
  override readonly name = "TokenRejected";
  /** @param unavailable true when the token could not be checked (the key set was unreachable), not that it is bad */
  constructor(
    readonly description: string,
    readonly unavailable = false,
  ) {
    super(description);
  }
}

/** Checks access tokens for one issuer and one audience. */
export interface JwtVerifier {
  /** @throws TokenRejected */
  verify(token: string): Promise<JwtGrant>;
}

/**
 * The issuer's JWKS URL from its metadata (RFC 8414, then OpenID Connect discovery), whose
 * `issuer` must be the one configured.
 * @throws Error naming the issuer and what was missing
 */
export async function discoverJwksUrl(issuer: string): Promise<string> {
  const fetchFn = (url: string | URL, init?: RequestInit) => fetch(url, { ...init, signal: AbortSignal.timeout(DISCOVERY_TIMEOUT_MS) });
  // SDK v2 throws on a network failure where 1.x answered undefined: both mean the issuer could not be read.
  const metadata = await discoverAuthorizationServerMetadata(issuer, { fetchFn }).catch(() => undefined);
  if (!metadata) {
    throw new Error(`no OAuth or OpenID Connect metadata could be read from the issuer ${issuer} (is it reachable?); pass --oauth-jwks-url`);
  }
  if (metadata.issuer !== issuer) {
    throw new Error(`the metadata of ${issuer} names the issuer ${metadata.issuer}; pass the issuer exactly as its tokens carry it`);
  }
  if (!metadata.jwks_uri) throw new Error(`the metadata of ${issuer} names no jwks_uri; pass --oauth-jwks-url`);
  return String(metadata.jwks_uri);
}

/** The audiences accepted: the public URL, with and without one trailing slash (RFC 8707 resource identifiers). */
function audiences(publicUrl: string): string[] {
  const bare = publicUrl.replace(/\/$/, "");
  return [bare, `${bare}/`];
}

function scopesOf(payload: JWTPayload): string[] {
  // RFC 9068 says `scope` (space-separated); some issuers (Azure AD, Okta) put `scp`, a string or an array.
  const raw = payload.scope ?? payload.scp;
  if (typeof raw === "string") return raw.split(" ").filter((s) => s !== "");
  if (Array.isArray(raw)) return raw.filter((s): s is string => typeof s === "string");
  return [];
}

/** Why jose refused a token, in words safe to send back. */
function rejection(error: unknown): TokenRejected {
  if (error instanceof errors.JWTExpired) return new TokenRejected("The access token has expired");
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === "nbf") return new TokenRejected("The access token is not valid yet (nbf)");
    if (error.claim === "aud") return new TokenRejected("The access token was not issued for this server (aud)");
    if (error.claim === "iss") return new TokenRejected("The access token comes from another issuer (iss)");
    return new TokenRejected(`The access token's ${error.claim} claim is ${error.reason === "missing" ? "missing" : "not accepted"}`);
  }
  if (error instanceof errors.JOSEAlgNotAllowed || error instanceof errors.JOSENotSupported) {
    return new TokenRejected("The access token's signing algorithm is not accepted");
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) return new TokenRejected("The access token's signature does not verify");
  if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWKSMultipleMatchingKeys) {
    return new TokenRejected("The access token is signed by a key the issuer does not publish");
  }
  if (error instanceof errors.JWSInvalid || error instanceof errors.JWTInvalid) return new TokenRejected("The access token is not a well-formed JWT");
  // A timeout, a network failure or an unreadable key set: the token could not be checked at all.
  return new TokenRejected("The issuer's key set could not be fetched to check the access token", true);
}

/** A verifier for tokens of `issuer` (exactly as configured) meant for `publicUrl`, with keys from `jwksUrl`. */
export function jwtVerifier(issuer: string, jwksUrl: string, publicUrl: string): JwtVerifier {
  const keys = createRemoteJWKSet(new URL(jwksUrl), { timeoutDuration: 5_000, cooldownDuration: 30_000, cacheMaxAge: 10 * 60_000 });
  const audience = audiences(publicUrl);
  return {
    async verify(token) {
      let payload: JWTPayload;
      try {
        ({ payload } = await jwtVerify(token, keys, {
          issuer,
          audience,
          algorithms: ALLOWED_ALGORITHMS,
          clockTolerance: CLOCK_TOLERANCE_S,
          requiredClaims: ["exp"],
        }));
      } catch (error) {
        throw rejection(error);
      }
      const clientId = payload.client_id ?? payload.azp;
      return {
        subject: payload.sub ?? "",
        clientId: typeof clientId === "string" ? clientId : (payload.sub ?? "unknown"),
        scopes: scopesOf(payload),
        expiresAt: payload.exp as number,
      };
    },
  };
}

/** Where RFC 9728 puts the metadata of `publicUrl`: the well-known path inserted before its path. */
export function metadataUrl(publicUrl: string): string {
  const url = new URL(publicUrl);
  const suffix = url.pathname === "/" ? "" : url.pathname.replace(/\/$/, "");
  return `${url.origin}/.well-known/oauth-protected-resource${suffix}`;
}

/** The Protected Resource Metadata document (RFC 9728 §2) for `publicUrl`, protected by `issuer`. */
export function protectedResourceMetadata(publicUrl: string, issuer: string): OAuthProtectedResourceMetadata {
  return {
    resource: publicUrl,
    authorization_servers: [issuer],
    scopes_supported: [SCOPE_READ, SCOPE_WRITE],
    bearer_methods_supported: ["header"],
    resource_name: "bounded-filesystem-mcp",
  };
}
