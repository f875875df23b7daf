/**
 * A glob that matched nothing is followed by what it was likely meant as (GlobOutcome): empty, absolute, written as a
 * regex; and one without `/` that left out a deeper entry whose name it matches says so, whether or not it matched. Through the in-process server, under
 * both platform strategies, for search_files, search_file_contents and replace_in_files.
 */
import fs, { type Dirent } from "node:fs";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { GlobOutcome } from "../../../src/walking/patterns.js";
import { currentRuntime, describeEachStrategy, materialize, tempDir } from "../../support/fixtures.js";
import { inProcess } from "../../support/in-process.js";

// A directory entry as a walk hands it over.
const entry = (name: string, link = false): Dirent => ({ name, isSymbolicLink: () => link }) as Dirent;

// What a walk met: `matched` entries the glob took, `missed` ones it did not (rel, and whether a link).
function outcomeOf(pattern: string, matched: boolean, missed: [string, boolean][] = []): GlobOutcome {
  const outcome = new GlobOutcome(pattern);
  if (matched) outcome.matched();
  for (const [rel, link] of missed) outcome.missed(rel, entry(path.basename(rel), link));
  return outcome;
}

describe("GlobOutcome's note", () => {
  const root = path.resolve("/r");

  it("names the relative form of an absolute pattern inside the directory", () => {
    expect(outcomeOf(path.join(root, "src", "**", "*.ts"), false).note("pattern", root)).toBe(
      "\nNote: pattern is matched against paths relative to the directory searched, so an absolute one matches nothing; relative, it is src/**/*.ts.",
    );
    expect(outcomeOf(path.resolve("/elsewhere/*.ts"), false).note("pattern", root)).toMatch(/an absolute one matches nothing\.$/);
  });

  it.each([".*\\.ts$", "^src/", "*.ts$", "\\.md"])("%s reads as a regex", (pattern) => {
    expect(outcomeOf(pattern, false).note("pattern", root)).toMatch(/is a glob, not a regular expression/);
  });

  it("a pattern that matched, with nothing deeper left out, has no note", () => {
    expect(outcomeOf(".*\\.ts$", true).note("pattern", root)).toBe("");
    expect(outcomeOf("", true).note("pattern", root)).toBe("");
  });

  it("a slash-free pattern is noted when a deeper name matches it, whether or not it matched at the top", () => {
    const deep = path.join("src", "deep", "a.ts");
    // A top-level name is the pattern's own business, a link is not looked at (it may lead outside).
    const notDeeper: [string, boolean][] = [
      ["a.md", false],
      [path.join("src", "b.md"), false],
      ["c.ts.bak", false],
      [path.join("src", "l.ts"), true],
    ];
    expect(outcomeOf("*.ts", false, notDeeper).note("pattern", root)).toBe("");
    const note = /^\nNote: pattern holds no \/, .*; \*\*\/\*\.ts matches deeper ones too\.$/;
    expect(outcomeOf("*.ts", false, [...notDeeper, [deep, false]]).note("pattern", root)).toMatch(note);
    expect(outcomeOf("*.ts", true, [[deep, false]]).note("pattern", root)).toMatch(note);
  });

  it("a pattern with a line break is shown escaped", () => {
    expect(outcomeOf("a\nb*", false, [[path.join("src", "a\nbc"), false]]).note("pattern", root)).toContain("; **/a\\nb* matches deeper ones too.");
    expect(outcomeOf(path.join(root, "a\nb"), false).note("pattern", root)).toMatch(/; relative, it is a\\nb\.$/);
  });

  it("a pattern that matched nothing, and would ignoring letter case, names the first such entry; a slash-free one at any depth too", () => {
    expect(outcomeOf("src/*.PY", false, [[path.join("src", "Main.py"), false]]).note("pattern", root)).toBe(
      "\nNote: pattern matched nothing, but it matches src/Main.py if letter case is ignored; globs are matched case-sensitively here.",
    );
    expect(
      outcomeOf("*.PY", false, [
        ["notes.md", false],
        [path.join("src", "Main.py"), false],
      ]).note("pattern", root),
    ).toBe(
      "\nNote: pattern matched nothing; **/*.PY would match src/Main.py if letter case were ignored: globs are matched case-sensitively, " +
        "and one without / only against the entries directly inside the directory searched.",
    );
    // A walk that answers **\/<name> globs from the name alone passes "" for the path: the name is named.
    const byName = new GlobOutcome("**/README.MD");
    byName.missed("", entry("README.md"));
    expect(byName.note("pattern", root)).toMatch(/but it matches README\.md if letter case is ignored/);
    // One that matched, one with no letters, and a deeper entry that differs by depth only (the deeper note's) are not.
    expect(outcomeOf("*.PY", true, [[path.join("src", "Main.py"), false]]).note("pattern", root)).toBe("");
    expect(outcomeOf("*.123", false, [["a.123", false]]).note("pattern", root)).toBe("");
    expect(outcomeOf("*.py", false, [[path.join("src", "l.py"), true]]).note("pattern", root)).toBe("");
  });

  it("a pattern with a / is not looked for deeper", () => {
    expect(outcomeOf("src/*.ts", false, [[path.join("src", "deep", "a.ts"), false]]).note("pattern", root)).toBe("");
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

  it("search_files: *.md matched at the top and left out a deeper one: listed, then noted", async () => {
    fs.writeFileSync(path.join(dir, "src", "deep", "c.md"), "x\n");
    expect(await call("search_files", { path: dir, pattern: "*.md" })).toBe(
      `${path.join(dir, "top.md")}\nNote: pattern holds no /, so it is matched against the entries directly inside the directory searched; **/*.md matches deeper ones too.`,
    );
    expect(await call("search_file_contents", { path: dir, query: "x", pattern: "*.md", outputMode: "count" })).toMatch(
      /^Found 1 matching line \(1 occurrence\) in 1 file; searched 1 file\.\nNote: pattern holds no \/.*\*\*\/\*\.md matches deeper ones too\.$/,
    );
  });

  it("search_files: with a limit, the limit's line and then the note", async () => {
    fs.writeFileSync(path.join(dir, "second.md"), "x\n");
    fs.writeFileSync(path.join(dir, "src", "deep", "c.md"), "x\n");
    expect(await call("search_files", { path: dir, pattern: "*.md", limit: 1, sortBy: "name" })).toBe(
      `${path.join(dir, "second.md")}\n(1 of 2 matches shown: limit=1)\nNote: pattern holds no /, so it is matched against the entries ` +
        "directly inside the directory searched; **/*.md matches deeper ones too.",
    );
  });

  it("search_files: no note where nothing at any depth matches, or the pattern matched an entry a type left out", async () => {
    expect(await call("search_files", { path: dir, pattern: "*.py" })).toBe("No matches found");
    expect(await call("search_files", { path: dir, pattern: "*.md", type: "directory" })).toBe("No matches found");
  });

  it("search_files and search_file_contents: a pattern that missed only by letter case names an entry it would take", async () => {
    expect(await call("search_files", { path: dir, pattern: "SRC/**/*.TS" })).toBe(
      `No matches found\nNote: pattern matched nothing, but it matches src/deep/a.ts if letter case is ignored; globs are matched case-sensitively here.`,
    );
    expect(await call("search_file_contents", { path: dir, query: "x", pattern: "*.TS" })).toBe(
      "Found 0 matching lines in 0 files; searched 0 files.\nNote: pattern matched nothing; **/*.TS would match src/deep/a.ts if letter case " +
        "were ignored: globs are matched case-sensitively, and one without / only against the entries directly inside the directory searched.",
    );
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
  it("an exclude written as a path or a .gitignore line (./x, x/, /x, absolute) that left out nothing is noted with what to write", async () => {
    fs.mkdirSync(path.join(dir, "src", "node_modules"));
    fs.writeFileSync(path.join(dir, "src", "node_modules", "m.md"), "x\n");
    const gitignoreHabit = await call("search_files", { path: dir, pattern: "**/*.md", excludePatterns: ["node_modules/"] });
    expect(gitignoreHabit).toBe(
      `${path.join(dir, "src", "node_modules", "m.md")}\n${path.join(dir, "top.md")}\nNote: excludePatterns[0] node_modules/ left out nothing: excludes are ` +
        "matched against paths relative to the directory searched, without ./ before or / after; node_modules leaves out the entry directly " +
        "inside it, **/node_modules any.",
    );
    expect(await call("search_files", { path: dir, pattern: "**/*.md", excludePatterns: ["**/node_modules"] })).toBe(path.join(dir, "top.md"));
    expect(await call("search_file_contents", { path: dir, query: "x", outputMode: "count", excludePatterns: ["./src/"] })).toMatch(
      /^Found 4 matching lines \(4 occurrences\) in 4 files; searched 4 files\.\nNote: excludePatterns\[0\] \.\/src\/ left out nothing: .*; src leaves out/,
    );
    expect(
      await call("replace_in_files", {
        path: dir,
        query: "x",
        replacement: "y",
        dryRun: true,
        excludePatterns: ["top.md", path.join(dir, "src", "deep")],
      }),
    ).toMatch(
      /\nNote: excludePatterns\[1\] .* left out nothing: excludes are matched against paths relative to the directory searched; write src\/deep\.\n/,
    );
    // An absolute one outside the directory: a single name is taken as a .gitignore line's anchored one; a longer one
    // is not rewritten into a relative path that names something else.
    expect(await call("search_files", { path: dir, pattern: "**/*.md", excludePatterns: [`${path.sep}src`] })).toMatch(
      /; src leaves out the entry directly inside it, \*\*\/src any\.$/,
    );
    expect(
      await call("search_files", { path: path.join(dir, "src"), pattern: "**/*.md", excludePatterns: [path.join(dir, "elsewhere")] }),
    ).not.toContain("Note:");
    // One that left out an entry, or one written as excludes are (a trailing backslash escapes, it separates nothing), has no note.
    expect(await call("search_files", { path: dir, pattern: "**/*.md", excludePatterns: ["src", "nothing-here", "trailing\\"] })).toBe(
      path.join(dir, "top.md"),
    );
  });
});
