/**
 * The tool definitions a model reads before its first call (SPEC §4, §19, STYLE 11),
 * as a client gets them from the built server: every parameter described, the
 * siblings a model could confuse named by each other, the configured limits quoted,
 * every annotation hint of each tool as sent, none of
 * the over-compressed phrases of issues 21 and 26, and the size of the whole surface within budget —
 * for every tool set README prints.
 */
import { readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, inProcess, textOf, type InProcess } from "../../support/in-process.js";
import { tempDir } from "../../support/fixtures.js";

/** Most characters tools/list (compact JSON) and the initialize instructions may cost together, every tool offered (SPEC §22). */
const BUDGET = 14_500;

/** Tools a model could take for one another: each names every other one of its group. */
const SIBLING_GROUPS = [
  ["read_text_file", "read_multiple_files"],
  ["search_files", "search_file_contents", "replace_in_files"],
  ["edit_file", "replace_in_files"],
  ["list_directory", "directory_tree", "list_directory_with_sizes"],
  ["write_file", "edit_file", "append_file"],
  ["move_file", "copy_file"],
];
/** Further pointers: the tool to use instead. */
const POINTERS: [string, string][] = [
  ["read_file", "read_text_file"],
  ["read_media_file", "read_text_file"],
  ["read_text_file", "read_media_file"],
  ["search_files", "list_directory"],
];

/**
 * Each tool's annotations exactly as sent (SPEC §3, §4, §15): a tool that changes files states all four hints, a
 * read-only one readOnlyHint (MCP gives destructive and idempotent meaning only when it is false); all add openWorldHint: false.
 */
const READS = { readOnlyHint: true };
const ANNOTATIONS: Record<string, Record<string, boolean>> = {
  read_file: READS,
  read_text_file: READS,
  read_media_file: READS,
  read_multiple_files: READS,
  write_file: { readOnlyHint: false, idempotentHint: true, destructiveHint: true },
  append_file: { readOnlyHint: false, idempotentHint: false, destructiveHint: false },
  edit_file: { readOnlyHint: false, idempotentHint: false, destructiveHint: true },
  replace_in_files: { readOnlyHint: false, idempotentHint: false, destructiveHint: true },
  create_directory: { readOnlyHint: false, idempotentHint: true, destructiveHint: false },
  list_directory: READS,
  list_directory_with_sizes: READS,
  directory_tree: READS,
  move_file: { readOnlyHint: false, idempotentHint: false, destructiveHint: false },
  copy_file: { readOnlyHint: false, idempotentHint: true, destructiveHint: false },
  delete_file: { readOnlyHint: false, idempotentHint: true, destructiveHint: true },
  search_files: READS,
  search_file_contents: READS,
  get_file_info: READS,
  list_allowed_directories: READS,
};
const hintsFor = (name: string) => ({ ...ANNOTATIONS[name], openWorldHint: false });

/** Phrases issues 21 and 26 quoted as misread by a hurried reader, and the telegraphese of their kind. */
const OVER_COMPRESSED = [
  /must match once: exactly, else/,
  /else the first that holds its parent/,
  /\(none: error\)/,
  /list the same/,
  /None or several/,
  /Most characters; default and most/,
  /the first where (the path|it), else its parent, exists/,
  /its notice counts the files in full/,
  /equal to oldText's after trimming/,
  /a bare name at any depth/,
  /\bMost characters\b/,
  /Deprecated alias of read_text_file: same parameters, same behaviour/,
];

interface Param {
  /** Dotted location, e.g. `edit_file.edits[].oldText`. */
  where: string;
  schema: Record<string, unknown>;
}

/** Every property of every object schema in the tree, nested ones (array items) included. */
function paramsOf(schema: Record<string, unknown>, where: string): Param[] {
  const found: Param[] = [];
  const properties = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
  for (const [name, property] of Object.entries(properties)) {
    found.push({ where: `${where}.${name}`, schema: property });
    found.push(...paramsOf(property, `${where}.${name}`));
  }
  const items = schema.items as Record<string, unknown> | undefined;
  if (items && typeof items === "object") found.push(...paramsOf(items, `${where}[]`));
  return found;
}

const byName = (tools: Tool[], name: string): Tool => {
  const tool = tools.find((t) => t.name === name);
  if (!tool) throw new Error(`tools/list has no ${name}`);
  return tool;
};
const descriptionOf = (tools: Tool[], name: string): string => byName(tools, name).description ?? "";
const paramDoc = (tools: Tool[], name: string, param: string): string =>
  String((byName(tools, name).inputSchema.properties?.[param] as { description?: string } | undefined)?.description);

/** What a client receives from the built server started with `flags`: the tools, the instructions, and their size. */
async function surface(flags: string[], dir: string): Promise<{ tools: Tool[]; instructions: string; size: number }> {
  const server = await inProcess([...flags, dir]);
  try {
    const { tools } = await server.client.listTools();
    const instructions = server.client.getInstructions() ?? "";
    return { tools, instructions, size: JSON.stringify({ tools }).length + instructions.length };
  } finally {
    await server.close();
  }
}

let dir: string;
let removeDir: (() => Promise<void>) | undefined;
beforeAll(async () => {
  ({ dir, remove: removeDir } = await tempDir("bfs-desc-"));
});
afterAll(() => removeDir?.());

describe("tool definitions and instructions as a client sees them, under configured limits", () => {
  let tools: Tool[];
  let instructions: string;
  let server: InProcess | undefined;
  beforeAll(async () => {
    // Through the real command line, so the numbers come from flag parsing, not from a test-built config.
    server = await inProcess(["--max-result-chars", "12345", "--max-media-bytes", "678901", dir]);
    tools = (await server.client.listTools()).tools;
    instructions = server.client.getInstructions() ?? "";
  });
  afterAll(() => server?.close());

  it("lists the 19 tools, each with the annotations of the table", () => {
    expect(tools.map((t) => t.name).sort()).toEqual(Object.keys(ANNOTATIONS).sort());
    for (const tool of tools) expect(tool.annotations, tool.name).toEqual(hintsFor(tool.name));
  });

  it("describes every parameter, nested ones included", () => {
    const params = tools.flatMap((t) => paramsOf(t.inputSchema as Record<string, unknown>, t.name));
    expect(params.map((p) => p.where)).toContain("edit_file.edits[].oldText");
    expect(params.length).toBeGreaterThan(40);
    const undocumented = params.filter((p) => typeof p.schema.description !== "string" || p.schema.description.trim().length < 10);
    expect(undocumented.map((p) => p.where)).toEqual([]);
  });

  it("says the shared facts once, in the instructions: the cap, paths, ~, symlinks, globs", () => {
    expect(instructions).toContain("over 12,345 characters");
    expect(instructions).toContain("'Call again with offset=N to continue.]'");
    expect(instructions).toContain("'To see the rest, <advice>.]'");
    expect(instructions).toMatch(/relative to the first allowed directory in which the path exists \(for a new path, its parent\)/);
    expect(instructions).toMatch(/~ is home/);
    expect(instructions).toMatch(/Symlinks leading outside are refused/);
    expect(instructions).toMatch(/'\*\.md' top level only, '\*\*\/\*\.md' any depth/);
    for (const tool of tools) expect(tool.description, tool.name).not.toMatch(/relative to the first allowed directory|'\*\*\/\*\.md' any depth/);
  });

  it("says plainly where a tool differs from the shared rules, and every boolean and enum states its default", () => {
    // .gitignore: on by default in search_file_contents and replace_in_files, off in the others; every schema's default says which.
    const gitignoreDefault = (name: string) =>
      (byName(tools, name).inputSchema.properties?.respectGitignore as { default?: unknown } | undefined)?.default;
    for (const name of ["search_file_contents", "replace_in_files"]) {
      expect(gitignoreDefault(name), name).toBe(true);
      expect(paramDoc(tools, name, "respectGitignore"), name).toMatch(/^Skip /);
    }
    for (const name of ["search_files", "directory_tree"]) {
      expect(gitignoreDefault(name), name).toBe(false);
      expect(paramDoc(tools, name, "respectGitignore"), name).toMatch(/^true: /);
    }
    // Exclusions: directory_tree alone also takes a pattern without * as a name at any depth.
    expect(paramDoc(tools, "directory_tree", "excludePatterns")).toMatch(/without \* also matches a name at any depth/);
    expect(paramDoc(tools, "search_files", "excludePatterns")).not.toMatch(/any depth/);
    expect(paramDoc(tools, "search_file_contents", "caseSensitive")).toMatch(/Unlike grep, off by default/);
    const params = tools.flatMap((t) => paramsOf(t.inputSchema as Record<string, unknown>, t.name));
    const choices = params.filter((p) => p.schema.type === "boolean" || Array.isArray(p.schema.enum));
    expect(choices.length).toBeGreaterThan(15);
    const silent = choices.filter((p) => p.schema.default === undefined && !/\bdefault\b/i.test(String(p.schema.description)));
    expect(silent.map((p) => p.where)).toEqual([]);
    // A default of 0 is not sent in the schema (noise), so the numbers that have one say it, as do the other numbers with a default.
    const numbers = ["read_text_file.offset", "read_text_file.limit", "read_text_file.startLine", "read_text_file.lineCount"];
    for (const where of [
      ...numbers,
      "read_file.offset",
      "read_file.startLine",
      "search_file_contents.contextLines",
      "search_file_contents.offset",
      "directory_tree.maxDepth",
    ]) {
      expect(String(params.find((p) => p.where === where)?.schema.description), where).toMatch(/\bdefault\b/);
    }
  });

  it("stands alone: no tool leans on the instructions for its own limits or failures", () => {
    const texts = tools.flatMap((t) => [
      t.description ?? "",
      ...paramsOf(t.inputSchema as Record<string, unknown>, t.name).map((p) => String(p.schema.description)),
    ]);
    for (const text of texts) expect(text).not.toMatch(/\bthe cap\b|a cut notice|Fails like|missing parent(?!s| directory)/);
    for (const name of ["write_file", "append_file"])
      expect(descriptionOf(tools, name), name).toMatch(/missing parent directory \(create_directory\)/);
    expect(descriptionOf(tools, "read_multiple_files")).toMatch(/reread a file cut there with read_text_file/);
    expect(descriptionOf(tools, "get_file_info")).toMatch(/text \(false if binary: a NUL byte in the first 8 KiB, or a UTF-16 mark\)/);
    expect(descriptionOf(tools, "replace_in_files")).toContain("100,000 replacements");
  });

  it("quotes the configured limits: the cap in read_text_file, the media limit and its base64 size in read_media_file", () => {
    expect(descriptionOf(tools, "read_text_file")).toContain("12,345 characters");
    const media = descriptionOf(tools, "read_media_file");
    expect(media).toContain("678,901 bytes");
    expect(media).toContain(`${(4 * Math.ceil(678_901 / 3)).toLocaleString("en-US")} base64 characters`);
    for (const tool of tools) expect(tool.description, tool.name).not.toMatch(/50,000|5,242,880/);
    expect(instructions).not.toMatch(/50,000/);
  });

  it("names, in each tool of a group a model could confuse, every other tool of the group", () => {
    for (const group of SIBLING_GROUPS) {
      for (const name of group) {
        for (const sibling of group) if (sibling !== name) expect(descriptionOf(tools, name), `${name} should name ${sibling}`).toContain(sibling);
      }
    }
    for (const [name, other] of POINTERS) expect(descriptionOf(tools, name), `${name} should name ${other}`).toContain(other);
  });

  it("starts each description with what the tool does, and says how it fails where it can fail in its own way", () => {
    const verb = /^(Deprecated: use read_text_file|Read|Create|Replace|List|Return|Find|Move|Add|Copy|Delete)\b/;
    for (const tool of tools) expect(tool.description, tool.name).toMatch(verb);
    // The listings fail in no way of their own: only on a path that is not a directory, which their parameter asks for.
    const listings = ["list_directory", "list_directory_with_sizes", "directory_tree", "search_files"];
    const ownFailures = Object.keys(ANNOTATIONS).filter((n) => ![...listings, "read_file", "list_allowed_directories", "get_file_info"].includes(n));
    for (const name of ownFailures) expect(descriptionOf(tools, name), name).toMatch(/\bfail|\brefus/i);
  });

  it("steers directory_tree to maxDepth first, and shows a symlinked directory in list_directory as a directory", () => {
    expect(descriptionOf(tools, "directory_tree")).toMatch(/start with maxDepth/);
    expect(descriptionOf(tools, "list_directory")).toMatch(/'\[DIR\] name' \(a link to a directory too\)/);
  });

  it("has none of the over-compressed phrases issues 21 and 26 quoted", () => {
    const texts = [
      instructions,
      ...tools.flatMap((t) => [
        t.description ?? "",
        ...paramsOf(t.inputSchema as Record<string, unknown>, t.name).map((p) => String(p.schema.description)),
      ]),
    ];
    for (const phrase of OVER_COMPRESSED) for (const text of texts) expect(text).not.toMatch(phrase);
  });

  it("keeps read_file to one short line that points at read_text_file, advertising and taking all its parameters", async () => {
    const alias = byName(tools, "read_file");
    expect(alias.description).toBe("Deprecated: use read_text_file (same parameters, same result).");
    const own = byName(tools, "read_text_file").inputSchema.properties ?? {};
    expect(Object.keys(alias.inputSchema.properties ?? {})).toEqual(Object.keys(own));
    expect(JSON.stringify(alias).length).toBeLessThan(800);
    const file = path.join(dir, "alias.txt");
    await writeFile(file, "one\ntwo\nthree\n");
    for (const args of [{ offset: 4, limit: 3 }, { startLine: 2, lineCount: 1 }, { head: 1 }]) {
      const viaAlias = await call(server!.client, "read_file", { path: file, ...args });
      expect(textOf(viaAlias), JSON.stringify(args)).toBe(textOf(await call(server!.client, "read_text_file", { path: file, ...args })));
    }
    expect(textOf(await call(server!.client, "read_file", { path: file, offset: 4, limit: 3 }))).toMatch(
      /^two\n\[Result truncated: showing characters 5-7 of 14\. Call again with offset=7/,
    );
    const clash = await call(server!.client, "read_file", { path: file, head: 1, offset: 2 });
    expect(clash.isError).toBe(true);
  });

  it("carries no schema noise: no $schema, no safe-integer bounds, no defaults of 0 or [], no bare minimum of 0", () => {
    const json = JSON.stringify(tools);
    expect(json).not.toContain("$schema");
    expect(json).not.toContain(String(Number.MAX_SAFE_INTEGER));
    expect(json).not.toMatch(/"default":(0|\[\])/);
    expect(json).toContain('"default":false');
    expect(json).toContain('"default":"name"');
    const params = tools.flatMap((t) => paramsOf(t.inputSchema as Record<string, unknown>, t.name));
    expect(params.filter((p) => p.schema.minimum === 0 && p.schema.maximum === undefined).map((p) => p.where)).toEqual([]);
    // A range keeps its 0, and what strict clients refuse without stays: an enum's type, a parameterless tool's properties.
    expect(params.find((p) => p.where === "search_file_contents.contextLines")?.schema).toMatchObject({ minimum: 0, maximum: 10 });
    for (const p of params.filter((p) => Array.isArray(p.schema.enum))) expect(p.schema.type, p.where).toBe("string");
    expect(byName(tools, "list_allowed_directories").inputSchema).toEqual({ type: "object", properties: {} });
  });
});

// README's table of trimmed sets: | set | `flags` | tools | characters |
const README = readFileSync(new URL("../../../README.md", import.meta.url), "utf8");
const SECTION = README.slice(README.indexOf("## Choosing the tools"), README.indexOf("\n## ", README.indexOf("## Choosing the tools") + 1));
const SETS = [...SECTION.matchAll(/^\| [^|]+ \| (?:`([^`]*)`)? *\| (\d+) \| ([\d,]+) \|$/gm)].map((m) => ({
  flags: (m[1] ?? "").split(" ").filter((f) => f !== ""),
  count: Number(m[2]),
  size: Number((m[3] ?? "").replaceAll(",", "")),
}));

describe("the size of the surface, with the default limits", () => {
  it(`with every tool, tools/list as compact JSON plus the instructions stays within ${BUDGET.toLocaleString("en-US")} characters`, async () => {
    const { tools, size } = await surface([], dir);
    expect(tools).toHaveLength(19);
    expect(size).toBeLessThanOrEqual(BUDGET);
    expect(descriptionOf(tools, "read_text_file")).toContain("50,000 characters");
    expect(descriptionOf(tools, "read_media_file")).toContain("5,242,880 bytes");
  });

  it("README prints each trimmed set's tool count and size as the built server reports them", async () => {
    expect(SETS.length).toBeGreaterThanOrEqual(5);
    expect(SETS[0]?.flags).toEqual([]);
    for (const set of SETS) {
      const { tools, size } = await surface(set.flags, dir);
      expect({ flags: set.flags, count: tools.length, size }).toEqual(set);
    }
  });
});
