/** Roots replace the allowed directories: at initialization and on list_changed. */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { ListRootsRequestSchema, type Root } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, inProcess, textOf } from "../../support/in-process.js";
import { tempDir } from "../../support/fixtures.js";

let base: string;
let remove: () => Promise<void>;

beforeAll(async () => {
  ({ dir: base, remove } = await tempDir("bfs-roots-"));
  for (const d of ["start", "first root", "second%root"]) {
    await mkdir(path.join(base, d));
    await writeFile(path.join(base, d, "f.txt"), d);
  }
});
afterAll(() => remove());

describe("roots", () => {
  it("replaces the command-line directories with the client's roots, and again on list_changed", async () => {
    let roots: Root[] = [
      { uri: pathToFileURL(path.join(base, "first root")).href, name: "first" },
      { uri: pathToFileURL(path.join(base, "missing")).href },
    ];
    const server = await inProcess([path.join(base, "start")], {
      capabilities: { capabilities: { roots: { listChanged: true } } },
      prepare: (client) => client.setRequestHandler(ListRootsRequestSchema, () => ({ roots })),
    });
    try {
      const allowed = async () => textOf(await call(server.client, "list_allowed_directories"));
      await expect.poll(allowed).toBe(`Allowed directories:\n${path.join(base, "first root")}`);
      const old = await call(server.client, "read_text_file", { path: path.join(base, "start", "f.txt") });
      expect(old.isError).toBe(true);
      expect(textOf(await call(server.client, "read_text_file", { path: path.join(base, "first root", "f.txt") }))).toBe("first root");

      roots = [{ uri: pathToFileURL(path.join(base, "second%root")).href }];
      await server.client.sendRootsListChanged();
      await expect.poll(allowed).toBe(`Allowed directories:\n${path.join(base, "second%root")}`);

      roots = [{ uri: pathToFileURL(path.join(base, "nowhere")).href }];
      await server.client.sendRootsListChanged();
      await expect.poll(() => server.stderr()).toContain("No valid root directories");
      expect(await allowed()).toBe(`Allowed directories:\n${path.join(base, "second%root")}`);
    } finally {
      await server.close();
    }
  });
});
