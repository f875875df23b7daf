/**
 * A glob that matched nothing is followed by what it was likely meant as (unmatchedPatternNote): empty, absolute,
 * written as a regex, or without `/` while a deeper entry's name matches it. Through the in-process server, under
 * both platform strategies, for search_files, search_file_contents and replace_in_files.
 */
import fs, { type Dirent } from "node:fs";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DeeperMatches, unmatchedPatternNote } from "../../../src/walking/patterns.js";
import { currentRuntime, describeEachStrategy, materialize, tempDir } from "../../support/fixtures.js";
import { inProcess } from "../../support/in-process.js";

// A directory entry as a walk hands it over.
const entry = (name: string, link = false): Dirent => ({ name, isSymbolicLink: () => link }) as Dirent;

describe("unmatchedPatternNote", () => {
  const root = path.resolve("/r");
  const none = new DeeperMatches(undefined);

  it("names the relative form of an absolute pattern inside the directory", () => {
    expect(unmatchedPatternNote("pattern", path.join(root, "src", "**", "*.ts"), root, none)).toBe(
      "\nNote: pattern is matched against paths relative to the directory searched, so an absolute one matches nothing; relative, it is src/**/*.ts.",
    );
    expect(unmatchedPatternNote("pattern", path.resolve("/elsewhere/*.ts"), root, none)).toMatch(/an absolute one matches nothing\.$/);
  });

  it.each([".*\\.ts$", "^src/", "*.ts$", "\\.md"])("%s reads as a regex", (pattern) => {
    expect(unmatchedPatternNote("pattern", pattern, root, none)).toMatch(/is a glob, not a regular expression/);
  });

  it("a slash-free pattern is noted only when a deeper name matches it", () => {
    const deeper = new DeeperMatches("*.ts");
    deeper.missed("a.md", entry("a.md"));
    deeper.missed(path.join("src", "b.md"), entry("b.md"));
    // A link is not looked at: it may lead outside.
    deeper.missed(path.join("src", "l.ts"), entry("l.ts", true));
    expect(unmatchedPatternNote("pattern", "*.ts", root, deeper)).toBe("");
    // A top-level name is the pattern's own business: it did not match there.
    deeper.missed("c.ts.bak", entry("c.ts.bak"));
    expect(deeper.found).toBe(false);
    deeper.missed(path.join("src", "deep", "a.ts"), entry("a.ts"));
    expect(unmatchedPatternNote("pattern", "*.ts", root, deeper)).toMatch(/holds no \/, .*; \*\*\/\*\.ts matches deeper ones too\.$/);
  });

  it("a pattern with a / is not looked for deeper", () => {
    const deeper = new DeeperMatches("src/*.ts");
    deeper.missed(path.join("src", "deep", "a.ts"), entry("a.ts"));
    expect(deeper.found).toBe(false);
    expect(unmatchedPatternNote("pattern", "src/*.ts", root, deeper)).toBe("");
  });
});

let dir: string;
let remove: () => Promise<void>;
let client: Client;
let closeAll: () => Promise<void>;

async function call(name: string, args: Record<string, unknown>): Promise<string> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  expect(result.isError).not.toBe(true);
  return result.content[0]?.type === "text" ? result.content[0].text : "";
}

describeEachStrategy("a pattern that matched nothing says what it was likely meant as", () => {
  beforeEach(async () => {
    ({ dir, remove } = await tempDir("unmatched-"));
    materialize(dir, { "top.md": "x\n", src: { "b.tsx": "x\n", deep: { "a.ts": "x\n" } } });
    ({ client, close: closeAll } = await inProcess([dir], { runtime: currentRuntime() }));
  });

  afterEach(async () => {
    await closeAll();
    await remove();
  });

  it("search_files: *.ts only matches at the top; **/*.ts finds the deeper one", async () => {
    expect(await call("search_files", { path: dir, pattern: "*.ts" })).toBe(
      "No matches found\nNote: pattern holds no /, so it is matched against the entries directly inside the directory searched; **/*.ts matches deeper ones too.",
    );
    expect(await call("search_files", { path: dir, pattern: "**/*.ts" })).toBe(path.join(dir, "src", "deep", "a.ts"));
  });

  it("search_files: no note where nothing at any depth matches, or the pattern matched an entry a type left out", async () => {
    expect(await call("search_files", { path: dir, pattern: "*.py" })).toBe("No matches found");
    expect(await call("search_files", { path: dir, pattern: "*.md", type: "directory" })).toBe("No matches found");
  });

  it("search_files: an absolute pattern, an empty one", async () => {
    expect(await call("search_files", { path: dir, pattern: path.join(dir, "src", "*.tsx") })).toMatch(/; relative, it is src\/\*\.tsx\.$/);
    expect(await call("search_files", { path: dir, pattern: "" })).toBe(
      "No matches found\nNote: pattern is empty, which matches no name; **/* matches every entry.",
    );
  });

  it("search_file_contents and replace_in_files: the note follows the totals; nothing is written", async () => {
    expect(await call("search_file_contents", { path: dir, query: "x", pattern: "*.ts" })).toBe(
      "Found 0 matching lines in 0 files; searched 0 files.\nNote: pattern holds no /, so it is matched against the entries directly inside the directory searched; **/*.ts matches deeper ones too.",
    );
    expect(await call("replace_in_files", { path: dir, query: "x", replacement: "y", pattern: ".*\\.ts" })).toMatch(
      /^No occurrences found; searched 0 files; nothing was written\.\nNote: pattern is a glob, not a regular expression/,
    );
    expect(fs.readFileSync(path.join(dir, "src", "deep", "a.ts"), "utf8")).toBe("x\n");
    // A pattern that matched a file is not noted, even when nothing in it matched the query.
    expect(await call("search_file_contents", { path: dir, query: "zzz", pattern: "**/*.ts" })).toBe(
      "Found 0 matching lines in 0 files; searched 1 file.",
    );
  });
});
