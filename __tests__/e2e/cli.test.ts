/** Flags, environment, exit codes and startup messages of the built binary. */
import { execFileSync } from "node:child_process";
import { mkdir, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, connect, runServer, textOf } from "../support/spawn.js";
import { tempDir } from "../support/fixtures.js";

let root: string;
let remove: () => Promise<void>;

beforeAll(async () => {
  ({ dir: root, remove } = await tempDir("bfs-cli-"));
  await mkdir(path.join(root, "real"));
  await symlink(path.join(root, "real"), path.join(root, "link"));
  await writeFile(path.join(root, "file.txt"), "0123456789".repeat(300));
});
afterAll(() => remove());

describe("informational flags", () => {
  it("--help prints usage to stdout and exits 0", async () => {
    const { code, stdout } = await runServer(["--help"]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^Usage: bounded-filesystem-mcp /);
    expect(stdout).toContain("--max-result-chars");
    expect(stdout).toContain("BOUNDED_FS_MAX_MEDIA_BYTES");
  });

  it("--version prints the version and exits 0", async () => {
    expect(await runServer(["--version"])).toMatchObject({ code: 0, stdout: "0.1.0\n" });
  });
});

describe("bad command lines exit 2 with one line naming the flag and value", () => {
  it.each([
    [["--max-result-chars", "0", "DIR"], "--max-result-chars", '"0"'],
    [["--max-result-chars=-1", "DIR"], "--max-result-chars", '"-1"'],
    [["--max-media-bytes", "1.5", "DIR"], "--max-media-bytes", '"1.5"'],
    [["--max-media-bytes=abc", "DIR"], "--max-media-bytes", '"abc"'],
    [["--max-result-chars=", "DIR"], "--max-result-chars", '""'],
    [["DIR", "--max-result-chars"], "--max-result-chars", "missing value"],
    [["--bogus", "DIR"], "--bogus", "unknown option"],
    [["--max-result-chars", "999", "DIR"], "--max-result-chars is 999", "below the minimum of 1,000 characters"],
  ])("%j", async (args, name, detail) => {
    const { code, stdout, stderr } = await runServer(args.map((a) => (a === "DIR" ? root : a)));
    expect(code).toBe(2);
    expect(stdout).toBe("");
    const lines = stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(name);
    expect(lines[0]).toContain(detail);
  });

  it("a bad environment variable exits 2 naming it", async () => {
    const { code, stderr } = await runServer([root], { env: { BOUNDED_FS_MAX_RESULT_CHARS: "lots" } });
    expect(code).toBe(2);
    expect(stderr).toContain('BOUNDED_FS_MAX_RESULT_CHARS: "lots"');
  });
});

// Issue 18: below about 660 characters a search's own "Call again with offset=N" line was cut away.
describe("the smallest cap accepted keeps a search's continuation whole", () => {
  it.skipIf(process.platform === "win32")("at --max-result-chars 1000 a cut search still ends with its totals, skips and offset", async () => {
    const { dir, remove: removeTree } = await tempDir("bfs-mincap-");
    try {
      const deep = path.join(dir, "a-rather-long-directory-name-for-the-first-match", "and-another-level-below-it");
      await mkdir(deep, { recursive: true });
      for (let i = 0; i < 40; i++) await writeFile(path.join(deep, `match-${String(i).padStart(2, "0")}.txt`), `the needle ${"x".repeat(400)}\n`);
      await writeFile(path.join(dir, "binary.bin"), Buffer.from("needle\0needle"));
      await writeFile(path.join(dir, ".gitignore"), "ignored.txt\n");
      await writeFile(path.join(dir, "ignored.txt"), "needle\n");
      await symlink(os.tmpdir(), path.join(dir, "outside-link"));
      execFileSync("mkfifo", [path.join(dir, "a-fifo")]);
      const server = await connect(["--max-result-chars", "1000", dir]);
      try {
        const text = textOf(await call(server.client, "search_file_contents", { path: dir, query: "needle" }));
        const summary = text.slice(text.lastIndexOf("\n\nFound "));
        expect(summary).toMatch(/^\n\nFound 40 matching lines in 40 files; searched \d+ files\.\nNot searched: /);
        expect(summary).toMatch(/binary; .*ignored by \.gitignore.*; .*unreadable or not a regular file; .*symlink leading outside/);
        expect(summary).toMatch(/\nShowing matching lines 1-\d+ of 40\.\nCall again with offset=\d+ to continue\.$/);
        expect(text).not.toContain("[Result truncated");
      } finally {
        await server.close();
      }
    } finally {
      await removeTree();
    }
  });
});

describe("--tools and --disable-tools (SPEC §19)", () => {
  it("an unknown tool name exits 2 naming it and the valid names, starting nothing", async () => {
    const { code, stdout, stderr } = await runServer(["--tools", "read_text_file,grep", root]);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toMatch(
      /^bounded-filesystem-mcp: unknown tool "grep" in --tools \(valid names: read_file, read_text_file, .*list_allowed_directories\)\n$/,
    );
    const fromEnv = await runServer([root], { env: { BOUNDED_FS_DISABLE_TOOLS: "grep" } });
    expect(fromEnv.code).toBe(2);
    expect(fromEnv.stderr).toContain('unknown tool "grep" in BOUNDED_FS_DISABLE_TOOLS');
  });

  it("registers only the chosen tools over stdio; read-only mode wins and says so on stderr", async () => {
    const server = await connect(["--read-only", "--tools", "list_directory,edit_file,read_text_file", root]);
    try {
      expect((await server.client.listTools()).tools.map((t) => t.name)).toEqual(["read_text_file", "list_directory"]);
      const refused = await call(server.client, "edit_file", { path: path.join(root, "file.txt"), edits: [{ oldText: "0", newText: "1" }] });
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toMatch(/^Unknown tool: edit_file\./);
      expect(textOf(await call(server.client, "list_directory", { path: root }))).toContain("[FILE] file.txt");
      expect(server.stderr()).toContain("Note: read-only mode leaves out edit_file, though --tools names it");
    } finally {
      await server.close();
    }
  });

  it("the environment chooses when no flag does", async () => {
    const server = await connect([root], { env: { BOUNDED_FS_TOOLS: "get_file_info", PATH: process.env.PATH ?? "" } });
    try {
      expect((await server.client.listTools()).tools.map((t) => t.name)).toEqual(["get_file_info"]);
    } finally {
      await server.close();
    }
  });
});

describe("startup directories", () => {
  it("exits 1 when no given directory is usable, warning about each", async () => {
    const missing = path.join(root, "missing");
    const file = path.join(root, "file.txt");
    const { code, stderr } = await runServer([missing, file]);
    expect(code).toBe(1);
    expect(stderr).toContain(`Warning: Cannot access directory ${missing}, skipping`);
    expect(stderr).toContain(`Warning: ${file} is not a directory, skipping`);
    expect(stderr).toContain("Error: None of the specified directories are accessible");
  });

  it("skips a bad directory, serves the rest and allows a symlinked directory in both forms", async () => {
    const missing = path.join(root, "missing");
    const server = await connect([missing, path.join(root, "link")]);
    try {
      const text = textOf(await call(server.client, "list_allowed_directories"));
      expect(text).toBe(`Allowed directories:\n${path.join(root, "link")}\n${path.join(root, "real")}`);
      expect(server.stderr()).toContain(`Warning: Cannot access directory ${missing}, skipping`);
      await expect.poll(() => server.stderr()).toContain("Secure MCP Filesystem Server running on stdio");
    } finally {
      await server.close();
    }
  });

  it("with no directories prints a usage note and says it cannot operate without roots", async () => {
    const server = await connect([]);
    try {
      await expect.poll(() => server.stderr()).toContain("Server cannot operate");
      expect(server.stderr()).toContain("Usage: bounded-filesystem-mcp");
      const result = await call(server.client, "read_text_file", { path: path.join(root, "file.txt") });
      expect(result.isError).toBe(true);
    } finally {
      await server.close();
    }
  });
});

describe("limits from flags and environment", () => {
  const readCapped = async (args: string[], env?: Record<string, string>) => {
    const server = await connect([...args, root], { env });
    try {
      return textOf(await call(server.client, "read_text_file", { path: path.join(root, "file.txt") }));
    } finally {
      await server.close();
    }
  };

  it("the environment variable sets the cap", async () => {
    expect(await readCapped([], { BOUNDED_FS_MAX_RESULT_CHARS: "1000" })).toBe(
      `${"0123456789".repeat(100)}\n[Result truncated: showing characters 1-1,000 of 3,000. Call again with offset=1000 to continue.]`,
    );
  });

  it("the flag wins over the environment variable", async () => {
    expect(await readCapped(["--max-result-chars=2000"], { BOUNDED_FS_MAX_RESULT_CHARS: "1000" })).toBe(
      `${"0123456789".repeat(200)}\n[Result truncated: showing characters 1-2,000 of 3,000. Call again with offset=2000 to continue.]`,
    );
  });
});
