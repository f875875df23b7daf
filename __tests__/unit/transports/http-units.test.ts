/**
 * The pure rules of the HTTP mode, without a socket: the token file and
 * its constant-time matching, the challenges, Host and Origin, roots that
 * only narrow, the metadata URL, and RequestFlow's admission.
 */
import { describe, expect, it } from "vitest";
import { isLightRequest, RequestFlow } from "../../../src/transports/flow.js";
import { Authenticator, isRefused, mayWrite } from "../../../src/transports/http/auth.js";
import { allowedHostnames, hostAllowed, originAllowed } from "../../../src/transports/http/headers.js";
import { metadataUrl, protectedResourceMetadata, TokenRejected, type JwtVerifier } from "../../../src/transports/http/oauth.js";
import { parseTokenFile, TokenFileError } from "../../../src/transports/http/tokens.js";
import { narrowRoots } from "../../../src/server/roots.js";

const A = "a".repeat(32);
const B = `${"b".repeat(40)}+/=`;

describe("the token file", () => {
  it("reads tokens and read-only markers, skipping blank and comment lines", () => {
    const tokens = parseTokenFile(`# ops\n${A}\n\n  ${B}   read-only  \r\n`, "t");
    expect(tokens.size).toBe(2);
    expect(tokens.match(A)).toEqual({ line: 2, readOnly: false });
    expect(tokens.match(B)).toEqual({ line: 4, readOnly: true });
    expect(tokens.match(`${A}a`)).toBeUndefined();
    expect(tokens.match(A.slice(1))).toBeUndefined();
    expect(tokens.match("")).toBeUndefined();
  });

  it.each([
    [`${A}\n${"x".repeat(31)}`, "t, line 2: the token has 31 characters; at least 32 are needed"],
    [`${A} read-write`, 't, line 1: expected a token optionally followed by " read-only"'],
    [`${A} read-only extra`, 't, line 1: expected a token optionally followed by " read-only"'],
    [`${"é".repeat(40)}`, "t, line 1: a token may hold only A-Z a-z 0-9 - . _ ~ + / (and = at its end)"],
    ["# only a comment\n", "t: no token in the file (one per line, at least 32 characters)"],
  ])("refuses %j naming the line, never the token", (text, message) => {
    expect(() => parseTokenFile(text, "t")).toThrow(new TokenFileError(message));
  });
});

const verifier = (outcome: "ok" | "no-scope" | "expired" | "down"): JwtVerifier => ({
  async verify() {
    if (outcome === "expired") throw new TokenRejected("The access token has expired");
    if (outcome === "down") throw new TokenRejected("The issuer's key set could not be fetched to check the access token", true);
    return { subject: "s", clientId: "c", scopes: outcome === "ok" ? ["fs:read"] : ["email"], expiresAt: 1 };
  },
});

describe("the Authenticator", () => {
  const META = "https://fs.example/.well-known/oauth-protected-resource/mcp";

  it("lets everything in when no authentication is configured", async () => {
    const none = new Authenticator(undefined, undefined, undefined);
    expect(none.required).toBe(false);
    expect(await none.check(undefined)).toEqual({ auth: undefined, principal: "anonymous" });
    expect(mayWrite(undefined)).toBe(true);
  });

  it("grants static tokens their scopes, without keeping the token", async () => {
    const auth = new Authenticator(parseTokenFile(`${A}\n${B} read-only`, "t"), undefined, undefined);
    const writer = await auth.check(`Bearer ${A}`);
    expect(writer).toEqual({ auth: { token: "", clientId: "token-file line 1", scopes: ["fs:read", "fs:write"] }, principal: "token:1" });
    const reader = await auth.check(`bearer   ${B}`);
    expect(isRefused(reader) ? undefined : reader.auth?.scopes).toEqual(["fs:read"]);
    expect(isRefused(reader) ? true : mayWrite(reader.auth)).toBe(false);
  });

  it("challenges like RFC 6750: no error code without a token, a realm without OAuth", async () => {
    const staticOnly = new Authenticator(parseTokenFile(A, "t"), undefined, undefined);
    const missing = await staticOnly.check(undefined);
    expect(isRefused(missing) && staticOnly.challenge(missing)).toBe('Bearer realm="bounded-filesystem-mcp"');
    const wrong = await staticOnly.check(`Bearer ${B}`);
    expect(isRefused(wrong) && staticOnly.challenge(wrong)).toBe(
      'Bearer realm="bounded-filesystem-mcp", error="invalid_token", error_description="The token is not valid for this server"',
    );
  });

  it("maps OAuth outcomes to 401, 403 and 503 with the metadata URL", async () => {
    const cases: [Parameters<typeof verifier>[0], number, string | undefined][] = [
      [
        "expired",
        401,
        `Bearer error="invalid_token", error_description="The access token has expired", scope="fs:read fs:write", resource_metadata="${META}"`,
      ],
      [
        "no-scope",
        403,
        `Bearer error="insufficient_scope", error_description="The access token grants neither fs:read nor fs:write", scope="fs:read", resource_metadata="${META}"`,
      ],
      ["down", 503, undefined],
    ];
    for (const [outcome, status, challenge] of cases) {
      const auth = new Authenticator(undefined, verifier(outcome), META);
      const result = await auth.check("Bearer x.y.z");
      expect(isRefused(result) && result.status).toBe(status);
      expect(isRefused(result) && auth.challenge(result)).toBe(challenge);
    }
    const ok = await new Authenticator(undefined, verifier("ok"), META).check("Bearer x.y.z");
    expect(ok).toEqual({ auth: { token: "", clientId: "c", scopes: ["fs:read"], expiresAt: 1 }, principal: 'jwt:["s","c"]' });
    const notJwt = await new Authenticator(undefined, verifier("ok"), META).check("Bearer opaque-token");
    expect(isRefused(notJwt) && notJwt.status).toBe(401);
  });
});

describe("Host and Origin", () => {
  it("allows the bind, the loopback names and the public host, by hostname only", () => {
    const loop = allowedHostnames("127.0.0.1", "https://fs.example.com/mcp", []);
    for (const host of ["127.0.0.1:1", "localhost", "LOCALHOST:9", "[::1]:80", "fs.example.com", "fs.example.com:443"])
      expect(hostAllowed(host, loop), host).toBe(true);
    for (const host of [undefined, "", "evil.example", "fs.example.com.evil.example", "127.0.0.1.nip.io", "a b"])
      expect(hostAllowed(host, loop), String(host)).toBe(false);
    const wild = allowedHostnames("0.0.0.0", "http://localhost:1/mcp", ["10.0.0.7", "fe80::1", "box"]);
    for (const host of ["10.0.0.7:8080", "[fe80::1]:8080", "box:1", "localhost"]) expect(hostAllowed(host, wild), host).toBe(true);
    expect(hostAllowed("10.0.0.8", wild)).toBe(false);
    const one = allowedHostnames("10.0.0.7", "http://10.0.0.7:1/mcp", ["10.0.0.8"]);
    expect([hostAllowed("10.0.0.8", one), hostAllowed("localhost", one)]).toEqual([false, false]);
  });

  it("allows no Origin, the server's own, and the listed ones", () => {
    expect(originAllowed(undefined, [], [])).toBe(true);
    expect(originAllowed("https://app.example", ["https://app.example"], [])).toBe(true);
    expect(originAllowed("http://127.0.0.1:5", [], ["http://127.0.0.1:5"])).toBe(true);
    expect(originAllowed("https://evil.example", ["https://app.example"], ["http://127.0.0.1:5"])).toBe(false);
    expect(originAllowed("null", ["https://app.example"], [])).toBe(false);
  });
});

describe("roots over HTTP only narrow", () => {
  const ceiling = ["/srv/data", "/srv/logs"];
  it.each([
    [["/srv/data/project"], ["/srv/data/project"], []],
    [["/srv/data", "/etc"], ["/srv/data"], ["/etc"]],
    [["/srv"], ["/srv/data", "/srv/logs"], []],
    [["/"], ["/srv/data", "/srv/logs"], []],
    [["/srv/database", "/srv/dat"], [], ["/srv/database", "/srv/dat"]],
    [["/srv/logs/a", "/srv/logs/a"], ["/srv/logs/a"], []],
  ])("%j → kept %j, ignored %j", (roots, kept, ignored) => {
    expect(narrowRoots(roots, ceiling)).toEqual({ kept, ignored });
  });
});

describe("metadata", () => {
  it("inserts the well-known path before the resource's path (RFC 9728 §3.1)", () => {
    expect(metadataUrl("https://fs.example.com/mcp")).toBe("https://fs.example.com/.well-known/oauth-protected-resource/mcp");
    expect(metadataUrl("https://fs.example.com/team/fs/mcp/")).toBe("https://fs.example.com/.well-known/oauth-protected-resource/team/fs/mcp");
    expect(metadataUrl("https://fs.example.com/")).toBe("https://fs.example.com/.well-known/oauth-protected-resource");
    expect(protectedResourceMetadata("https://fs.example.com/mcp", "https://auth.example.com").authorization_servers).toEqual([
      "https://auth.example.com",
    ]);
  });
});

describe("RequestFlow", () => {
  it("starts a light request (a ping, list_allowed_directories) at once while tool calls fill the bound (issue 28 row 13)", () => {
    const started: string[] = [];
    const flow = new RequestFlow<string>(
      (s) => started.push(s),
      () => 0,
      { maxInFlight: 2 },
    );
    const call = (name: string) => ({ method: "tools/call", params: { name } });
    for (const [id, m] of [
      [1, call("search_file_contents")],
      [2, call("search_file_contents")],
      [3, call("read_text_file")],
    ] as const)
      flow.admit(id, m.params.name, 10, isLightRequest(m));
    flow.admit(4, "ping", 10, isLightRequest({ method: "ping" }));
    flow.admit(5, "list_allowed_directories", 10, isLightRequest(call("list_allowed_directories")));
    expect(started).toEqual(["search_file_contents", "search_file_contents", "ping", "list_allowed_directories"]);
    expect([flow.inFlight, flow.queued]).toEqual([4, 1]);
    // Answered, a light request frees nothing the tool calls wait for; a tool call's answer does.
    flow.answered(4);
    flow.pump();
    expect(started).toHaveLength(4);
    flow.answered(1);
    flow.pump();
    expect(started.at(-1)).toBe("read_text_file");
  });

  it("starts light requests within a bound of their own and only while the output is under its mark", () => {
    const started: number[] = [];
    let unsent = 0;
    const flow = new RequestFlow<number>(
      (n) => started.push(n),
      () => unsent,
      { maxInFlight: 2, outputHighWater: 100 },
    );
    const ping = { method: "ping" };
    for (const id of [1, 2, 3]) flow.admit(id, id, 5, isLightRequest(ping));
    // Two light ones run (their bound), the third waits for one of them.
    expect(started).toEqual([1, 2]);
    flow.answered(1);
    flow.pump();
    expect(started).toEqual([1, 2, 3]);
    // Past the output mark nothing starts, light or not, until the client reads.
    unsent = 100;
    flow.admit(4, 4, 5, true);
    flow.admit(5, 5, 5);
    flow.admit(6, 6, 5, true);
    expect([started.length, flow.queued]).toEqual([3, 3]);
    // A light one cancelled while it waits is dropped, as a tool call is.
    expect(flow.forget(6)).toBe(true);
    expect([flow.queued, flow.inUse(6)]).toEqual([2, false]);
    unsent = 0;
    flow.answered(2);
    flow.answered(3);
    flow.pump();
    expect(started).toEqual([1, 2, 3, 4, 5]);
  });

  it("does not admit a request whose id waits or runs, light or not, until it is answered or forgotten", () => {
    const started: string[] = [];
    const flow = new RequestFlow<string>(
      (s) => started.push(s),
      () => 0,
      { maxInFlight: 1 },
    );
    expect(flow.admit(1, "first", 10)).toBe(true);
    expect(flow.admit(2, "waits", 10)).toBe(true);
    // Running (1) or waiting (2), light or not, and `"1"` is another id.
    expect([flow.admit(1, "again", 10), flow.admit(1, "ping", 10, true), flow.admit(2, "again", 10)]).toEqual([false, false, false]);
    expect(flow.admit("1", "string id", 10, true)).toBe(true);
    expect(started).toEqual(["first", "string id"]);
    expect([flow.inFlight, flow.queued]).toEqual([2, 1]);
    expect([flow.inUse(1), flow.inUse(2), flow.inUse(3)]).toEqual([true, true, false]);
    flow.answered(1);
    flow.pump();
    expect(started).toEqual(["first", "string id", "waits"]);
    expect(flow.admit(1, "reused", 10)).toBe(true);
    expect(flow.forget(1)).toBe(true);
    expect(flow.inUse(1)).toBe(false);
  });

  it("starts requests in order within the in-flight bound and the output mark, and forgets cancelled ones", async () => {
    const started: number[] = [];
    let unsent = 0;
    const fulls: boolean[] = [];
    const flow = new RequestFlow<number>(
      (n) => started.push(n),
      () => unsent,
      { maxInFlight: 2, outputHighWater: 100, queuedRequestBytes: 15 },
      (f) => fulls.push(f),
    );
    for (const id of [1, 2, 3, 4]) flow.admit(id, id, 5);
    expect(started).toEqual([1, 2]);
    expect([flow.inFlight, flow.queued, flow.full]).toEqual([2, 2, false]);
    unsent = 100;
    flow.answered(1);
    await Promise.resolve();
    expect(started).toEqual([1, 2]);
    unsent = 0;
    flow.pump();
    expect(started).toEqual([1, 2, 3]);
    expect(flow.forget(4)).toBe(true);
    expect(flow.forget(99)).toBe(false);
    flow.admit(5, 5, 20);
    expect(fulls).toEqual([true]);
    flow.answered(2);
    await Promise.resolve();
    expect(started).toEqual([1, 2, 3, 5]);
    expect(fulls).toEqual([true, false]);
    expect(flow.runningIds().sort()).toEqual([3, 5]);
  });
});
