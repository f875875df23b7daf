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

/** Most characters tools/list (compact JSON) and the initialize instructions may cost together (issue 13). */
const BUDGET = 13_500;

/** Which sibling each tool must point to, so the model picks the right one first time. */
const SIBLINGS: Record<string, string[]> = {
  read_text_file: ["read_multiple_files", "read_media_file", "search_file_contents"],
  read_file: ["read_text_file"],
  read_media_file: ["read_text_file"],
  read_multiple_files: ["read_text_file", "read_media_file"],
  write_file: ["edit_file", "create_directory", "append_file"],
  append_file: ["write_file"],
  edit_file: ["write_file"],
  create_directory: ["write_file", "move_file"],
  list_directory: ["list_directory_with_sizes", "directory_tree", "search_files"],
  list_directory_with_sizes: ["list_directory"],
  directory_tree: ["list_directory", "search_files"],
  search_files: ["search_file_contents", "list_directory"],
  search_file_contents: ["search_files", "read_text_file"],
  get_file_info: ["list_directory_with_sizes"],
  move_file: ["create_directory"],
  copy_file: ["move_file"],
  delete_file: [],
  list_allowed_directories: [],
};

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

const byName = (tools: Tool[], name: string): Tool => {
  const tool = tools.find((t) => t.name === name);
  if (!tool) throw new Error(`tools/list has no ${name}`);
  return tool;
};

let tools: Tool[];
let instructions: string;
let server: Connected | undefined;
let removeDir: (() => Promise<void>) | undefined;

beforeAll(async () => {
  const { dir, remove } = await tempDir("bfs-desc-");
  removeDir = remove;
  // Through the real command line, so the numbers come from flag parsing, not from a test-built config.
  server = await connect(["--max-result-chars", "12345", "--max-media-bytes", "678901", dir]);
  tools = (await server.client.listTools()).tools;
  instructions = server.client.getInstructions() ?? "";
});

afterAll(async () => {
  await server?.close();
  await removeDir?.();
});

describe("tool definitions and instructions as a client sees them", () => {
  it("lists the 18 tools the sibling table expects", () => {
    expect(tools.map((t) => t.name).sort()).toEqual(Object.keys(SIBLINGS).sort());
  });

  it("describes every parameter, nested ones included", () => {
    const params = tools.flatMap((t) => paramsOf(t.inputSchema as Record<string, unknown>, t.name));
    expect(params.map((p) => p.where)).toContain("edit_file.edits[].oldText");
    const undocumented = params.filter((p) => typeof p.schema.description !== "string" || p.schema.description.trim().length < 10);
    expect(undocumented.map((p) => p.where)).toEqual([]);
  });

  it("says the shared facts once, in the instructions: the cap and its notices, paths, ~, symlinks, globs", () => {
    expect(instructions).toContain("12,345 characters");
    expect(instructions).toContain("Call again with offset=B to continue.]");
    expect(instructions).toContain("To see the rest, <advice>.]");
    expect(instructions).toMatch(/relative to an allowed directory/);
    expect(instructions).toMatch(/~ is home/);
    expect(instructions).toMatch(/Symlinks/);
    expect(instructions).toMatch(/'\*\.md' the top level only, '\*\*\/\*\.md' any depth/);
    for (const tool of tools) expect(tool.description, tool.name).not.toMatch(/absolute, or relative to an allowed directory/);
  });

  it("quotes the configured limits: the cap in read_text_file, the media limit in read_media_file", () => {
    expect(byName(tools, "read_text_file").description).toContain("12,345 characters");
    const media = byName(tools, "read_media_file").description ?? "";
    expect(media).toContain("678,901 bytes");
    expect(media).toContain(`${(4 * Math.ceil(678_901 / 3)).toLocaleString("en-US")} characters`);
    for (const tool of tools) expect(tool.description, tool.name).not.toMatch(/50,000|5,242,880/);
  });

  it("names the sibling tools to use instead", () => {
    for (const [name, siblings] of Object.entries(SIBLINGS)) {
      const description = byName(tools, name).description ?? "";
      for (const sibling of siblings) expect(description, `${name} should name ${sibling}`).toContain(sibling);
    }
  });

  it("starts with what the tool does", () => {
    const verb = /^(Deprecated alias of read_text_file|Read|Create|Edit|List|Return|Find|Move|Add|Copy|Delete)\b/;
    for (const tool of tools) expect(tool.description, tool.name).toMatch(verb);
  });

  it("says how each tool fails, except the alias and the list of directories", () => {
    for (const tool of tools) {
      if (tool.name === "list_allowed_directories" || tool.name === "read_file") continue;
      expect(tool.description, tool.name).toMatch(/\bfail|\brefus/i);
    }
  });

  it("keeps read_file to one line that points at read_text_file, with the same parameters", () => {
    const alias = byName(tools, "read_file");
    const original = byName(tools, "read_text_file");
    expect(alias.description).toBe("Deprecated alias of read_text_file: same parameters, same behaviour.");
    expect(Object.keys(alias.inputSchema.properties ?? {})).toEqual(Object.keys(original.inputSchema.properties ?? {}));
  });

  it("carries no schema noise: no $schema, no safe-integer bounds", () => {
    const json = JSON.stringify(tools);
    expect(json).not.toContain("$schema");
    expect(json).not.toContain(String(Number.MAX_SAFE_INTEGER));
  });
});

describe("the size budget with the default limits", () => {
  it(`tools/list as compact JSON plus the instructions stays within ${BUDGET.toLocaleString("en-US")} characters`, async () => {
    const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
    const inProcess = buildServer({ limits: DEFAULTS, directories: [], log: () => undefined });
    const client = new Client({ name: "descriptions-test", version: "1.0.0" });
    try {
      await inProcess.connect(serverSide);
      await client.connect(clientSide);
      const listed = (await client.listTools()).tools;
      const size = JSON.stringify(listed).length + (client.getInstructions() ?? "").length;
      expect(size).toBeLessThanOrEqual(BUDGET);
      expect(byName(listed, "read_text_file").description).toContain("50,000 characters");
      expect(byName(listed, "read_media_file").description).toContain("5,242,880 bytes");
    } finally {
      await client.close();
      await inProcess.close();
    }
  });
});
