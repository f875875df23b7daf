/**
 * Authentication of the HTTP mode (SPEC §17) against a real issuer on
 * 127.0.0.1: a key pair generated here, its JWKS and RFC 8414 metadata
 * served by a local server, tokens signed with jose. Static tokens
 * (missing, wrong, read-only), every way a JWT can be wrong, the RFC 9728
 * metadata documents, and that no token is ever written to the log.
 */
import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { discoverOAuthProtectedResourceMetadata } from "@modelcontextprotocol/sdk/client/auth.js";
import { OAuthProtectedResourceMetadataSchema } from "@modelcontextprotocol/sdk/shared/auth.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { exportJWK, generateKeyPair, SignJWT, UnsecuredJWT, type CryptoKey, type JWTPayload } from "jose";
import { NodeStreamableHTTPServerTransport } from "@modelcontextprotocol/node";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { tempDir } from "../../../support/fixtures.js";
import { connectHttp, INITIALIZE, mcpHeaders, startHttp, type Running } from "../../../support/http.js";

let root: string;
let remove: () => Promise<void>;
let issuerServer: http.Server;
let issuer: string;
let signing: CryptoKey;
let stranger: CryptoKey;
let running: Running;
const writeToken = randomBytes(32).toString("base64url");
const readToken = randomBytes(32).toString("base64url");
const seenTokens: string[] = [writeToken, readToken];

beforeAll(async () => {
  ({ dir: root, remove } = await tempDir("bfs-auth-"));
  await writeFile(path.join(root, "a.txt"), "alpha\n");
  const tokens = path.join(root, "tokens");
  await writeFile(tokens, `# the team's tokens\n${writeToken}\n\n${readToken} read-only\n`, { mode: 0o600 });
  const pair = await generateKeyPair("ES256");
  signing = pair.privateKey;
  stranger = (await generateKeyPair("ES256")).privateKey;
  const jwk = { ...(await exportJWK(pair.publicKey)), kid: "k1", alg: "ES256", use: "sig" };
  issuerServer = http.createServer((req, res) => {
    const metadata = {
      issuer,
      authorization_endpoint: `${issuer}/authorize`,
      token_endpoint: `${issuer}/token`,
      response_types_supported: ["code"],
      jwks_uri: `${issuer}/jwks`,
    };
    const body = req.url === "/.well-known/oauth-authorization-server" ? metadata : req.url === "/jwks" ? { keys: [jwk] } : undefined;
    res.writeHead(body ? 200 : 404, { "Content-Type": "application/json" }).end(JSON.stringify(body ?? {}));
  });
  await new Promise<void>((resolve) => issuerServer.listen(0, "127.0.0.1", resolve));
  issuer = `http://127.0.0.1:${(issuerServer.address() as AddressInfo).port}`;
  running = await startHttp([root], ["--auth-token-file", tokens, "--oauth-issuer", issuer]);
});

afterAll(async () => {
  await running?.stop();
  await new Promise((resolve) => issuerServer?.close(resolve));
  await remove?.();
});

const now = () => Math.floor(Date.now() / 1000);

/** A token signed by the issuer's key unless `key` says otherwise, with sane claims that `claims` may change. */
async function jwt(claims: JWTPayload = {}, key: CryptoKey = signing, header: { kid?: string } = {}): Promise<string> {
  const payload: JWTPayload = {
    iss: issuer,
    aud: running.url,
    sub: "user-1",
    client_id: "client-1",
    scope: "fs:read fs:write",
    iat: now(),
    exp: now() + 600,
    ...claims,
  };
  const token = await new SignJWT(payload).setProtectedHeader({ alg: "ES256", kid: header.kid ?? "k1", typ: "at+jwt" }).sign(key);
  seenTokens.push(token);
  return token;
}

/** POSTs an initialize with `authorization`; returns status, the challenge and the body. */
async function initialize(authorization?: string) {
  const res = await fetch(running.url, {
    method: "POST",
    headers: mcpHeaders(authorization ? { Authorization: authorization } : {}),
    body: INITIALIZE,
  });
  const body = await res.text();
  return { status: res.status, challenge: res.headers.get("www-authenticate"), body };
}

const metadataUrl = () => new URL("/.well-known/oauth-protected-resource/mcp", running.url).href;
const text = (result: CallToolResult) => (result.content[0]?.type === "text" ? result.content[0].text : "");

describe("static tokens", () => {
  it("a request without a token gets 401 naming the metadata and the scopes, with no error code (RFC 6750 §3.1)", async () => {
    const { status, challenge, body } = await initialize();
    expect(status).toBe(401);
    expect(challenge).toBe(`Bearer scope="fs:read fs:write", resource_metadata="${metadataUrl()}"`);
    expect(JSON.parse(body)).toEqual({ error_description: "This server needs a bearer token: send Authorization: Bearer <token>" });
  });

  it("a wrong token and a malformed header get 401 invalid_token, quoting neither", async () => {
    const wrong = randomBytes(32).toString("base64url");
    seenTokens.push(wrong);
    for (const header of [`Bearer ${wrong}`, `Basic ${wrong}`, `Bearer ${writeToken}x`]) {
      const { status, challenge, body } = await initialize(header);
      expect(status).toBe(401);
      expect(challenge).toMatch(/^Bearer error="invalid_token", error_description="[^"]+", scope="fs:read fs:write", resource_metadata="/);
      expect(body).not.toContain(wrong);
      expect(body).not.toContain(writeToken);
    }
  });

  it("a token from the file opens a session that may write", async () => {
    const session = await connectHttp(running.url, { headers: { Authorization: `Bearer ${writeToken}` } });
    try {
      const names = (await session.client.listTools()).tools.map((t) => t.name);
      expect(names).toContain("write_file");
      const wrote = (await session.client.callTool({
        name: "write_file",
        arguments: { path: path.join(root, "w.txt"), content: "w" },
      })) as CallToolResult;
      expect(text(wrote)).toBe(`Successfully wrote to ${path.join(root, "w.txt")}`);
      expect(session.client.getInstructions()).toContain("A change returns 'Successfully");
    } finally {
      await session.close();
    }
  });

  it("a read-only token sees only the reading tools, and a write is refused naming the scope, writing nothing", async () => {
    const session = await connectHttp(running.url, { headers: { Authorization: `Bearer ${readToken}` } });
    try {
      const tools = (await session.client.listTools()).tools;
      expect(tools.length).toBeGreaterThan(0);
      for (const tool of tools) expect(tool.annotations?.readOnlyHint, tool.name).toBe(true);
      // Its instructions, too, say nothing of the changes it may not make.
      expect(session.client.getInstructions()).toContain("Symlinks leading outside are refused");
      expect(session.client.getInstructions()).not.toContain("A change returns");
      const target = path.join(root, "never.txt");
      const refused = (await session.client.callTool({ name: "write_file", arguments: { path: target, content: "x" } })) as CallToolResult;
      expect(refused.isError).toBe(true);
      expect(text(refused)).toMatch(/^write_file changes files, which needs write access \(OAuth scope fs:write, or a token not marked read-only\)/);
      await expect(import("node:fs/promises").then((fs) => fs.stat(target))).rejects.toThrow(/ENOENT/);
      expect(text((await session.client.callTool({ name: "read_text_file", arguments: { path: path.join(root, "a.txt") } })) as CallToolResult)).toBe(
        "alpha\n",
      );
    } finally {
      await session.close();
    }
  });

  it("hands the SDK's transport, and with it the tools, requests without the Authorization header", async () => {
    const seen: string[][] = [];
    const handle = NodeStreamableHTTPServerTransport.prototype.handleRequest;
    const captured = vi.spyOn(NodeStreamableHTTPServerTransport.prototype, "handleRequest").mockImplementation(function (
      this: NodeStreamableHTTPServerTransport,
      req,
      res,
      body,
    ) {
      seen.push([...req.rawHeaders, JSON.stringify(req.headers)]);
      return handle.call(this, req, res, body);
    });
    try {
      const session = await connectHttp(running.url, { headers: { Authorization: `Bearer ${writeToken}` } });
      await session.client.callTool({ name: "list_allowed_directories", arguments: {} });
      await session.close();
    } finally {
      captured.mockRestore();
    }
    expect(seen.length).toBeGreaterThan(1);
    for (const headers of seen) {
      expect(headers.join("\n").toLowerCase()).not.toContain("authorization");
      expect(headers.join("\n")).not.toContain(writeToken);
    }
  });

  it("a session opened with one token is not found with another", async () => {
    const session = await connectHttp(running.url, { headers: { Authorization: `Bearer ${writeToken}` } });
    try {
      const res = await fetch(running.url, {
        method: "POST",
        headers: mcpHeaders({ Authorization: `Bearer ${readToken}`, "mcp-session-id": session.transport.sessionId as string }),
        body: JSON.stringify({ jsonrpc: "2.0", id: 5, method: "tools/list" }),
      });
      expect(res.status).toBe(404);
    } finally {
      await session.close();
    }
  });
});

describe("OAuth access tokens (JWT)", () => {
  it("a valid token opens a session; fs:read alone gives the reading tools only", async () => {
    const full = await connectHttp(running.url, { headers: { Authorization: `Bearer ${await jwt()}` } });
    const reader = await connectHttp(running.url, { headers: { Authorization: `Bearer ${await jwt({ scope: "fs:read", sub: "user-2" })}` } });
    try {
      expect((await full.client.listTools()).tools.map((t) => t.name)).toContain("edit_file");
      const readerTools = (await reader.client.listTools()).tools.map((t) => t.name);
      expect(readerTools).toContain("read_text_file");
      expect(readerTools).not.toContain("edit_file");
      const refused = (await reader.client.callTool({ name: "create_directory", arguments: { path: path.join(root, "nope") } })) as CallToolResult;
      expect(refused.isError).toBe(true);
    } finally {
      await full.close();
      await reader.close();
    }
  });

  it("accepts scp as an array, as some issuers write it", async () => {
    const { status } = await initialize(`Bearer ${await jwt({ scope: undefined, scp: ["fs:read"] })}`);
    expect(status).toBe(200);
  });

  const bad: [string, () => Promise<string>, RegExp][] = [
    ["expired", () => jwt({ exp: now() - 120 }), /has expired/],
    ["not yet valid", () => jwt({ nbf: now() + 600 }), /not valid yet \(nbf\)/],
    ["from another issuer", () => jwt({ iss: "https://elsewhere.example" }), /another issuer \(iss\)/],
    ["for another audience", () => jwt({ aud: "https://other.example/mcp" }), /not issued for this server \(aud\)/],
    ["signed by another key", () => jwt({}, stranger), /signature does not verify/],
    ["signed by an unknown key id", () => jwt({}, stranger, { kid: "k2" }), /key the issuer does not publish/],
    ["without exp", () => jwt({ exp: undefined }), /exp claim is missing/],
    [
      "unsigned (alg none)",
      async () => new UnsecuredJWT({ iss: issuer, aud: running.url, sub: "x", scope: "fs:write", exp: now() + 600 }).encode(),
      /algorithm is not accepted|not a well-formed JWT/,
    ],
    [
      "HS256 with a shared secret",
      async () =>
        new SignJWT({ iss: issuer, aud: running.url, scope: "fs:write", exp: now() + 600 })
          .setProtectedHeader({ alg: "HS256", kid: "k1" })
          .sign(new TextEncoder().encode("s".repeat(32))),
      /algorithm is not accepted/,
    ],
  ];
  it.each(bad)("a token %s gets 401 invalid_token saying why", async (_label, make, reason) => {
    const token = await make();
    seenTokens.push(token);
    const { status, challenge, body } = await initialize(`Bearer ${token}`);
    expect(status).toBe(401);
    expect(challenge).toMatch(/^Bearer error="invalid_token", /);
    expect(challenge).toContain(`resource_metadata="${metadataUrl()}"`);
    expect(JSON.parse(body).error_description).toMatch(reason);
    expect(body).not.toContain(token);
  });

  it("a token with neither fs scope gets 403 insufficient_scope naming fs:read", async () => {
    const { status, challenge } = await initialize(`Bearer ${await jwt({ scope: "openid profile" })}`);
    expect(status).toBe(403);
    expect(challenge).toMatch(/^Bearer error="insufficient_scope", error_description="[^"]+", scope="fs:read", resource_metadata="/);
  });

  it("answers 503 without a challenge when the issuer's key set cannot be fetched", async () => {
    const dead = http.createServer();
    await new Promise<void>((resolve) => dead.listen(0, "127.0.0.1", resolve));
    const deadUrl = `http://127.0.0.1:${(dead.address() as AddressInfo).port}/jwks`;
    await new Promise((resolve) => dead.close(resolve));
    const blind = await startHttp([root], ["--oauth-issuer", issuer, "--oauth-jwks-url", deadUrl]);
    try {
      const token = await jwt({ aud: blind.url });
      const res = await fetch(blind.url, { method: "POST", headers: mcpHeaders({ Authorization: `Bearer ${token}` }), body: INITIALIZE });
      expect(res.status).toBe(503);
      expect(res.headers.get("www-authenticate")).toBeNull();
      expect(((await res.json()) as { error_description: string }).error_description).toMatch(/key set could not be fetched/);
    } finally {
      await blind.stop();
    }
  });
});

describe("Protected Resource Metadata (RFC 9728)", () => {
  it("is served at the path-suffixed and the root well-known paths without a token, naming the issuer and scopes", async () => {
    for (const where of ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"]) {
      const res = await fetch(new URL(where, running.url));
      expect(res.status).toBe(200);
      const document = OAuthProtectedResourceMetadataSchema.parse(await res.json());
      expect(document).toEqual({
        resource: running.url,
        authorization_servers: [issuer],
        scopes_supported: ["fs:read", "fs:write"],
        bearer_methods_supported: ["header"],
        resource_name: "bounded-filesystem-mcp",
      });
    }
  });

  it("is what the SDK's own OAuth client discovers from the server URL", async () => {
    const found = await discoverOAuthProtectedResourceMetadata(running.url);
    expect(found.authorization_servers).toEqual([issuer]);
    expect(found.resource).toBe(running.url);
  });

  it("leaves /healthz open and writes no token to the log", async () => {
    expect((await fetch(new URL("/healthz", running.url))).status).toBe(200);
    const log = running.lines.join("\n");
    expect(log).toMatch(/Session [0-9a-f]{8} opened/);
    for (const token of seenTokens) expect(log).not.toContain(token);
  });
});
