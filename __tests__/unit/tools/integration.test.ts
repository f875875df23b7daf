/**
 * Every tool through the built binary and the SDK's stdio client, once on
 * success and once on failure, plus the shape of tools/list.
 */
import { link, mkdir, readFile, stat, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SYSTEM_NAME } from "../../../src/sandbox/index.js";
import { call, inProcess, textOf, type InProcess } from "../../support/in-process.js";
import { tempDir } from "../../support/fixtures.js";

let root: string;
let outside: string;
let server: InProcess;
const cleanups: Array<() => Promise<void>> = [];
const PNG = Buffer.from("89504e470d0a1a0a0000000d49484452", "hex");

beforeAll(async () => {
  const a = await tempDir("bfs-int-");
  const b = await tempDir("bfs-out-");
  cleanups.push(a.remove, b.remove);
  root = a.dir;
  outside = b.dir;
  await writeFile(path.join(root, "a.txt"), "hello\nworld\n");
  await mkdir(path.join(root, "sub"));
  await writeFile(path.join(root, "sub", "b.md"), "# B\n");
  await writeFile(path.join(root, "img.png"), PNG);
  await writeFile(path.join(root, "data.bin"), Buffer.from([0, 1, 2, 3]));
  await writeFile(path.join(outside, "secret.txt"), "secret");
  await symlink(path.join(outside, "secret.txt"), path.join(root, "escape.txt"));
  server = await inProcess([root]);
});

afterAll(async () => {
  await server?.close();
  for (const cleanup of cleanups) await cleanup();
});

const p = (...parts: string[]) => path.join(root, ...parts);
const run = (name: string, args: Record<string, unknown> = {}) => call(server.client, name, args);

function expectError(result: CallToolResult, pattern: RegExp): void {
  expect(result.isError).toBe(true);
  expect(textOf(result)).toMatch(pattern);
}

function expectOk(result: CallToolResult): string {
  expect(result.isError ?? false).toBe(false);
  expect(result.structuredContent).toBeUndefined();
  return textOf(result);
}

describe("initialize and tools/list", () => {
  it("reports the server name and version", () => {
    expect(server.client.getServerVersion()).toMatchObject({ name: "bounded-filesystem", version: "0.1.0" });
  });

  it("lists the 19 tools with annotations, described parameters and no outputSchema", async () => {
    const { tools } = await server.client.listTools();
    const expected: Record<string, Record<string, boolean>> = {
      create_directory: { readOnlyHint: false, idempotentHint: true, destructiveHint: false },
      write_file: { readOnlyHint: false, idempotentHint: true, destructiveHint: true },
      append_file: { readOnlyHint: false, idempotentHint: false, destructiveHint: false },
      edit_file: { readOnlyHint: false, idempotentHint: false, destructiveHint: true },
      replace_in_files: { readOnlyHint: false, idempotentHint: false, destructiveHint: true },
      move_file: { readOnlyHint: false, idempotentHint: false, destructiveHint: false },
      copy_file: { readOnlyHint: false, idempotentHint: true, destructiveHint: false },
      delete_file: { readOnlyHint: false, idempotentHint: true, destructiveHint: true },
    };
    const readOnly = [
      "read_text_file",
      "read_file",
      "read_media_file",
      "read_multiple_files",
      "list_directory",
      "list_directory_with_sizes",
      "directory_tree",
      "search_files",
      "search_file_contents",
      "get_file_info",
      "list_allowed_directories",
    ];
    for (const name of readOnly) expected[name] = { readOnlyHint: true };
    expect(tools.map((t) => t.name).sort()).toEqual(Object.keys(expected).sort());
    for (const tool of tools) {
      // No title: it repeats the name, and a model pays for it (issue 26).
      expect(tool).not.toHaveProperty("title");
      expect(tool.description?.length, tool.name).toBeGreaterThan(40);
      expect(tool.annotations).toEqual({ ...expected[tool.name], openWorldHint: false });
      expect(tool).not.toHaveProperty("outputSchema");
      const described = (schema: Record<string, unknown>, where: string): void => {
        const properties = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
        for (const [key, property] of Object.entries(properties)) {
          expect(typeof property.description, `${where}.${key}`).toBe("string");
          const items = property.items as Record<string, unknown> | undefined;
          if (items?.properties) described(items, `${where}.${key}[]`);
        }
      };
      described(tool.inputSchema as Record<string, unknown>, tool.name);
    }
    const read = tools.find((t) => t.name === "read_text_file");
    expect(Object.keys(read?.inputSchema.properties ?? {}).sort()).toEqual(["head", "limit", "lineCount", "offset", "path", "startLine", "tail"]);
  });
});

describe("every tool, success and failure", () => {
  it("read_text_file and read_file", async () => {
    for (const name of ["read_text_file", "read_file"]) {
      expect(expectOk(await run(name, { path: p("a.txt") }))).toBe("hello\nworld\n");
      expect(expectOk(await run(name, { path: "a.txt" }))).toBe("hello\nworld\n");
      expectError(await run(name, { path: path.join(outside, "secret.txt") }), /^Access denied - path outside allowed directories/);
      // A symlink leading outside gets the one uniform refusal, naming the path as given and not where it leads.
      expectError(await run(name, { path: p("escape.txt") }), /^Access denied - path outside allowed directories/);
      expect(textOf(await run(name, { path: p("escape.txt") }))).not.toContain(outside);
    }
  });

  it("a failure whose path parameter begins or ends with whitespace, or holds U+FFFD, says so; a name with a space still works", async () => {
    const ends = await run("read_file", { path: `${p("a.txt")} ` });
    expectError(ends, /no such file or directory/);
    expect(textOf(ends).endsWith("\nNote: path ends with whitespace, which is taken as part of the name.")).toBe(true);
    const begins = await run("read_text_file", { path: ` ${p("a.txt")}` });
    expect(textOf(begins).endsWith("\nNote: path begins with whitespace, which is taken as part of the name.")).toBe(true);
    const moved = await run("move_file", { source: p("a.txt"), destination: `${p("nowhere", "x.txt")}\n` });
    expect(textOf(moved)).toContain("Note: destination ends with whitespace");
    // In read_multiple_files a file's failure is a line of the result: the note follows that line, naming paths[i].
    const many = expectOk(await run("read_multiple_files", { paths: [p("a.txt"), `${p("sub", "b.md")}\t`, p("*.md")] }));
    expect(many).toContain(
      `${p("sub", "b.md")}\\t: Error - Cannot open ${p("sub", "b.md")}\\t: no such file or directory (ENOENT)\nNote: paths[1] ends with whitespace, which is taken as part of the name.\n---\n`,
    );
    expect(many).toMatch(
      /\nNote: paths\[2\] holds \*, and a path is taken as a name, not as a glob; .*pattern \*\.md to search_files or search_file_contents\.$/,
    );
    expect(many.startsWith(`${p("a.txt")}:\nhello\nworld\n`)).toBe(true);
    expect(textOf(await run("get_file_info", { path: p("missing.txt") }))).not.toContain("Note:");
    expect(expectOk(await run("write_file", { path: `${p("spaced")} `, content: "x" }))).not.toContain("Note:");
    // A name as listings show one that is not valid UTF-8.
    const undecoded = await run("read_text_file", { path: p("caf\uFFFD.txt") });
    expect(textOf(undecoded)).toMatch(
      /\nNote: path holds \uFFFD, which listings show in place of bytes of a name that are not valid UTF-8; this server cannot open such a name\.$/,
    );
    expect(await readFile(`${p("spaced")} `, "utf8")).toBe("x");
  });

  const escapeRe = (text: string): string => text.replace(/[\\^$.*+?()[\]{}|/]/g, "\\$&");

  it("a path not found written as a glob, or ending in a line number, says what to pass instead; found, or failing otherwise, it does not", async () => {
    const glob = await run("read_text_file", { path: p("sub", "*.md") });
    expectError(glob, /no such file or directory/);
    expect(textOf(glob)).toMatch(
      new RegExp(
        `\\nNote: path holds \\*, and a path is taken as a name, not as a glob; to take files by a glob, pass path ${escapeRe(p("sub"))} ` +
          "and pattern \\*\\.md to search_files or search_file_contents\\.$",
      ),
    );
    const deep = await run("search_files", { path: p("**", "*.md"), pattern: "*" });
    expect(textOf(deep)).toContain(`pass path ${root} and pattern **/*.md to search_files`);
    const located = await run("get_file_info", { path: `${p("a.txt")}:12:5` });
    expect(textOf(located)).toMatch(
      /\nNote: path ends in :12, which is taken as part of the name; to read .*a\.txt from line 12, call read_text_file with that path and startLine 12\.$/,
    );
    // A refusal other than a missing name gets no such note: outside, as a glob, is still only "Access denied".
    expect(textOf(await run("read_text_file", { path: path.join(outside, "*.txt") }))).not.toContain("Note:");
    // Names that hold these characters are names: written, found and read without a note.
    expect(expectOk(await run("write_file", { path: p("odd*?.txt:3"), content: "odd" }))).not.toContain("Note:");
    expect(expectOk(await run("read_text_file", { path: p("odd*?.txt:3") }))).toBe("odd");
  });

  it("a Windows path not found where / is the separator says so; one with a backslash in a real name is read", async () => {
    const drive = await run("get_file_info", { path: "C:\\Users\\me\\a.txt" });
    expectError(drive, /no such file or directory/);
    expect(
      textOf(drive).endsWith(
        `\nNote: path is a Windows path (drive C:), and this server runs on ${SYSTEM_NAME}, where \\ is part of a name, not a separator; ` +
          "list_allowed_directories gives the directories it serves.",
      ),
    ).toBe(true);
    const relative = await run("read_text_file", { path: "sub\\b.md" });
    expect(
      textOf(relative).endsWith(`\nNote: path holds \\, which on ${SYSTEM_NAME} is part of a name, not a separator; with / it reads sub/b.md.`),
    ).toBe(true);
    // The path it gives reads the file.
    expect(expectOk(await run("read_text_file", { path: "sub/b.md" })).length).toBeGreaterThan(0);
    expect(expectOk(await run("write_file", { path: p("back\\slash.txt"), content: "b" }))).not.toContain("Note:");
    expect(expectOk(await run("read_text_file", { path: p("back\\slash.txt") }))).toBe("b");
  });

  it("a text query written as a regex that found nothing is followed by a note; found, or a regex, it is not", async () => {
    const note = "\nNote: query holds |, as a regex does, and was searched for as text (regex: false); pass regex: true to search for the pattern.";
    const missed = expectOk(await run("search_file_contents", { path: root, query: "hello|world", outputMode: "count" }));
    expect(missed).toMatch(/^Found 0 matching lines/);
    expect(missed.endsWith(note)).toBe(true);
    expect(expectOk(await run("search_file_contents", { path: root, query: "hello|world", regex: true, outputMode: "count" }))).not.toContain(
      "Note:",
    );
    expect(expectOk(await run("search_file_contents", { path: p("a.txt"), query: "hel", outputMode: "count" }))).not.toContain("Note:");
    const replaced = expectOk(await run("replace_in_files", { path: p("a.txt"), query: "hello|world", replacement: "x", dryRun: true }));
    expect(replaced).toMatch(/^No occurrences found; searched 1 file; nothing was written\./);
    expect(replaced.endsWith(note)).toBe(true);
  });

  it("read_text_file head, tail, offset and limit", async () => {
    expect(expectOk(await run("read_text_file", { path: p("a.txt"), head: 1 }))).toBe("hello");
    expect(expectOk(await run("read_text_file", { path: p("a.txt"), tail: 2 }))).toBe("world\n");
    // Upstream's tail 1 of a file ending in a line break is its empty last line: said, not left empty.
    expect(expectOk(await run("read_text_file", { path: p("a.txt"), tail: 1 }))).toBe(
      "Note: tail=1 is the empty line after the file's final line break (lines are counted as upstream counts them); tail=2 gives its last line of text.",
    );
    expect(expectOk(await run("read_file", { path: p("a.txt"), tail: 1 }))).toMatch(/^Note: tail=1 is the empty line/);
    expect(expectOk(await run("read_text_file", { path: p("sub", "b.md"), tail: 2 }))).toBe("# B\n");
    expect(expectOk(await run("read_text_file", { path: p("a.txt"), offset: 6 }))).toBe("world\n");
    expect(expectOk(await run("read_text_file", { path: p("a.txt"), offset: 0, limit: 5 }))).toBe(
      "hello\n[Result truncated: showing characters 1-5 of 12. Call again with offset=5 to continue.]",
    );
    expect(expectOk(await run("read_text_file", { path: p("a.txt"), offset: 99 }))).toBe("");
    expectError(await run("read_text_file", { path: p("a.txt"), head: 1, tail: 1 }), /head.*tail/);
    expectError(await run("read_text_file", { path: p("a.txt"), head: 1, offset: 2 }), /head.*offset/);
    expectError(await run("read_text_file", { path: p("a.txt"), limit: 3, tail: 1 }), /tail.*limit/);
    expectError(await run("read_text_file", { path: p("a.txt"), offset: -1 }), /offset/);
    expectError(await run("read_text_file", { path: p("a.txt"), limit: 1.5 }), /limit/);
    expectError(await run("read_text_file", { path: p("a.txt"), head: "3" }), /head/);
    expectError(await run("read_text_file", { path: p("sub") }), /Not a regular file|directory/i);
  });

  it("read_text_file startLine and lineCount", async () => {
    expect(expectOk(await run("read_text_file", { path: p("a.txt"), startLine: 2 }))).toBe("world\n");
    expect(expectOk(await run("read_file", { path: p("a.txt"), startLine: 1, lineCount: 1 }))).toBe("hello\n");
    expect(expectOk(await run("read_text_file", { path: p("a.txt"), startLine: 3, lineCount: 5 }))).toBe("");
    expectError(await run("read_text_file", { path: p("a.txt"), startLine: 1, offset: 2 }), /startLine and offset/);
    expectError(await run("read_text_file", { path: p("a.txt"), lineCount: 1, tail: 2 }), /lineCount and tail/);
    expectError(await run("read_text_file", { path: p("a.txt"), startLine: 2, limit: 2 }), /startLine and limit/);
    expectError(await run("read_text_file", { path: p("a.txt"), startLine: 0 }), /startLine/);
    expectError(await run("read_text_file", { path: p("a.txt"), startLine: 1, lineCount: 1.5 }), /lineCount/);
  });

  it("read_multiple_files", async () => {
    const text = expectOk(await run("read_multiple_files", { paths: [p("a.txt"), p("nope.txt"), p("sub", "b.md")] }));
    const parts = text.split("\n---\n");
    expect(parts[0]).toBe(`${p("a.txt")}:\nhello\nworld\n\n`);
    expect(parts[1]).toMatch(new RegExp(`^${p("nope.txt").replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: Error - `));
    expect(parts[2]).toBe(`${p("sub", "b.md")}:\n# B\n\n`);
    expectError(await run("read_multiple_files", { paths: [] }), /paths/);
  });

  it("read_media_file", async () => {
    const image = await run("read_media_file", { path: p("img.png") });
    expect(image.content).toEqual([{ type: "image", mimeType: "image/png", data: PNG.toString("base64") }]);
    const other = await run("read_media_file", { path: p("data.bin") });
    expect(other.content).toEqual([
      {
        type: "resource",
        resource: { uri: `file://${p("data.bin")}`, mimeType: "application/octet-stream", blob: "AAECAw==" },
      },
    ]);
    expectError(await run("read_media_file", { path: p("missing.png") }), /missing\.png/);
    // An empty image or audio file is no picture or sound: refused, naming it; an empty other file is an empty blob.
    await writeFile(p("empty.png"), "");
    await writeFile(p("empty.wav"), "");
    await writeFile(p("empty.dat"), "");
    expectError(await run("read_media_file", { path: p("empty.png") }), /^Empty file: .*empty\.png is 0 bytes, so it holds no image to return\.$/);
    expectError(await run("read_media_file", { path: p("empty.wav") }), /so it holds no audio to return/);
    expect((await run("read_media_file", { path: p("empty.dat") })).content).toEqual([
      { type: "resource", resource: { uri: `file://${p("empty.dat")}`, mimeType: "application/octet-stream", blob: "" } },
    ]);
  });

  it("write_file", async () => {
    expect(expectOk(await run("write_file", { path: p("new.txt"), content: "fresh" }))).toBe(`Successfully wrote to ${p("new.txt")}`);
    expect(await readFile(p("new.txt"), "utf8")).toBe("fresh");
    // A file with other names (hard links): they keep the old text, and the result says so.
    await link(p("new.txt"), p("new-link.txt"));
    expect(expectOk(await run("write_file", { path: p("new.txt"), content: "fresher" }))).toBe(
      `Successfully wrote to ${p("new.txt")}\nNote: 1 other name (a hard link) keeps the previous text of ${p("new.txt")}: ` +
        "the new text was written as a new file under this name only.",
    );
    expect(await readFile(p("new-link.txt"), "utf8")).toBe("fresh");
    await link(p("new-link.txt"), p("new-link2.txt"));
    expect(expectOk(await run("edit_file", { path: p("new-link.txt"), edits: [{ oldText: "fresh", newText: "f" }], diff: false }))).toBe(
      `Successfully edited ${p("new-link.txt")}: 1 edit, 1 replacement, lines 1-1\nNote: 1 other name (a hard link) keeps the previous ` +
        `text of ${p("new-link.txt")}: the new text was written as a new file under this name only.`,
    );
    expectError(await run("write_file", { path: p("no", "such", "x.txt"), content: "x" }), /^Parent directory does not exist/);
    expectError(await run("write_file", { path: path.join(outside, "x.txt"), content: "x" }), /Access denied/);
  });

  it("edit_file", async () => {
    await writeFile(p("edit.txt"), "one\ntwo\nthree\n");
    const dry = expectOk(await run("edit_file", { path: p("edit.txt"), edits: [{ oldText: "two", newText: "2" }], dryRun: true }));
    expect(dry).toMatch(/^```diff\n/);
    expect(dry).toContain("-two\n+2");
    expect(await readFile(p("edit.txt"), "utf8")).toBe("one\ntwo\nthree\n");
    expectOk(await run("edit_file", { path: p("edit.txt"), edits: [{ oldText: "two", newText: "$& $1 $$" }] }));
    expect(await readFile(p("edit.txt"), "utf8")).toBe("one\n$& $1 $$\nthree\n");
    expectError(
      await run("edit_file", { path: p("edit.txt"), edits: [{ oldText: "absent", newText: "x" }] }),
      /^Could not find exact match for edit:\nabsent/,
    );
    expect(await readFile(p("edit.txt"), "utf8")).toBe("one\n$& $1 $$\nthree\n");
  });

  it("edit_file refuses text that is not UTF-8, leaving it as it was", async () => {
    const latin1 = Buffer.from("caf\xe9\nx\n", "latin1");
    await writeFile(p("latin1.txt"), latin1);
    expectError(
      await run("edit_file", { path: p("latin1.txt"), edits: [{ oldText: "x", newText: "y" }] }),
      /^Cannot edit .*latin1\.txt: it is not valid UTF-8 text/,
    );
    expect(await readFile(p("latin1.txt"))).toEqual(latin1);
  });

  // Regression: edit_file refused files over 16 MiB; now it streams them.
  it("edit_file edits a CRLF file over 16 MiB, byte for byte as a reference replacement, endings kept", async () => {
    const lines = Array.from({ length: 600_000 }, (_, i) => `line ${i} of a long crlf file\r\n`);
    lines[300_000] = "  TARGET line\r\n";
    const before = Buffer.from(lines.join(""), "utf8");
    expect(before.length).toBeGreaterThan(16 * 1024 * 1024);
    await writeFile(p("big-crlf.txt"), before);
    const diff = expectOk(
      await run("edit_file", { path: p("big-crlf.txt"), edits: [{ oldText: "TARGET line\nline 300001", newText: "DONE line\nline 300001" }] }),
    );
    expect(diff).toContain("-  TARGET line\n+  DONE line\n");
    const expected = Buffer.from(lines.join("").replace("TARGET line", "DONE line"), "utf8");
    expect((await readFile(p("big-crlf.txt"))).equals(expected)).toBe(true);
  });

  it("create_directory", async () => {
    expect(expectOk(await run("create_directory", { path: p("x", "y", "z") }))).toBe(`Successfully created directory ${p("x", "y", "z")}`);
    expect((await stat(p("x", "y", "z"))).isDirectory()).toBe(true);
    expectOk(await run("create_directory", { path: p("x", "y", "z") }));
    expectError(await run("create_directory", { path: path.join(outside, "d") }), /Access denied/);
  });

  it("list_directory", async () => {
    const lines = expectOk(await run("list_directory", { path: root })).split("\n");
    expect(lines).toContain("[DIR] sub");
    expect(lines).toContain("[FILE] a.txt");
    expectError(await run("list_directory", { path: p("a.txt") }), new RegExp(`^Not a directory: ${p("a.txt")}$`));
    expectError(await run("directory_tree", { path: p("a.txt") }), new RegExp(`^Not a directory: ${p("a.txt")}$`));
    expectError(await run("search_files", { path: p("nowhere"), pattern: "*" }), new RegExp(`^No such directory: ${p("nowhere")}$`));
  });

  it("list_directory_with_sizes", async () => {
    const text = expectOk(await run("list_directory_with_sizes", { path: p("sub"), sortBy: "size" }));
    expect(text).toBe(`[FILE] ${"b.md".padEnd(30)} ${"4 B".padStart(10)}\n\nTotal: 1 files, 0 directories\nCombined size: 4 B`);
    expectError(await run("list_directory_with_sizes", { path: p("sub"), sortBy: "date" }), /sortBy/);
  });

  it("directory_tree", async () => {
    await mkdir(p("tree", "inner"), { recursive: true });
    await writeFile(p("tree", "inner", "f.txt"), "");
    const text = expectOk(await run("directory_tree", { path: p("tree") }));
    const tree = [{ name: "inner", type: "directory", children: [{ name: "f.txt", type: "file" }] }];
    expect(text).toBe(JSON.stringify(tree, null, 2));
    expect(expectOk(await run("directory_tree", { path: p("tree"), excludePatterns: ["inner"] }))).toBe("[]");
    expectError(await run("directory_tree", { path: outside }), /Access denied/);
  });

  it("move_file", async () => {
    await writeFile(p("m1.txt"), "m1");
    await writeFile(p("m2.txt"), "m2");
    expect(expectOk(await run("move_file", { source: p("m1.txt"), destination: p("moved.txt") }))).toBe(
      `Successfully moved ${p("m1.txt")} to ${p("moved.txt")}`,
    );
    expectError(await run("move_file", { source: p("moved.txt"), destination: p("m2.txt") }), /^Destination already exists: /);
    expect(await readFile(p("moved.txt"), "utf8")).toBe("m1");
    expect(await readFile(p("m2.txt"), "utf8")).toBe("m2");
  });

  it("append_file, copy_file and delete_file", async () => {
    expect(expectOk(await run("append_file", { path: p("log.txt"), content: "one\n" }))).toBe(
      `Successfully appended 4 bytes to ${p("log.txt")} (new file)`,
    );
    expectError(await run("append_file", { path: path.join(outside, "x.txt"), content: "x" }), /Access denied/);
    expect(expectOk(await run("copy_file", { source: p("log.txt"), destination: p("log-copy.txt") }))).toBe(
      `Successfully copied ${p("log.txt")} to ${p("log-copy.txt")}`,
    );
    expectError(await run("copy_file", { source: p("log.txt"), destination: p("log-copy.txt") }), /^Destination already exists: /);
    expect(await readFile(p("log-copy.txt"), "utf8")).toBe("one\n");
    expect(expectOk(await run("delete_file", { path: p("log-copy.txt") }))).toBe(`Successfully deleted ${p("log-copy.txt")}`);
    expectError(await run("delete_file", { path: p("log-copy.txt") }), /^Cannot delete .*: no such file or directory/);
    await expect(stat(p("log-copy.txt"))).rejects.toThrow(/ENOENT/);
  });

  it("search_files", async () => {
    expect(expectOk(await run("search_files", { path: root, pattern: "**/*.md" }))).toBe(p("sub", "b.md"));
    expect(expectOk(await run("search_files", { path: root, pattern: "*.nothing" }))).toBe("No matches found");
    expectError(await run("search_files", { path: outside, pattern: "*" }), /Access denied/);
  });

  it("get_file_info", async () => {
    const lines = expectOk(await run("get_file_info", { path: p("a.txt") })).split("\n");
    expect(lines.map((l) => l.split(":")[0])).toEqual([
      "size",
      "created",
      "modified",
      "accessed",
      "isDirectory",
      "isFile",
      "permissions",
      "lineEndings",
      "endsWithNewline",
      "text",
    ]);
    expect(lines).toContain("size: 12");
    expect(lines).toContain("isFile: true");
    expectError(await run("get_file_info", { path: p("missing") }), /missing/);
  });

  it("list_allowed_directories", async () => {
    expect(expectOk(await run("list_allowed_directories"))).toBe(`Allowed directories:\n${root}`);
  });

  it("an unknown tool is a tool error", async () => {
    expectError(await run("format_disk"), /Unknown tool: format_disk/);
  });
});
