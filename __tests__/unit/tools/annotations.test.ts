/**
 * Every tool's annotations are true of what it does, for its parameter
 * combinations (SPEC §15), through the built server: read-only tools change
 * nothing on disk; idempotent ones called twice leave what one call leaves;
 * non-destructive ones never remove or overwrite content that was there; the
 * non-idempotent append_file does not. And the server's own temp and lock
 * files are shown, counted and searched by no tool (SPEC §18).
 *
 * Regression guard: write_file was annotated idempotent while its `append`
 * mode was not (a retried call appended twice).
 */
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { __testing } from "../../../src/sandbox/index.js";
import { materialize, tempDir } from "../../support/fixtures.js";
import { type EntryState, expectSameSnapshot, snapshot } from "../../support/hostile.js";
import { call, inProcess, textOf, type InProcess } from "../../support/in-process.js";

let base: string;
let root: string;
let remove: () => Promise<void>;
let s: InProcess;
let tools: Tool[];

const FIXTURE = {
  "a.txt": "alpha\nbeta\n",
  "crlf.txt": "one\r\ntwo\r\n",
  docs: { "b.md": "# B\nbeta\n", deeper: { "c.md": "gamma\n" } },
  link: { link: "a.txt" },
};

beforeAll(async () => {
  ({ dir: base, remove } = await tempDir("bfs-annotations-"));
  root = path.join(base, "root");
  await mkdir(root);
  s = await inProcess([root]);
  tools = (await s.client.listTools()).tools;
});
afterAll(async () => {
  await s.close();
  await remove();
});
beforeEach(async () => {
  for (const name of await readdir(root)) await rm(path.join(root, name), { recursive: true, force: true });
  materialize(root, FIXTURE);
});

const annotationsOf = (name: string) => tools.find((t) => t.name === name)?.annotations ?? {};
const run = (name: string, args: Record<string, unknown>) => call(s.client, name, args);
/** A snapshot without mtimes, which a rewrite with the same content changes. */
const state = async (): Promise<Map<string, Omit<EntryState, "mtimeNs">>> =>
  new Map([...(await snapshot(root))].map(([key, { mtimeNs: _, ...rest }]) => [key, rest]));

// Each tool with the parameter combinations it accepts, on the fixture.
const READ_ONLY_CALLS: Array<[string, Record<string, unknown>]> = [
  ["read_text_file", { path: "a.txt" }],
  ["read_text_file", { path: "a.txt", offset: 2, limit: 3 }],
  ["read_text_file", { path: "a.txt", head: 1 }],
  ["read_text_file", { path: "crlf.txt", tail: 1 }],
  ["read_text_file", { path: "a.txt", startLine: 2, lineCount: 1 }],
  ["read_file", { path: "a.txt" }],
  ["read_media_file", { path: "a.txt" }],
  ["read_multiple_files", { paths: ["a.txt", "docs/b.md", "missing"] }],
  ["list_directory", { path: "docs" }],
  ["list_directory_with_sizes", { path: ".", sortBy: "size" }],
  ["directory_tree", { path: ".", excludePatterns: ["deeper"], maxDepth: 2, respectGitignore: true }],
  ["search_files", { path: ".", pattern: "**/*.md", excludePatterns: ["x"], respectGitignore: true }],
  ["search_file_contents", { path: ".", query: "beta", contextLines: 1 }],
  ["search_file_contents", { path: ".", query: "b.ta", regex: true, caseSensitive: true, outputMode: "files", pattern: "**/*.md" }],
  ["search_file_contents", { path: "a.txt", query: "a", outputMode: "count", respectGitignore: false, offset: 1 }],
  ["get_file_info", { path: "docs" }],
  ["list_allowed_directories", {}],
];

describe("readOnlyHint: true", () => {
  it("is declared by exactly the tools that are called here, and each leaves the disk as it was, for every combination", async () => {
    const declared = tools.filter((t) => t.annotations?.readOnlyHint === true).map((t) => t.name);
    expect(new Set(READ_ONLY_CALLS.map(([name]) => name))).toEqual(new Set(declared));
    const before = await snapshot(root);
    for (const [name, args] of READ_ONLY_CALLS) await run(name, args);
    expectSameSnapshot(before, await snapshot(root));
  });

  it("is false for every tool that changes something", () => {
    for (const name of ["write_file", "append_file", "edit_file", "replace_in_files", "create_directory", "move_file", "copy_file", "delete_file"]) {
      expect(annotationsOf(name).readOnlyHint, name).toBe(false);
    }
  });
});

// Calls whose second run must leave what the first left (the second may report an error).
const IDEMPOTENT_CALLS: Array<[string, Record<string, unknown>]> = [
  ["write_file", { path: "a.txt", content: "replaced\n" }],
  ["write_file", { path: "new.txt", content: "new\n" }],
  ["create_directory", { path: "made/deep" }],
  ["create_directory", { path: "docs" }],
  ["copy_file", { source: "a.txt", destination: "a-copy.txt" }],
  ["copy_file", { source: "docs", destination: "docs-copy", recursive: true }],
  ["copy_file", { source: "link", destination: "link-copy", recursive: false }],
  ["delete_file", { path: "a.txt" }],
  ["delete_file", { path: "docs", recursive: true }],
  ["delete_file", { path: "link", recursive: false }],
];

describe("idempotentHint", () => {
  it.each(IDEMPOTENT_CALLS)("%s %j twice leaves what once leaves", async (name, args) => {
    expect(annotationsOf(name).idempotentHint).toBe(true);
    expect((await run(name, args)).isError ?? false).toBe(false);
    const once = await state();
    await run(name, args);
    expect(await state()).toEqual(once);
  });

  it("is false for append_file (twice adds twice), edit_file, replace_in_files and move_file", async () => {
    for (const name of ["append_file", "edit_file", "replace_in_files", "move_file"]) expect(annotationsOf(name).idempotentHint, name).toBe(false);
    await run("append_file", { path: "a.txt", content: "more\n" });
    await run("append_file", { path: "a.txt", content: "more\n" });
    expect(await readFile(path.join(root, "a.txt"), "utf8")).toBe("alpha\nbeta\nmore\nmore\n");
    // A replacement that holds its query replaces again on the second call.
    await run("replace_in_files", { path: "a.txt", query: "more", replacement: "more more" });
    await run("replace_in_files", { path: "a.txt", query: "more", replacement: "more more" });
    expect(await readFile(path.join(root, "a.txt"), "utf8")).toBe("alpha\nbeta\nmore more more more\nmore more more more\n");
  });
});

// Calls aimed at existing content: none may remove or overwrite any of it.
const NON_DESTRUCTIVE_CALLS: Array<[string, Record<string, unknown>]> = [
  ["create_directory", { path: "docs" }],
  ["create_directory", { path: "fresh/dir" }],
  ["move_file", { source: "a.txt", destination: "crlf.txt" }],
  ["move_file", { source: "docs", destination: "moved-docs" }],
  ["copy_file", { source: "a.txt", destination: "crlf.txt" }],
  ["copy_file", { source: "docs", destination: "docs/deeper", recursive: true }],
  ["copy_file", { source: "docs", destination: "copied", recursive: true }],
  ["copy_file", { source: "docs", destination: "copied" }],
  ["append_file", { path: "a.txt", content: "appended\n" }],
  ["append_file", { path: "fresh.txt", content: "new\n" }],
];

/** Every file's content before, with where it may be after (a move renames), and append's target as a prefix. */
async function expectContentKept(before: Map<string, Omit<EntryState, "mtimeNs">>, name: string, args: Record<string, unknown>): Promise<void> {
  const after = await state();
  const contents = new Set([...after.values()].map((e) => e.content));
  for (const [key, entry] of before) {
    if (entry.type !== "file") continue;
    if (name === "append_file" && key === `./${Buffer.from("a.txt").toString("hex")}`) {
      expect((await readFile(path.join(root, "a.txt"), "utf8")).startsWith("alpha\nbeta\n")).toBe(true);
      continue;
    }
    expect(contents.has(entry.content), `${name} ${JSON.stringify(args)} kept ${key}`).toBe(true);
  }
}

describe("destructiveHint: false", () => {
  it.each(NON_DESTRUCTIVE_CALLS)("%s %j removes and overwrites nothing that was there", async (name, args) => {
    expect(annotationsOf(name).destructiveHint).toBe(false);
    const before = await state();
    await run(name, args);
    await expectContentKept(before, name, args);
  });

  it("is true for the tools that do replace or remove content", async () => {
    for (const name of ["write_file", "edit_file", "replace_in_files", "delete_file"]) expect(annotationsOf(name).destructiveHint, name).toBe(true);
    await run("replace_in_files", { path: "a.txt", query: "alpha", replacement: "" });
    expect(await readFile(path.join(root, "a.txt"), "utf8")).toBe("\nbeta\n");
    await run("write_file", { path: "a.txt", content: "gone\n" });
    await run("edit_file", { path: "crlf.txt", edits: [{ oldText: "one", newText: "1" }] });
    await run("delete_file", { path: "docs", recursive: true });
    expect(await readFile(path.join(root, "a.txt"), "utf8")).toBe("gone\n");
    expect(await readFile(path.join(root, "crlf.txt"), "utf8")).toBe("1\r\ntwo\r\n");
  });
});

describe("the server's own temp and lock files", () => {
  it("are listed, walked, counted and searched by no tool", async () => {
    // What a killed server leaves: a partial new version and a lock, beside a file and inside a directory.
    await writeFile(path.join(root, __testing.tempName("a.txt")), "alpha\nbeta\npartial copy\n");
    await writeFile(path.join(root, "docs", __testing.tempName("b.md")), "beta\n");
    await writeFile(path.join(root, __testing.swapLockName("a.txt")), "");
    const results = [
      await run("list_directory", { path: "." }),
      await run("list_directory_with_sizes", { path: "." }),
      await run("directory_tree", { path: "." }),
      await run("search_files", { path: ".", pattern: "**/*" }),
      await run("search_file_contents", { path: ".", query: "beta", outputMode: "files" }),
    ];
    for (const result of results) expect(textOf(result)).not.toMatch(/\.bfs-/);
    expect(textOf(results[1]!)).toMatch(/Total: 3 files, 1 directories/);
    expect(textOf(results[4]!)).toMatch(/^.*a\.txt: 1 matching line, 1 occurrence\n.*b\.md: 1 matching line, 1 occurrence\n/);
    expect(textOf(results[4]!)).not.toMatch(/partial/);
  });
});
