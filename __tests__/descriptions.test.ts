/**
 * The tool definitions a model reads before its first call (SPEC §4, STYLE 11):
 * every parameter documented, each tool within a size budget, the configured
 * limits quoted in the descriptions, siblings named, failures described.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULTS } from "../src/server/config.js";
import { buildServer } from "../src/server/index.js";
import { connect, type Connected } from "./support/spawn.js";
import { tempDir } from "./support/fixtures.js";

/** Most characters one tool may spend on its description plus all parameter docs. */
const BUDGET = 1_200;

/** Tools whose text results are capped, so their description must quote the cap. */
const CAPPED = [
  "read_text_file",
  "read_file",
  "read_multiple_files",
  "list_directory",
  "list_directory_with_sizes",
  "directory_tree",
  "search_files",
  "edit_file",
];

/** Which sibling each tool must point to, so the model picks the right one first time. */
const SIBLINGS: Record<string, string[]> = {
  read_text_file: ["read_multiple_files", "read_media_file"],
  read_file: ["read_text_file", "read_multiple_files", "read_media_file"],
  read_media_file: ["read_text_file"],
  read_multiple_files: ["read_text_file", "read_media_file"],
  write_file: ["edit_file", "create_directory"],
  edit_file: ["write_file", "read_text_file"],
  create_directory: ["write_file"],
  list_directory: ["list_directory_with_sizes", "directory_tree", "search_files"],
  list_directory_with_sizes: ["list_directory", "directory_tree"],
  directory_tree: ["list_directory", "search_files"],
  search_files: ["list_directory", "directory_tree"],
  get_file_info: ["read_media_file", "list_directory_with_sizes"],
  move_file: ["create_directory", "write_file"],
  list_allowed_directories: [],
};

const PATH_PARAMS = new Set(["path", "paths", "source", "destination"]);

interface Param {
  /** Dotted location, e.g. `edit_file.edits[].oldText`. */
  where: string;
  name: string;
  schema: Record<string, unknown>;
}

/** Every property of every object schema in the tree, nested ones (array items) included. */
function paramsOf(schema: Record<string, unknown>, where: string): Param[] {
  const found: Param[] = [];
  const properties = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
  for (const [name, property] of Object.entries(properties)) {
    found.push({ where: `${where}.${name}`, name, schema: property });
    found.push(...paramsOf(property, `${where}.${name}`));
  }
  const items = schema.items as Record<string, unknown> | undefined;
  if (items && typeof items === "object") found.push(...paramsOf(items, `${where}[]`));
  return found;
}

/** Description plus every parameter description, as a client lists them. */
function docLength(tool: Tool): number {
  const params = paramsOf(tool.inputSchema as Record<string, unknown>, tool.name);
  return (tool.description ?? "").length + params.reduce((n, p) => n + String(p.schema.description ?? "").length, 0);
}

const byName = (tools: Tool[], name: string): Tool => {
  const tool = tools.find((t) => t.name === name);
  if (!tool) throw new Error(`tools/list has no ${name}`);
  return tool;
};

let tools: Tool[];
let server: Connected | undefined;
let removeDir: (() => Promise<void>) | undefined;

beforeAll(async () => {
  const { dir, remove } = await tempDir("bfs-desc-");
  removeDir = remove;
  // Through the real command line, so the numbers come from flag parsing, not from a test-built config.
  server = await connect(["--max-result-chars", "12345", "--max-media-bytes", "678901", dir]);
  tools = (await server.client.listTools()).tools;
});

afterAll(async () => {
  await server?.close();
  await removeDir?.();
});

describe("tool definitions as listed by a client", () => {
  it("lists the 14 tools the sibling table expects", () => {
    expect(tools.map((t) => t.name).sort()).toEqual(Object.keys(SIBLINGS).sort());
  });

  it("describes every parameter, nested ones included", () => {
    const params = tools.flatMap((t) => paramsOf(t.inputSchema as Record<string, unknown>, t.name));
    expect(params.map((p) => p.where)).toContain("edit_file.edits[].oldText");
    const undocumented = params.filter((p) => typeof p.schema.description !== "string" || p.schema.description.trim().length < 10);
    expect(undocumented.map((p) => p.where)).toEqual([]);
  });

  it(`keeps every tool within ${BUDGET} characters of description plus parameter docs`, () => {
    const over = tools.map((t) => ({ name: t.name, length: docLength(t) })).filter((t) => t.length > BUDGET);
    expect(over).toEqual([]);
    // The measure must count nested docs: edit_file's oldText/newText are part of its budget.
    const edit = byName(tools, "edit_file");
    expect(docLength(edit)).toBeGreaterThan((edit.description ?? "").length + 100);
  });

  it("quotes the configured result cap (--max-result-chars 12345) in every capped tool", () => {
    for (const name of CAPPED) expect(byName(tools, name).description, name).toContain("12,345");
    for (const tool of tools) expect(tool.description, tool.name).not.toContain("50,000");
  });

  it("quotes the configured media limit (--max-media-bytes 678901) in read_media_file", () => {
    const media = byName(tools, "read_media_file").description ?? "";
    expect(media).toContain("678,901 bytes");
    expect(media).not.toContain("5,242,880");
  });

  it("names the sibling tools to use instead", () => {
    for (const [name, siblings] of Object.entries(SIBLINGS)) {
      const description = byName(tools, name).description ?? "";
      for (const sibling of siblings) expect(description, `${name} should name ${sibling}`).toContain(sibling);
    }
  });

  it("starts with what the tool does", () => {
    const verb = /^(Deprecated: use read_text_file[^.]*\. )?(Read|Create|Edit|List|Return|Find|Move)\b/;
    for (const tool of tools) expect(tool.description, tool.name).toMatch(verb);
  });

  it("says how each tool fails, except the one that cannot", () => {
    for (const tool of tools) {
      if (tool.name === "list_allowed_directories") continue;
      expect(tool.description, tool.name).toMatch(/\bfails\b|\brefused\b/i);
    }
  });

  it("says what the paged reads do past the cap and which offset to pass", () => {
    for (const name of ["read_text_file", "read_file"]) {
      const tool = byName(tools, name);
      expect(tool.description, name).toMatch(/notice naming the offset/);
      const props = tool.inputSchema.properties as Record<string, { description: string }>;
      expect(props.offset?.description).toMatch(/Default 0/);
      expect(props.limit?.description).toMatch(/Default and maximum/);
      expect(props.head?.description).toMatch(/Not combinable with tail, offset or limit/);
      expect(props.tail?.description).toMatch(/Not combinable with head, offset or limit/);
    }
  });

  it("gives the format of every path parameter", () => {
    const paths = tools.flatMap((t) => paramsOf(t.inputSchema as Record<string, unknown>, t.name)).filter((p) => PATH_PARAMS.has(p.name));
    expect(paths.length).toBe(14);
    for (const p of paths) expect(p.schema.description, p.where).toMatch(/absolute, or relative to an allowed directory/i);
  });

  it("mentions the default of every parameter that has one", () => {
    const defaulted = tools
      .flatMap((t) => paramsOf(t.inputSchema as Record<string, unknown>, t.name))
      .filter((p) => "default" in p.schema);
    expect(defaulted.map((p) => p.where).sort()).toEqual([
      "directory_tree.excludePatterns",
      "directory_tree.respectGitignore",
      "edit_file.dryRun",
      "list_directory_with_sizes.sortBy",
      "search_files.excludePatterns",
      "search_files.respectGitignore",
      "write_file.append",
    ]);
    for (const p of defaulted) expect(p.schema.description, p.where).toMatch(/default/i);
  });
});

describe("tool definitions with the default limits", () => {
  it("quote 50,000 characters and 5,242,880 bytes", async () => {
    const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
    const inProcess = buildServer({ limits: DEFAULTS, directories: [], log: () => undefined });
    const client = new Client({ name: "descriptions-test", version: "1.0.0" });
    try {
      await inProcess.connect(serverSide);
      await client.connect(clientSide);
      const listed = (await client.listTools()).tools;
      for (const name of CAPPED) expect(byName(listed, name).description, name).toContain("50,000 characters");
      expect(byName(listed, "read_media_file").description).toContain("5,242,880 bytes");
      const over = listed.filter((t) => docLength(t) > BUDGET).map((t) => t.name);
      expect(over).toEqual([]);
    } finally {
      await client.close();
      await inProcess.close();
    }
  });
});
