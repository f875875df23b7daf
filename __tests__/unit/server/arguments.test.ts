/**
 * Misnamed parameters: a name that is nearly one the call leaves out (dry_run for dryRun) is refused with the name
 * meant, before anything is done, since ignoring it would change what the call does; other unknown names are ignored,
 * as upstream does.
 */
import fs from "node:fs";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { nearlyNamed, textTaken } from "../../../src/server/arguments.js";
import { currentRuntime, tempDir } from "../../support/fixtures.js";
import { inProcess } from "../../support/in-process.js";

let dir: string;
let remove: () => Promise<void>;
let client: Client;
let closeAll: () => Promise<void>;

beforeEach(async () => {
  ({ dir, remove } = await tempDir("arguments-"));
  ({ client, close: closeAll } = await inProcess([dir], { runtime: currentRuntime() }));
});

afterEach(async () => {
  await closeAll();
  await remove();
});

async function call(name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

const textOf = (r: CallToolResult): string => (r.content[0]?.type === "text" ? r.content[0].text : "");

describe("nearlyNamed", () => {
  it.each([
    ["dry_run", "dryRun"],
    ["DryRun", "dryRun"],
    ["max-depth", "maxDepth"],
    ["output", "outputMode"],
    ["mode", "outputMode"],
    ["depth", "maxDepth"],
    ["context", "contextLines"],
    ["caseInsensitive", "caseSensitive"],
    ["path", "paths"],
    ["replace_all", "replaceAll"],
    ["excludes", "exclude"],
  ])("%s reads as %s", (given, name) => expect(nearlyNamed(given, name)).toBe(true));

  it.each([
    ["encoding", "path"],
    ["explanation", "edits"],
    ["lines", "limit"],
    ["pat", "path"],
    ["x".repeat(41), "x".repeat(41)],
    ["recursive", "respectGitignore"],
  ])("%s does not read as %s", (given, name) => expect(nearlyNamed(given, name)).toBe(false));
});

describe("a misnamed parameter is refused before anything is done", () => {
  // An edit_file call on a file holding `content` is refused with `refusal`, and the file keeps its text.
  async function refusedUnchanged(content: string, args: Record<string, unknown>, refusal: string): Promise<void> {
    const file = path.join(dir, "a.txt");
    fs.writeFileSync(file, content);
    const result = await call("edit_file", { path: file, ...args });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe(refusal);
    expect(fs.readFileSync(file, "utf8")).toBe(content);
  }

  it("edit_file with dry_run writes nothing and names dryRun", async () => {
    await refusedUnchanged(
      "one\ntwo\n",
      { edits: [{ oldText: "two", newText: "2" }], dry_run: true },
      "Invalid arguments for edit_file: dry_run is not a parameter of edit_file; did you mean dryRun? Nothing was done. " +
        "Its parameters: path, edits, dryRun, diff.",
    );
  });

  it("an edit's replace_all is named with its item, and nothing is written", async () => {
    await refusedUnchanged(
      "x x\n",
      {
        edits: [
          { oldText: "x x", newText: "y y" },
          { oldText: "y", newText: "z", replace_all: true },
        ],
      },
      "Invalid arguments for edit_file: edits[1].replace_all is not a field of edits' items; did you mean " +
        "edits[1].replaceAll? Nothing was done. The fields of edits' items: oldText, newText, replaceAll.",
    );
  });

  it("a misnamed parameter with a line break in its name is shown escaped", async () => {
    const result = await call("edit_file", { path: path.join(dir, "a.txt"), edits: [{ oldText: "a", newText: "b" }], "dry_run\nFAKE": true });
    expect(textOf(result)).toMatch(/^Invalid arguments for edit_file: dry_run\\nFAKE is not a parameter of edit_file; did you mean dryRun\?/);
  });

  it("only the first 64 names and the first 64 items are looked at (a hostile call may carry thousands)", async () => {
    const file = path.join(dir, "a.txt");
    fs.writeFileSync(file, "one\n");
    const names = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`other${i}`, i]));
    const edits = [{ oldText: "one", newText: "1" }];
    // dry_run as the 64th name is refused; as the 65th it is ignored, as any unknown name: no dry run, the file is written.
    expect(textOf(await call("edit_file", { ...names(61), path: file, edits, dry_run: true }))).toMatch(/dry_run is not a parameter/);
    const past = await call("edit_file", { ...names(62), path: file, edits, dry_run: true });
    expect(past.isError).not.toBe(true);
    expect(fs.readFileSync(file, "utf8")).toBe("1\n");
    const items = (n: number) => [
      ...Array.from({ length: n }, () => ({ oldText: "1", newText: "1" })),
      { oldText: "1", newText: "1", replace_all: true },
    ];
    expect(textOf(await call("edit_file", { path: file, edits: items(63), dryRun: true }))).toMatch(/edits\[63\]\.replace_all is not a field/);
    expect(textOf(await call("edit_file", { path: file, edits: items(64), dryRun: true }))).not.toMatch(/replace_all/);
  });

  it("old_text names oldText instead of the schema's missing-field message", async () => {
    const result = await call("edit_file", { path: path.join(dir, "a.txt"), edits: [{ old_text: "a", newText: "b" }] });
    expect(textOf(result)).toContain("edits[0].old_text is not a field of edits' items; did you mean edits[0].oldText?");
  });

  it("search_file_contents with output names outputMode", async () => {
    fs.writeFileSync(path.join(dir, "a.txt"), "needle\n");
    const result = await call("search_file_contents", { path: dir, query: "needle", output: "count" });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(
      /^Invalid arguments for search_file_contents: output is not a parameter of search_file_contents; did you mean outputMode\?/,
    );
  });

  it("write_file with contents and no content writes nothing", async () => {
    const file = path.join(dir, "new.txt");
    const result = await call("write_file", { path: file, contents: "text" });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("contents is not a parameter of write_file; did you mean content?");
    expect(fs.existsSync(file)).toBe(false);
  });
});

describe("other unknown names are ignored, as upstream does", () => {
  it("read_text_file with encoding reads the file", async () => {
    const file = path.join(dir, "a.txt");
    fs.writeFileSync(file, "text\n");
    const result = await call("read_text_file", { path: file, encoding: "utf-8" });
    expect(result.isError).not.toBe(true);
    expect(textOf(result)).toBe("text\n");
  });

  it("a name near one the call already gives is ignored too", async () => {
    const file = path.join(dir, "a.txt");
    fs.writeFileSync(file, "one\n");
    const result = await call("edit_file", { path: file, edits: [{ oldText: "one", newText: "1" }], dryRun: true, dry_run: true });
    expect(result.isError).not.toBe(true);
    expect(fs.readFileSync(file, "utf8")).toBe("one\n");
  });
});

describe("an array sent as its JSON text", () => {
  const shape = {
    path: z.string(),
    edits: z.array(z.object({ oldText: z.string() })),
    head: z.number().int().optional(),
    paths: z.array(z.string()).default([]),
  };

  it("is taken as the array it spells; a string parameter is never touched", () => {
    const given = { path: "[1]", edits: ' [{"oldText":"a"}]', paths: ["x"] };
    expect(textTaken(shape, given)).toEqual({ path: "[1]", edits: [{ oldText: "a" }], paths: ["x"] });
  });

  it("other text, and other kinds sent as text, are left for the schema to refuse; the arguments themselves come back", () => {
    const deep = `[${"[".repeat(100_000)}${"]".repeat(100_000)}]`;
    for (const given of [
      { edits: "[not json" },
      { edits: '{"oldText":"a"}' },
      { paths: "/d/a.txt" },
      { head: "12" },
      { edits: "[1" },
      { edits: deep },
    ]) {
      expect(textTaken(shape, given)).toBe(given);
    }
    const typed = { path: "a", edits: [{ oldText: "a" }], head: 3 };
    expect(textTaken(shape, typed)).toBe(typed);
  });
});

describe("edit_file with edits sent as JSON text, as several clients send them", () => {
  it("applies the edits; a dry run writes nothing", async () => {
    const file = path.join(dir, "a.txt");
    fs.writeFileSync(file, "one\ntwo\n");
    const edits = JSON.stringify([{ oldText: "two", newText: "2" }]);
    const dry = await call("edit_file", { path: file, edits, dryRun: true });
    expect(dry.isError).not.toBe(true);
    expect(textOf(dry)).toContain("+2");
    expect(fs.readFileSync(file, "utf8")).toBe("one\ntwo\n");
    const done = await call("edit_file", { path: file, edits });
    expect(done.isError).not.toBe(true);
    expect(fs.readFileSync(file, "utf8")).toBe("one\n2\n");
  });

  it("text nested past any parameter's items is refused naming edits, the session kept", async () => {
    for (const edits of [`${"[".repeat(100_000)}${"]".repeat(100_000)}`, `[{"oldText":${"[".repeat(100_000)}${"]".repeat(100_000)}}]`]) {
      const result = await call("edit_file", { path: path.join(dir, "a.txt"), edits });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/^Invalid arguments for edit_file: edits: Invalid input: expected array, received string/);
    }
    expect(textOf(await call("list_allowed_directories", {}))).toContain(dir);
  });

  it("text that is not the JSON of an array is refused naming edits", async () => {
    const result = await call("edit_file", { path: path.join(dir, "a.txt"), edits: "two -> 2" });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^Invalid arguments for edit_file: edits: Invalid input: expected array, received string/);
  });
});

describe("many items", () => {
  it("an array parameter over 10,000 items is refused before the schema, naming it and the limit", async () => {
    const file = path.join(dir, "a.txt");
    fs.writeFileSync(file, "one\n");
    const edits = Array.from({ length: 10_001 }, () => ({ oldText: "one", newText: "1" }));
    const result = await call("edit_file", { path: file, edits });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe(
      "Invalid arguments for edit_file: edits holds 10,001 items; the limit is 10,000 a call. Nothing was done; split the work into calls.",
    );
    expect(fs.readFileSync(file, "utf8")).toBe("one\n");
    // Sent as JSON text, the same.
    expect(textOf(await call("read_multiple_files", { paths: JSON.stringify(Array.from({ length: 10_001 }, () => file)) }))).toMatch(
      /^Invalid arguments for read_multiple_files: paths holds 10,001 items; the limit is 10,000/,
    );
  });

  it("the same mistake over many items is named ten times, then counted", async () => {
    const result = await call("edit_file", { path: path.join(dir, "a.txt"), edits: Array.from({ length: 12 }, (_, i) => i) });
    const text = textOf(result);
    expect(text.match(/expected object, received number/g)).toHaveLength(10);
    expect(text).toMatch(
      /^Invalid arguments for edit_file: edits\.0: .*; edits\.9: Invalid input: expected object, received number \(got 9\); and 2 more$/,
    );
  });
});

describe("an unpaired UTF-16 surrogate in a text parameter", () => {
  it("is refused before anything is done, naming the parameter, the unit and where it stands", async () => {
    // Node writes U+FFFD for it: write_file said `Successfully wrote` and the file held other text.
    const written = await call("write_file", { path: path.join(dir, "s.txt"), content: "a\ud800b" });
    expect(written.isError).toBe(true);
    expect(textOf(written)).toBe(
      "Invalid arguments for write_file: content holds an unpaired UTF-16 surrogate (\\ud800, at character 1), which UTF-8 cannot " +
        "encode: a file would get U+FFFD in its place, and a path or query would match nothing. Nothing was done; send valid Unicode.",
    );
    expect(fs.existsSync(path.join(dir, "s.txt"))).toBe(false);
    fs.writeFileSync(path.join(dir, "e.txt"), "one\n");
    const edited = await call("edit_file", {
      path: path.join(dir, "e.txt"),
      edits: [
        { oldText: "one", newText: "1" },
        { oldText: "1", newText: "x\udc00" },
      ],
    });
    expect(textOf(edited)).toMatch(
      /^Invalid arguments for edit_file: edits\[1\]\.newText holds an unpaired UTF-16 surrogate \(\\udc00, at character 1\)/,
    );
    expect(fs.readFileSync(path.join(dir, "e.txt"), "utf8")).toBe("one\n");
    expect(textOf(await call("search_file_contents", { path: dir, query: "\ud83d" }))).toMatch(
      /^Invalid arguments for search_file_contents: query holds/,
    );
  });

  it("a pair, an emoji, is text like any other", async () => {
    const written = await call("write_file", { path: path.join(dir, "ok.txt"), content: "ok \ud83d\ude00 é" });
    expect(written.isError ?? false).toBe(false);
    expect(fs.readFileSync(path.join(dir, "ok.txt"), "utf8")).toBe("ok 😀 é");
  });
});
