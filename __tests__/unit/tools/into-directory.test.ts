/**
 * move_file and copy_file to a directory (as `mv a d`, `cp a d/` would take it): refused, nothing changed, the refusal
 * naming the destination that puts the source inside; a file is never made at a name given ending in a separator.
 * Under both platform strategies.
 */
import fs from "node:fs";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeEach, expect, it } from "vitest";
import { currentRuntime, describeEachStrategy, materialize, tempDir } from "../../support/fixtures.js";
import { inProcess } from "../../support/in-process.js";

let dir: string;
let remove: () => Promise<void>;
let client: Client;
let closeAll: () => Promise<void>;

async function refusal(name: string, args: Record<string, unknown>): Promise<string> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  expect(result.isError).toBe(true);
  return result.content[0]?.type === "text" ? result.content[0].text : "";
}

const tree = () => fs.readdirSync(dir, { recursive: true }).map(String).sort();

describeEachStrategy("moving or copying to a directory", () => {
  beforeEach(async () => {
    ({ dir, remove } = await tempDir("into-dir-"));
    materialize(dir, { "a.txt": "a\n", d: { "b.txt": "b\n" }, e: {} });
    ({ client, close: closeAll } = await inProcess([dir], { runtime: currentRuntime() }));
  });

  afterEach(async () => {
    await closeAll();
    await remove();
  });

  it("an existing directory as destination: refused, naming the path inside it", async () => {
    const before = tree();
    const d = path.join(dir, "d");
    for (const [tool, source, extra] of [
      ["move_file", "a.txt", {}],
      ["copy_file", "a.txt", {}],
      ["move_file", "e", {}],
      ["copy_file", "e", { recursive: true }],
    ] as const) {
      for (const destination of [d, `${d}${path.sep}`]) {
        const text = await refusal(tool, { source: path.join(dir, source), destination, ...extra });
        expect(text).toMatch(/^Destination already exists: /);
        expect(text).toContain(`, a directory: to put ${source} inside it, pass destination ${path.join(d, source)}`);
      }
    }
    expect(tree()).toEqual(before);
  });

  it("an existing file as destination: refused without a word on directories", async () => {
    const text = await refusal("copy_file", { source: path.join(dir, "a.txt"), destination: path.join(dir, "d", "b.txt") });
    expect(text).toBe(`Destination already exists: ${path.join(dir, "d", "b.txt")}`);
  });

  it("a file to a name ending in a separator where no directory is: refused, no file made there", async () => {
    const before = tree();
    for (const tool of ["move_file", "copy_file"]) {
      const destination = `${path.join(dir, "nodir")}${path.sep}`;
      const text = await refusal(tool, { source: path.join(dir, "a.txt"), destination });
      expect(text).toBe(
        `Cannot ${tool === "move_file" ? "move" : "copy"} ${path.join(dir, "a.txt")} to ${destination}: a destination ending in a separator names ` +
          `a directory, and there is none there; pass the file's new path, as ${path.join(dir, "nodir", "a.txt")} to put it into that ` +
          "directory once it exists (create_directory makes it)",
      );
    }
    expect(tree()).toEqual(before);
  });

  it("a file named with a separator as the source: not a directory, for copy as for move", async () => {
    for (const tool of ["move_file", "copy_file"]) {
      const source = `${path.join(dir, "a.txt")}${path.sep}`;
      expect(await refusal(tool, { source, destination: path.join(dir, "x") })).toBe(`Not a directory: ${source}`);
    }
    expect(fs.existsSync(path.join(dir, "x"))).toBe(false);
  });
});
