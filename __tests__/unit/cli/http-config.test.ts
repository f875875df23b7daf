/** The HTTP flags of SPEC §17 as parseCommand reads them: values, defaults, precedence and every refusal. */
import { describe, expect, it } from "vitest";
import { parseCommand, UsageError } from "../../../src/cli/config.js";
import { isLoopback } from "../../../src/transports/http/settings.js";

const http = (argv: string[], env: Record<string, string> = {}) => {
  const command = parseCommand([...argv, "/srv"], env);
  if (command.kind !== "serve" || !command.http) throw new Error("expected HTTP settings");
  return command.http;
};

const refusal = (argv: string[], env: Record<string, string> = {}): string => {
  try {
    parseCommand([...argv, "/srv"], env);
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  throw new Error("expected a UsageError");
};

const TOKENS = ["--auth-token-file", "/etc/bfs-tokens"];

describe("--http [HOST:]PORT", () => {
  it("defaults the host to 127.0.0.1 and every other setting", () => {
    expect(http(["--http", "8080"])).toEqual({
      host: "127.0.0.1",
      port: 8080,
      loopback: true,
      stateless: false,
      sessionIdleSeconds: 1800,
      maxSessions: 64,
      maxConnections: 1024,
      allowedOrigins: [],
    });
    expect(parseCommand(["/srv"], {})).not.toHaveProperty("http");
  });

  it.each([
    ["0.0.0.0:9000", "0.0.0.0", 9000, false],
    ["[::1]:9000", "::1", 9000, true],
    ["[::]:1", "::", 1, false],
    ["localhost:0", "localhost", 0, true],
    ["127.0.0.2:80", "127.0.0.2", 80, true],
    ["fs.internal:443", "fs.internal", 443, false],
  ])("reads %s", (value, host, port, loopback) => {
    expect(http(["--http", value, ...TOKENS])).toMatchObject({ host, port, loopback });
  });

  it.each(["", "abc", "65536", ":80", "1.2.3.4:", "[::1]", "::1:80", "[zz::]:80", "host name:80", "-1"])("refuses %j naming the flag", (value) => {
    expect(refusal([`--http=${value}`])).toBe(
      `bounded-filesystem-mcp: invalid value for --http: ${JSON.stringify(value)} (expected [HOST:]PORT, e.g. 8080, 0.0.0.0:8080 or [::1]:8080)`,
    );
  });

  it("is read from BOUNDED_FS_HTTP, the flag winning", () => {
    expect(http([], { BOUNDED_FS_HTTP: "7000" }).port).toBe(7000);
    expect(http(["--http", "7001"], { BOUNDED_FS_HTTP: "7000" }).port).toBe(7001);
    expect(refusal([], { BOUNDED_FS_HTTP: "x" })).toMatch(/invalid value for BOUNDED_FS_HTTP: "x"/);
  });

  it("needs a directory: over HTTP the directories are the ceiling", () => {
    expect(() => parseCommand(["--http", "8080"], {})).toThrow(/--http needs at least one DIR/);
  });

  it("knows its loopback addresses", () => {
    for (const host of ["127.0.0.1", "127.255.0.9", "::1", "localhost", "LOCALHOST"]) expect(isLoopback(host)).toBe(true);
    for (const host of ["0.0.0.0", "::", "10.0.0.1", "128.0.0.1", "localhost.example", "::2"]) expect(isLoopback(host)).toBe(false);
  });
});

describe("authentication is required off loopback", () => {
  it("refuses a non-loopback bind without tokens or OAuth, naming both flags", () => {
    expect(refusal(["--http", "0.0.0.0:8080"])).toBe(
      "bounded-filesystem-mcp: --http 0.0.0.0:8080 listens on 0.0.0.0, which other machines can reach, so clients must " +
        "authenticate: pass --auth-token-file FILE or --oauth-issuer URL (or bind 127.0.0.1)",
    );
    expect(refusal([], { BOUNDED_FS_HTTP: "10.1.2.3:80" })).toMatch(/^bounded-filesystem-mcp: BOUNDED_FS_HTTP 10\.1\.2\.3:80 listens on/);
  });

  it("accepts it with a token file or an issuer", () => {
    expect(http(["--http", "0.0.0.0:8080", ...TOKENS]).authTokenFile).toBe("/etc/bfs-tokens");
    const oauth = http(["--http", "10.0.0.5:8080", "--oauth-issuer", "https://auth.example.com/"]);
    expect(oauth.oauthIssuer).toBe("https://auth.example.com/");
  });

  it("keeps the issuer exactly as given, since it is compared with each token's iss", () => {
    expect(http(["--http", "1", "--oauth-issuer", "https://auth.example.com/realms/x"]).oauthIssuer).toBe("https://auth.example.com/realms/x");
  });

  it("needs --public-url for OAuth on a wildcard bind, whose address names no audience", () => {
    expect(refusal(["--http", "0.0.0.0:8080", "--oauth-issuer", "https://auth.example.com"])).toMatch(/--oauth-issuer needs --public-url/);
    expect(
      http(["--http", "0.0.0.0:8080", "--oauth-issuer", "https://auth.example.com", "--public-url", "https://fs.example.com/mcp"]).publicUrl,
    ).toBe("https://fs.example.com/mcp");
  });

  it("refuses plain http URLs except towards this machine, and URLs with a query or fragment", () => {
    expect(refusal(["--http", "1", "--oauth-issuer", "http://auth.example.com"])).toMatch(
      /with https \(plain http is accepted only for this machine\)/,
    );
    expect(http(["--http", "1", "--oauth-issuer", "http://127.0.0.1:9/"]).oauthIssuer).toBe("http://127.0.0.1:9/");
    expect(refusal(["--http", "1", "--public-url", "https://fs.example.com/mcp?x=1"])).toMatch(/without a query or fragment/);
    expect(refusal(["--http", "1", "--public-url", "fs.example.com"])).toMatch(/an absolute http\(s\) URL/);
    expect(refusal(["--http", "1", "--oauth-jwks-url", "ftp://x/jwks", "--oauth-issuer", "https://a.example"])).toMatch(
      /invalid value for --oauth-jwks-url/,
    );
  });

  it("refuses a JWKS URL without an issuer and an empty token file name", () => {
    expect(refusal(["--http", "1", "--oauth-jwks-url", "https://a.example/jwks"])).toMatch(/--oauth-jwks-url needs --oauth-issuer/);
    expect(refusal(["--http", "1", "--auth-token-file="])).toMatch(/invalid value for --auth-token-file: "" \(expected a file\)/);
  });
});

describe("--oauth-token-type (issue 28 row 8)", () => {
  const ISSUER = ["--http", "1", "--oauth-issuer", "https://a.example"];
  it("is absent unless given (the verifier then requires at+jwt), and takes a typ or any, from the flag or the environment", () => {
    expect(http(ISSUER)).not.toHaveProperty("oauthTokenType");
    expect(http([...ISSUER, "--oauth-token-type", "any"]).oauthTokenType).toBe("any");
    expect(http(ISSUER, { BOUNDED_FS_OAUTH_TOKEN_TYPE: "application/jwt" }).oauthTokenType).toBe("application/jwt");
  });

  it("refuses a value that is no media type, and the flag without an issuer", () => {
    expect(refusal([...ISSUER, "--oauth-token-type", "at jwt"])).toMatch(/invalid value for --oauth-token-type: "at jwt" \(expected a JWT typ/);
    expect(refusal(["--http", "1", "--oauth-token-type", "JWT"])).toMatch(/--oauth-token-type needs --oauth-issuer/);
  });
});

describe("the other HTTP flags", () => {
  it("reads sessions, stateless, origins and TLS from flags and variables", () => {
    const settings = http(
      ["--http", "1", "--session-idle-s", "60", "--max-sessions=3", "--stateless", "--allowed-origins", "https://a.example, https://B.example:8443"],
      { BOUNDED_FS_TLS_CERT: "/c.pem", BOUNDED_FS_TLS_KEY: "/k.pem" },
    );
    expect(settings).toMatchObject({
      sessionIdleSeconds: 60,
      maxSessions: 3,
      stateless: true,
      allowedOrigins: ["https://a.example", "https://b.example:8443"],
      tlsCert: "/c.pem",
      tlsKey: "/k.pem",
    });
    expect(http(["--http", "1"], { BOUNDED_FS_STATELESS: "1" }).stateless).toBe(true);
  });

  it("reads --max-connections from the flag or its variable, and refuses what is not a positive whole number", () => {
    expect(http(["--http", "1", "--max-connections", "50"]).maxConnections).toBe(50);
    expect(http(["--http", "1"], { BOUNDED_FS_MAX_CONNECTIONS: "7" }).maxConnections).toBe(7);
    expect(refusal(["--http", "1", "--max-connections", "0"])).toMatch(/--max-connections/);
  });

  it("reads --instance-name, the prefix of the session ids a balancer routes on, from the flag or its variable", () => {
    expect(http(["--http", "1", "--instance-name", "mcp-2"]).instanceName).toBe("mcp-2");
    expect(http(["--http", "1"], { BOUNDED_FS_INSTANCE_NAME: "b" }).instanceName).toBe("b");
    expect(http(["--http", "1"]).instanceName).toBeUndefined();
  });

  it.each([
    [["--session-idle-s", "0"], /invalid value for --session-idle-s: "0"/],
    [["--max-sessions", "many"], /invalid value for --max-sessions: "many"/],
    [["--allowed-origins", "https://a.example/path"], /"https:\/\/a\.example\/path" is not one/],
    [["--allowed-origins", "*"], /"\*" is not one/],
    [["--tls-key", "/k.pem"], /--tls-key needs --tls-cert \(HTTPS needs both\)/],
    [["--stateless=yes"], /--stateless takes no value/],
    [["--instance-name", "a.b"], /invalid value for --instance-name: "a\.b" \(expected 1-32 letters, digits and dashes/],
    [["--instance-name", "x".repeat(33)], /invalid value for --instance-name/],
  ])("refuses %j", (flags, message) => {
    expect(refusal(["--http", "1", ...flags])).toMatch(message);
  });

  it("refuses an HTTP flag given without --http, but ignores HTTP variables then", () => {
    expect(refusal(["--max-sessions", "3"])).toBe(
      "bounded-filesystem-mcp: --max-sessions needs --http [HOST:]PORT (it only applies to the HTTP mode)",
    );
    expect(parseCommand(["/srv"], { BOUNDED_FS_MAX_SESSIONS: "3" })).not.toHaveProperty("http");
  });
});
