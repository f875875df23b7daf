import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { DEFAULTS, parseCommand, UsageError, VERSION } from "../src/server/config.js";

const serve = (argv: string[], env: Record<string, string> = {}) => {
  const command = parseCommand(argv, env);
  if (command.kind !== "serve") throw new Error(`expected serve, got ${command.kind}`);
  return command;
};

const usageError = (argv: string[], env: Record<string, string> = {}): string => {
  try {
    parseCommand(argv, env);
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  throw new Error("expected a UsageError");
};

describe("parseCommand", () => {
  it("defaults with directories only", () => {
    expect(serve(["/a", "b"])).toEqual({ kind: "serve", limits: DEFAULTS, directories: ["/a", "b"] });
    expect(DEFAULTS).toEqual({ maxResultChars: 50_000, maxMediaBytes: 5_242_880 });
  });

  it("accepts both flag forms", () => {
    expect(serve(["--max-result-chars", "40000", "/a"]).limits.maxResultChars).toBe(40_000);
    expect(serve(["--max-media-bytes=1024", "/a"]).limits.maxMediaBytes).toBe(1024);
  });

  it("lets a flag win over its environment variable, and uses the variable otherwise", () => {
    const env = { BOUNDED_FS_MAX_RESULT_CHARS: "123", BOUNDED_FS_MAX_MEDIA_BYTES: "456" };
    expect(serve(["--max-result-chars=7", "/a"], env).limits).toEqual({ maxResultChars: 7, maxMediaBytes: 456 });
    expect(serve(["/a"], env).limits).toEqual({ maxResultChars: 123, maxMediaBytes: 456 });
  });

  it("ignores a bad variable when the flag is given", () => {
    expect(serve(["--max-result-chars", "9"], { BOUNDED_FS_MAX_RESULT_CHARS: "abc" }).limits.maxResultChars).toBe(9);
  });

  it("treats everything after -- as directories", () => {
    expect(serve(["/a", "--", "--max-result-chars", "-x"]).directories).toEqual(["/a", "--max-result-chars", "-x"]);
  });

  it("answers --help and --version", () => {
    expect(parseCommand(["/a", "--help"], {})).toEqual({ kind: "help" });
    expect(parseCommand(["--version"], {})).toEqual({ kind: "version" });
  });

  it("keeps VERSION in step with package.json", () => {
    const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string };
    expect(VERSION).toBe(pkg.version);
  });

  it.each(["0", "-1", "1.5", "abc", "", "1e3", " 5", "99999999999999999999"])(
    "rejects %j for a flag, naming flag and value",
    (value) => {
      const message = usageError([`--max-result-chars=${value}`, "/a"]);
      expect(message).toContain("--max-result-chars");
      expect(message).toContain(JSON.stringify(value));
      expect(message).not.toContain("\n");
    },
  );

  it.each(["0", "-1", "1.5", "abc", ""])("rejects %j in the environment, naming the variable", (value) => {
    const message = usageError(["/a"], { BOUNDED_FS_MAX_MEDIA_BYTES: value });
    expect(message).toContain("BOUNDED_FS_MAX_MEDIA_BYTES");
    expect(message).toContain(JSON.stringify(value));
  });

  it("rejects a missing value and an unknown option", () => {
    expect(usageError(["/a", "--max-media-bytes"])).toMatch(/missing value for --max-media-bytes/);
    expect(usageError(["--max-result-chars", "--max-media-bytes", "5"])).toContain('"--max-media-bytes"');
    expect(usageError(["--frobnicate", "/a"])).toMatch(/unknown option "--frobnicate"/);
  });
});
