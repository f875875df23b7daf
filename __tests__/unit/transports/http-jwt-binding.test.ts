/**
 * JWT access tokens as issue 28 rows 8 and 9 found them: `typ` checked as RFC 9068 says
 * (and configurable), session owners that no two token identities share, tokens naming no
 * owner refused, and a key set read only up to its bound. The verifier and the Authenticator
 * run in process against an issuer on 127.0.0.1 serving its JWKS.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { type CryptoKey, exportJWK, generateKeyPair, type JWTPayload, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Authenticator, isRefused } from "../../../src/transports/http/auth.js";
import { JWKS_MAX_BYTES, jwtOwner, jwtVerifier, TokenRejected } from "../../../src/transports/http/oauth.js";

const AUDIENCE = "https://fs.example/mcp";
const META = "https://fs.example/.well-known/oauth-protected-resource/mcp";
let issuer: string;
let server: http.Server;
let signing: CryptoKey;
let jwkText: string;
// Bytes the issuer wrote of the oversized key sets, per path.
const written = new Map<string, number>();

const HUGE_BYTES = 256 * 1024 * 1024;
const CHUNK = Buffer.alloc(64 * 1024, 0x20);

/** Writes `total` bytes (a JSON key set padded with spaces) without holding them, waiting for the reader; stops when it goes away. */
async function stream(res: http.ServerResponse, path: string, total: number): Promise<void> {
  const head = Buffer.from(jwkText);
  res.write(head);
  let sent = head.length;
  res.on("close", () => written.set(path, sent));
  // Bounded: at most total / 64 KiB writes.
  while (sent + CHUNK.length <= total && !res.destroyed) {
    sent += CHUNK.length;
    if (!res.write(CHUNK)) {
      await new Promise<void>((resolve) => {
        const done = (): void => {
          res.off("drain", done).off("close", done);
          resolve();
        };
        res.on("drain", done).on("close", done);
      });
    }
  }
  res.end();
}

beforeAll(async () => {
  const pair = await generateKeyPair("ES256");
  signing = pair.privateKey;
  jwkText = JSON.stringify({ keys: [{ ...(await exportJWK(pair.publicKey)), kid: "k1", alg: "ES256", use: "sig" }] });
  server = http.createServer((req, res) => {
    if (req.url === "/jwks") return void res.writeHead(200, { "Content-Type": "application/json" }).end(jwkText);
    // Declared too large: refused by its Content-Length, nothing read.
    if (req.url === "/jwks-declared") {
      res.writeHead(200, { "Content-Type": "application/json", "Content-Length": String(HUGE_BYTES) });
      return void stream(res, req.url, HUGE_BYTES);
    }
    // Not declared (chunked): refused once 1 MiB has streamed in.
    if (req.url === "/jwks-chunked") {
      res.writeHead(200, { "Content-Type": "application/json" });
      return void stream(res, req.url, HUGE_BYTES);
    }
    // Just under the bound: read and used.
    if (req.url === "/jwks-padded") {
      const padded = jwkText.replace(/}$/, `${" ".repeat(JWKS_MAX_BYTES - jwkText.length - 1)}}`);
      return void res.writeHead(200, { "Content-Type": "application/json" }).end(padded);
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const now = (): number => Math.floor(Date.now() / 1000);

/** A token of the issuer; `typ: null` leaves the header out. */
async function token(claims: JWTPayload = {}, typ: string | null = "at+jwt"): Promise<string> {
  const payload: JWTPayload = { iss: issuer, aud: AUDIENCE, sub: "user-1", client_id: "client-1", scope: "fs:read", exp: now() + 600, ...claims };
  return new SignJWT(payload).setProtectedHeader({ alg: "ES256", kid: "k1", ...(typ !== null && { typ }) }).sign(signing);
}

async function rejection(verify: Promise<unknown>): Promise<TokenRejected> {
  const outcome = await verify.then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(outcome).toBeInstanceOf(TokenRejected);
  return outcome as TokenRejected;
}

describe("issue 28 row 8: typ is checked as RFC 9068 says", () => {
  it("accepts at+jwt and application/at+jwt in any case, and refuses a missing or other typ by default", async () => {
    const verifier = jwtVerifier(issuer, `${issuer}/jwks`, AUDIENCE);
    for (const typ of ["at+jwt", "application/at+jwt", "AT+JWT"]) {
      expect((await verifier.verify(await token({}, typ))).subject).toBe("user-1");
    }
    const missing = await rejection(verifier.verify(await token({}, null)));
    expect(missing.problem).toEqual({ kind: "typ", expected: "at+jwt", got: undefined });
    expect(missing.description).toMatch(/typ header is missing; at\+jwt \(RFC 9068\) is expected/);
    for (const typ of ["JWT", "id+jwt", "application/jwt"]) {
      const other = await rejection(verifier.verify(await token({}, typ)));
      expect(other.problem).toEqual({ kind: "typ", expected: "at+jwt", got: typ });
      expect(other.unavailable).toBe(false);
    }
  });

  it('takes another typ, or "any", for issuers that do not set RFC 9068\'s', async () => {
    const lax = jwtVerifier(issuer, `${issuer}/jwks`, AUDIENCE, { typ: "any" });
    for (const typ of [null, "JWT", "at+jwt"]) expect((await lax.verify(await token({}, typ))).clientId).toBe("client-1");
    const plain = jwtVerifier(issuer, `${issuer}/jwks`, AUDIENCE, { typ: "JWT" });
    expect((await plain.verify(await token({}, "jwt"))).subject).toBe("user-1");
    expect((await rejection(plain.verify(await token({}, null)))).problem?.kind).toBe("typ");
  });
});

describe("issue 28 row 8: session owners are encoded unambiguously", () => {
  it("a:b with c and a with b:c are different owners, and each is the one its token gets", async () => {
    expect(jwtOwner({ subject: "a:b", clientId: "c" })).not.toBe(jwtOwner({ subject: "a", clientId: "b:c" }));
    expect(jwtOwner({ subject: "a" })).not.toBe(jwtOwner({ clientId: "a" }));
    expect(jwtOwner({ subject: "", clientId: "x" })).not.toBe(jwtOwner({ clientId: "x" }));
    const auth = new Authenticator(undefined, jwtVerifier(issuer, `${issuer}/jwks`, AUDIENCE), META);
    const one = await auth.check(`Bearer ${await token({ sub: "a:b", client_id: "c" })}`);
    const two = await auth.check(`Bearer ${await token({ sub: "a", client_id: "b:c" })}`);
    expect(isRefused(one) || isRefused(two)).toBe(false);
    expect(isRefused(one) ? "" : one.principal).toBe('jwt:["a:b","c"]');
    expect(isRefused(two) ? "" : two.principal).toBe('jwt:["a","b:c"]');
  });

  it("a token with neither sub nor client_id/azp is refused 401, not given a shared owner", async () => {
    const auth = new Authenticator(undefined, jwtVerifier(issuer, `${issuer}/jwks`, AUDIENCE), META);
    const refused = await auth.check(`Bearer ${await token({ sub: undefined, client_id: undefined })}`);
    expect(isRefused(refused) && refused.status).toBe(401);
    expect(isRefused(refused) && refused.error).toBe("invalid_token");
    expect(isRefused(refused) && refused.description).toMatch(/neither a subject \(sub\) nor a client \(client_id or azp\)/);
    const byAzp = await auth.check(`Bearer ${await token({ sub: undefined, client_id: undefined, azp: "app" })}`);
    expect(isRefused(byAzp) ? "" : byAzp.principal).toBe('jwt:[null,"app"]');
  });
});

describe("issue 28 row 9: the key set is read only up to 1 MiB", () => {
  it.each(["/jwks-declared", "/jwks-chunked"])("a key set over the bound (%s) is refused, logged, and tokens fail closed (503)", async (path) => {
    const logged: string[] = [];
    const auth = new Authenticator(undefined, jwtVerifier(issuer, `${issuer}${path}`, AUDIENCE, { log: (line) => logged.push(line) }), META);
    const refused = await auth.check(`Bearer ${await token()}`);
    expect(isRefused(refused) && refused.status).toBe(503);
    expect(isRefused(refused) && refused.description).toBe(
      "The issuer's key set is larger than 1,048,576 bytes, so the access token could not be checked",
    );
    expect(logged).toEqual([
      expect.stringMatching(new RegExp(`^OAuth: the key set at ${issuer}${path} is larger than 1,048,576 bytes; refused unread`)),
    ]);
    // The issuer was stopped long before it could send its 256 MiB (what is left is the sockets' buffers).
    await expect.poll(() => written.get(path)).toBeDefined();
    expect(written.get(path)).toBeLessThan(64 * 1024 * 1024);
  });

  it("a key set just under the bound is read and used", async () => {
    const verifier = jwtVerifier(issuer, `${issuer}/jwks-padded`, AUDIENCE);
    expect((await verifier.verify(await token())).subject).toBe("user-1");
  });
});
