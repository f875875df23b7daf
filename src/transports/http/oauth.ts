/**
 * The OAuth 2.1 resource server of SPEC §17 (MCP authorization 2025-06-18 and
 * 2025-11-25): access tokens are JWTs verified with jose against the issuer's
 * JWKS — signature, allowed algorithms, `iss`, `aud` containing the public
 * URL, `exp` and `nbf`, the `typ` header RFC 9068 gives access tokens — with
 * the key set's size bounded, and the Protected Resource Metadata (RFC 9728)
 * that tells clients which issuer to ask. No cryptography is written here.
 */
import { discoverAuthorizationServerMetadata } from "@modelcontextprotocol/client";
import type { OAuthProtectedResourceMetadata } from "@modelcontextprotocol/server";
import { createRemoteJWKSet, customFetch, errors, jwtVerify, type JWTPayload } from "jose";
import { formatCount } from "../../kernel/bounded.js";

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

/** The `typ` header RFC 9068 §2.1 gives JWT access tokens (jose also accepts `application/at+jwt`). */
const ACCESS_TOKEN_TYP = "at+jwt";
/** The --oauth-token-type value that accepts any `typ`, or none, for issuers that do not set RFC 9068's. */
const ANY_TYP = "any";

/**
 * Bytes of a key set read at most. A real JWKS holds a handful of keys (a few KiB); reading an
 * issuer's answer whole, whatever its size, let one bad or hostile key set take the server's memory.
 */
export const JWKS_MAX_BYTES = 1024 * 1024;

/** What a valid access token says: who, through which client, with which scopes, until when. */
export interface JwtGrant {
  /** `sub`, when the token has one. */
  readonly subject?: string;
  /** `client_id` (RFC 9068), else `azp`, when the token has one. */
  readonly clientId?: string;
  readonly scopes: readonly string[];
  /** Seconds since the epoch. */
  readonly expiresAt: number;
}

/** A token refused for a reason added in the fourth review (issue 28), as a value; `tokenProblemText` words it. */
export type TokenProblem =
  | { kind: "typ"; expected: string; got: string | undefined }
  | { kind: "noOwner" }
  | { kind: "keySetTooLarge"; limitBytes: number };

/** The one wording of a TokenProblem, safe to send (it names no token and no key). */
function tokenProblemText(p: TokenProblem): string {
  switch (p.kind) {
    case "typ":
      return `The access token's typ header is ${p.got === undefined ? "missing" : "not accepted"}; ${p.expected} (RFC 9068) is expected`;
    case "noOwner":
      return "The access token names neither a subject (sub) nor a client (client_id or azp), so no session can be bound to its owner";
    case "keySetTooLarge":
      return `The issuer's key set is larger than ${formatCount(p.limitBytes)} bytes, so the access token could not be checked`;
  }
}

/** A token that is not accepted, with a description safe to send (it never quotes the token). */
export class TokenRejected extends Error {
  override readonly name = "TokenRejected";
  /** @param unavailable true when the token could not be checked (the key set was unreachable), not that it is bad */
  constructor(
    readonly description: string,
    readonly unavailable = false,
    readonly problem?: TokenProblem,
  ) {
    super(description);
  }

  /** The rejection for `problem`; a key set that cannot be used leaves the token unjudged (503), not bad. */
  static of(problem: TokenProblem): TokenRejected {
    return new TokenRejected(tokenProblemText(problem), problem.kind === "keySetTooLarge", problem);
  }
}

/** The key set's answer was over JWKS_MAX_BYTES; reading stopped there. */
class KeySetTooLarge extends Error {}

/**
 * fetch for jose's key set, reading at most `maxBytes` of the answer: a larger one (by its
 * Content-Length or as it streams) is dropped unread, logged, and thrown as KeySetTooLarge.
 */
function cappedFetch(maxBytes: number, log: (line: string) => void): typeof fetch {
  const refuse = async (url: string, body: ReadableStream<Uint8Array> | null): Promise<never> => {
    await body?.cancel().catch(() => undefined);
    log(
      `OAuth: the key set at ${url} is larger than ${formatCount(maxBytes)} bytes; refused unread, so tokens cannot be checked (503) until it is smaller`,
    );
    throw new KeySetTooLarge();
  };
  return async (input, init) => {
    const response = await fetch(input, init);
    const url = String(input instanceof Request ? input.url : input);
    // jose refuses anything but 200 without reading the body.
    if (response.status !== 200) {
      await response.body?.cancel().catch(() => undefined);
      return response;
    }
    if (Number(response.headers.get("content-length") ?? 0) > maxBytes) return refuse(url, response.body);
    const chunks: Uint8Array[] = [];
    let total = 0;
    if (response.body !== null) {
      for await (const chunk of response.body) {
        total += chunk.byteLength;
        if (total > maxBytes) return refuse(url, response.body);
        chunks.push(chunk);
      }
    }
    return new Response(Buffer.concat(chunks), { status: 200, headers: response.headers });
  };
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
  if (error instanceof TokenRejected) return error;
  if (error instanceof KeySetTooLarge) return TokenRejected.of({ kind: "keySetTooLarge", limitBytes: JWKS_MAX_BYTES });
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

/** How tokens are judged beyond issuer and audience. */
export interface VerifierOptions {
  /** The `typ` header required (compared as jose does, `application/` optional), or ANY_TYP. @default ACCESS_TOKEN_TYP */
  readonly typ?: string;
  /** Where a refused key set is reported. */
  readonly log?: (line: string) => void;
  /** @default JWKS_MAX_BYTES */
  readonly jwksMaxBytes?: number;
}

/** A verifier for tokens of `issuer` (exactly as configured) meant for `publicUrl`, with keys from `jwksUrl`. */
export function jwtVerifier(issuer: string, jwksUrl: string, publicUrl: string, options: VerifierOptions = {}): JwtVerifier {
  const keys = createRemoteJWKSet(new URL(jwksUrl), {
    timeoutDuration: 5_000,
    cooldownDuration: 30_000,
    cacheMaxAge: 10 * 60_000,
    [customFetch]: cappedFetch(options.jwksMaxBytes ?? JWKS_MAX_BYTES, options.log ?? (() => undefined)),
  });
  const audience = audiences(publicUrl);
  const typ = options.typ ?? ACCESS_TOKEN_TYP;
  return {
    async verify(token) {
      let payload: JWTPayload;
      try {
        const verified = await jwtVerify(token, keys, {
          issuer,
          audience,
          algorithms: ALLOWED_ALGORITHMS,
          clockTolerance: CLOCK_TOLERANCE_S,
          requiredClaims: ["exp"],
        });
        // Checked here rather than by jose's `typ` option, so the refusal can say what was expected.
        const got = verified.protectedHeader.typ;
        if (typ !== ANY_TYP && (got === undefined || normalTyp(got) !== normalTyp(typ))) throw TokenRejected.of({ kind: "typ", expected: typ, got });
        payload = verified.payload;
      } catch (error) {
        throw rejection(error);
      }
      const clientId = payload.client_id ?? payload.azp;
      return {
        ...(typeof payload.sub === "string" && { subject: payload.sub }),
        ...(typeof clientId === "string" && { clientId }),
        scopes: scopesOf(payload),
        expiresAt: payload.exp as number,
      };
    },
  };
}

// RFC 7515 §4.1.9: a media type, its `application/` prefix optional, compared without regard to case.
const normalTyp = (typ: string): string => {
  const lower = typ.toLowerCase();
  return lower.startsWith("application/") ? lower.slice("application/".length) : lower;
};

/**
 * The owner a token's sessions are bound to: its subject and client, encoded so that no two different
 * pairs give the same text (`a:b`/`c` and `a`/`b:c` differ); undefined when it has neither.
 */
export function jwtOwner(grant: Pick<JwtGrant, "subject" | "clientId">): string | undefined {
  if (grant.subject === undefined && grant.clientId === undefined) return undefined;
  return `jwt:${JSON.stringify([grant.subject ?? null, grant.clientId ?? null])}`;
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
