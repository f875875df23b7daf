import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { MIN_RESULT_CHARS } from "../../../src/kernel/bounded.js";
import { DEFAULTS, parseCommand, USAGE, UsageError, VERSION } from "../../../src/cli/config.js";
import { MAX_MEDIA_BYTES_BOUND } from "../../../src/transports/wire-limits.js";
import { toolNames } from "../../../src/server/catalog.js";

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
    const env = { BOUNDED_FS_MAX_RESULT_CHARS: "1230", BOUNDED_FS_MAX_MEDIA_BYTES: "456" };
    expect(serve(["--max-result-chars=7000", "/a"], env).limits).toEqual({ maxResultChars: 7000, maxMediaBytes: 456 });
    expect(serve(["/a"], env).limits).toEqual({ maxResultChars: 1230, maxMediaBytes: 456 });
  });

  it("ignores a bad variable when the flag is given", () => {
    expect(serve(["--max-result-chars", "9000"], { BOUNDED_FS_MAX_RESULT_CHARS: "abc" }).limits.maxResultChars).toBe(9000);
  });

  it("treats everything after -- as directories", () => {
    expect(serve(["/a", "--", "--max-result-chars", "-x"]).directories).toEqual(["/a", "--max-result-chars", "-x"]);
  });

  it("answers --help and --version", () => {
    expect(parseCommand(["/a", "--help"], {})).toEqual({ kind: "help" });
    expect(parseCommand(["--version"], {})).toEqual({ kind: "version" });
  });

  it("keeps VERSION in step with package.json", () => {
    const pkg = JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as { version: string };
    expect(VERSION).toBe(pkg.version);
  });

  it.each(["0", "-1", "1.5", "abc", "", "1e3", " 5", "99999999999999999999"])("rejects %j for a flag, naming flag and value", (value) => {
    const message = usageError([`--max-result-chars=${value}`, "/a"]);
    expect(message).toContain("--max-result-chars");
    expect(message).toContain(JSON.stringify(value));
    expect(message).not.toContain("\n");
  });

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

describe("the smallest cap (issue 18, item 11)", () => {
  it("accepts MIN_RESULT_CHARS and refuses one less, naming the source, the value and the minimum", () => {
    expect(serve([`--max-result-chars=${MIN_RESULT_CHARS}`, "/a"]).limits.maxResultChars).toBe(MIN_RESULT_CHARS);
    expect(usageError(["--max-result-chars", String(MIN_RESULT_CHARS - 1), "/a"])).toBe(
      `bounded-filesystem-mcp: --max-result-chars is ${MIN_RESULT_CHARS - 1}, below the minimum of 1,000 characters ` +
        "(a smaller cap would cut search_file_contents' closing summary, with the offset that continues it)",
    );
    expect(usageError(["/a"], { BOUNDED_FS_MAX_RESULT_CHARS: "10" })).toMatch(/^bounded-filesystem-mcp: BOUNDED_FS_MAX_RESULT_CHARS is 10, below/);
  });
});

describe("the media bound and --read-only (SPEC §13, §14)", () => {
  it("is the largest size whose base64 fits the SDK clients' 10 MiB line less the 64 KiB reserve", () => {
    expect(MAX_MEDIA_BYTES_BOUND).toBe(7_815_168);
    expect(Math.ceil(MAX_MEDIA_BYTES_BOUND / 3) * 4).toBeLessThanOrEqual(10 * 1024 * 1024 - 64 * 1024);
    expect(Math.ceil((MAX_MEDIA_BYTES_BOUND + 3) / 3) * 4).toBeGreaterThan(10 * 1024 * 1024 - 64 * 1024);
  });

  it("accepts --max-media-bytes at the bound and refuses one byte more, naming the flag, the value and the bound", () => {
    expect(serve([`--max-media-bytes=${MAX_MEDIA_BYTES_BOUND}`, "/a"]).limits.maxMediaBytes).toBe(MAX_MEDIA_BYTES_BOUND);
    const message = usageError(["--max-media-bytes", String(MAX_MEDIA_BYTES_BOUND + 1), "/a"]);
    expect(message).toBe(
      `bounded-filesystem-mcp: --max-media-bytes is ${MAX_MEDIA_BYTES_BOUND + 1}, over the bound of ${MAX_MEDIA_BYTES_BOUND} bytes ` +
        "(a larger file's base64 answer would not fit in the 10 MiB line MCP clients accept)",
    );
  });

  it("names the variable when the value over the bound comes from the environment, and lets a flag within it win", () => {
    const env = { BOUNDED_FS_MAX_MEDIA_BYTES: "20000000" };
    expect(usageError(["/a"], env)).toMatch(/^bounded-filesystem-mcp: BOUNDED_FS_MAX_MEDIA_BYTES is 20000000, over the bound of 7815168 bytes/);
    expect(serve(["--max-media-bytes=1000", "/a"], env).limits.maxMediaBytes).toBe(1000);
  });

  it("turns read-only mode on by flag or by BOUNDED_FS_READ_ONLY, and leaves it off otherwise", () => {
    expect(serve(["--read-only", "/a"])).toEqual({ kind: "serve", limits: DEFAULTS, directories: ["/a"], readOnly: true });
    expect(serve(["/a"]).readOnly).toBeUndefined();
    for (const on of ["1", "true", "TRUE"]) expect(serve(["/a"], { BOUNDED_FS_READ_ONLY: on }).readOnly).toBe(true);
    for (const off of ["0", "false", ""]) expect(serve(["/a"], { BOUNDED_FS_READ_ONLY: off }).readOnly).toBeUndefined();
    expect(serve(["--read-only", "/a"], { BOUNDED_FS_READ_ONLY: "0" }).readOnly).toBe(true);
    expect(serve(["--", "--read-only"]).directories).toEqual(["--read-only"]);
  });

  it("refuses any other BOUNDED_FS_READ_ONLY value, naming the variable and the value", () => {
    expect(usageError(["/a"], { BOUNDED_FS_READ_ONLY: "yes" })).toBe(
      'bounded-filesystem-mcp: invalid value for BOUNDED_FS_READ_ONLY: "yes" (expected 1 or 0)',
    );
  });

  it("states both in --help", () => {
    expect(USAGE).toMatch(/--read-only [^-]*BOUNDED_FS_READ_ONLY=1/);
    for (const name of toolNames(true)) expect(USAGE.slice(USAGE.indexOf("--read-only"), USAGE.indexOf("--tools"))).toContain(name);
    expect(USAGE).toContain(`at most\n                         ${MAX_MEDIA_BYTES_BOUND},`);
  });
});

describe("--tools and --disable-tools (SPEC §19)", () => {
  const all = toolNames();
  const writing = toolNames(true);

  it("offers every tool when neither is set", () => {
    expect(serve(["/a"]).tools).toBeUndefined();
    expect(all).toHaveLength(19);
    expect(writing).toEqual([
      "write_file",
      "append_file",
      "edit_file",
      "replace_in_files",
      "create_directory",
      "move_file",
      "copy_file",
      "delete_file",
    ]);
  });

  it("keeps only the listed tools, in tools/list order, whatever order and spacing the list has", () => {
    expect(serve(["--tools", " search_files,read_text_file ,,list_directory", "/a"]).tools).toEqual([
      "read_text_file",
      "list_directory",
      "search_files",
    ]);
    expect(serve(["--tools=get_file_info", "/a"]).tools).toEqual(["get_file_info"]);
    expect(serve(["/a"], { BOUNDED_FS_TOOLS: "delete_file" }).tools).toEqual(["delete_file"]);
  });

  it("takes the disabled tools away from every tool, or from the --tools list", () => {
    expect(serve(["--disable-tools", "read_file,delete_file", "/a"]).tools).toEqual(all.filter((n) => n !== "read_file" && n !== "delete_file"));
    expect(serve(["--tools", "read_text_file,read_file", "--disable-tools", "read_file", "/a"]).tools).toEqual(["read_text_file"]);
    expect(serve(["/a"], { BOUNDED_FS_DISABLE_TOOLS: "read_file" }).tools).toEqual(all.filter((n) => n !== "read_file"));
  });

  it("lets each flag win over its own variable", () => {
    expect(serve(["--tools", "list_directory", "/a"], { BOUNDED_FS_TOOLS: "read_text_file" }).tools).toEqual(["list_directory"]);
    const env = { BOUNDED_FS_DISABLE_TOOLS: "list_directory" };
    expect(serve(["--disable-tools", "read_file", "/a"], env).tools).toEqual(all.filter((n) => n !== "read_file"));
  });

  it("refuses an unknown name, naming it, where it came from and every valid name", () => {
    const message = usageError(["--tools", "read_text_file,read_everything", "/a"]);
    expect(message).toBe(`bounded-filesystem-mcp: unknown tool "read_everything" in --tools (valid names: ${all.join(", ")})`);
    expect(usageError(["/a"], { BOUNDED_FS_DISABLE_TOOLS: "Write_File" })).toMatch(
      /^bounded-filesystem-mcp: unknown tool "Write_File" in BOUNDED_FS_DISABLE_TOOLS \(valid names: read_file, /,
    );
  });

  it("refuses a selection that leaves nothing to offer", () => {
    expect(usageError(["--tools", "", "/a"])).toBe("bounded-filesystem-mcp: --tools leaves no tool to offer");
    expect(usageError(["--tools", "read_file", "--disable-tools", "read_file", "/a"])).toBe(
      "bounded-filesystem-mcp: --tools and --disable-tools leave no tool to offer",
    );
    expect(usageError(["--disable-tools", all.join(","), "/a"])).toBe("bounded-filesystem-mcp: --disable-tools leaves no tool to offer");
    expect(usageError(["--read-only", "--tools", "write_file,edit_file", "/a"])).toBe(
      "bounded-filesystem-mcp: --tools leaves no tool to offer in read-only mode",
    );
  });

  it("lets read-only mode win over --tools, with a note naming the tools it leaves out", () => {
    const command = serve(["--read-only", "--tools", "edit_file,read_text_file,write_file", "/a"]);
    // The list keeps them; buildServer's read-only filter is the one that drops them, as for every tool.
    expect(command.tools).toEqual(["read_text_file", "write_file", "edit_file"]);
    expect(command.note).toBe("Note: read-only mode leaves out write_file, edit_file, though --tools names them");
    expect(serve(["--tools", "edit_file,read_text_file", "/a"], { BOUNDED_FS_READ_ONLY: "1", BOUNDED_FS_TOOLS: "x" }).note).toBe(
      "Note: read-only mode leaves out edit_file, though --tools names it",
    );
    expect(serve(["--read-only", "--tools", "read_text_file", "/a"]).note).toBeUndefined();
    expect(serve(["--read-only", "--disable-tools", "read_file", "/a"]).note).toBeUndefined();
  });

  it("states both, and their variables, in --help", () => {
    expect(USAGE).toMatch(/--tools LIST .*\n.*BOUNDED_FS_TOOLS/);
    expect(USAGE).toMatch(/--disable-tools LIST .*BOUNDED_FS_DISABLE_TOOLS/);
  });
});
