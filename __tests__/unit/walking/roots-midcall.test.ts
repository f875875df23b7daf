/**
 * Regression guard (issue 18): a search in flight when the client changed its
 * roots went on under the old ones and returned entries from a directory no
 * longer allowed. Each call now has the allowed directories of its start, and
 * a walk asks before every step whether the directories that replaced them
 * still hold where it is: if not, the call ends with an error and returns no
 * entry at all; if they do, it goes on. The walk is paused by a test hook at
 * a known directory while the roots change, so nothing depends on timing;
 * in process (buildServer + the SDK client), under both platform strategies.
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { type CallToolResult, Client, InMemoryTransport, type Root } from "@modelcontextprotocol/client";
import { afterEach, beforeEach, expect, it } from "vitest";
import { DEFAULTS } from "../../../src/cli/config.js";
import { buildServer } from "../../../src/server/index.js";
import type { Runtime } from "../../../src/server/runtime.js";
import { __walkHooks } from "../../../src/walking/walker.js";
import { describeEachStrategy, tempDir } from "../../support/fixtures.js";

let base: string;
let remove: () => Promise<void>;
let roots: Root[];
let client: Client;
let closeAll: () => Promise<void>;

const rootOf = (dir: string): Root => ({ uri: pathToFileURL(dir).href });
const textOf = (r: CallToolResult): string => (r.content[0]?.type === "text" ? r.content[0].text : "");
const call = async (name: string, args: Record<string, unknown>): Promise<CallToolResult> =>
  (await client.callTool({ name, arguments: args })) as CallToolResult;
const allowed = async (): Promise<string> => textOf(await call("list_allowed_directories", {}));

/** The tree, and a server on `runtime` whose client names project/ as its root. */
async function start(runtime: Runtime): Promise<void> {
  ({ dir: base, remove } = await tempDir("bfs-roots-midcall-"));
  // project/ is walked; project/second/ is where the walk waits; project/second/deep/ holds what must not come back.
  for (const d of ["project/first", "project/second/deep", "project/third", "elsewhere"]) await mkdir(path.join(base, d), { recursive: true });
  for (const f of ["project/first/a.txt", "project/second/deep/secret.txt", "project/third/c.txt", "elsewhere/e.txt"]) {
    await writeFile(path.join(base, f), "needle\n");
  }
  roots = [rootOf(path.join(base, "project"))];
  const server = buildServer({ limits: { ...DEFAULTS, maxResultChars: 100_000 }, directories: [], log: () => undefined, runtime });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  client = new Client({ name: "roots-midcall-test", version: "1.0.0" }, { capabilities: { roots: { listChanged: true } } });
  client.setRequestHandler("roots/list", () => ({ roots }));
  await client.connect(clientSide);
  await expect.poll(allowed).toBe(`Allowed directories:\n${path.join(base, "project")}`);
  closeAll = async () => {
    await client.close();
    await server.close();
  };
}

afterEach(async () => {
  delete __walkHooks.beforeDirectory;
  await closeAll();
  await remove();
});

/**
 * Starts `name` over project/, holds its walk when it is about to read project/second/deep, replaces the
 * roots with `next` meanwhile (seen answered by list_allowed_directories while the walk waits), then lets
 * the walk go on; resolves to the result.
 */
async function changeRootsMidWalk(name: string, args: Record<string, unknown>, next: Root[]): Promise<CallToolResult> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let reached!: () => void;
  const atDeep = new Promise<void>((resolve) => (reached = resolve));
  const deep = path.join(base, "project", "second", "deep");
  __walkHooks.beforeDirectory = async (dir) => {
    if (dir !== deep) return;
    reached();
    await released;
  };
  const running = call(name, { path: path.join(base, "project"), ...args });
  await atDeep;
  roots = next;
  await client.sendRootsListChanged();
  const expected = next.map((r) => fileURLToPath(r.uri)).join("\n");
  await expect.poll(allowed).toBe(`Allowed directories:\n${expected}`);
  release();
  return running;
}

const WALKS: Array<[string, Record<string, unknown>]> = [
  ["search_files", { pattern: "**" }],
  ["directory_tree", {}],
  ["search_file_contents", { query: "needle" }],
];

describeEachStrategy("roots replaced while a walk runs", (_, runtime) => {
  beforeEach(() => start(runtime));

  it.each(WALKS)("%s ends with an error, and none of its entries, once its directory is no longer allowed", async (name, args) => {
    const result = await changeRootsMidWalk(name, args, [rootOf(path.join(base, "elsewhere"))]);
    expect(result.isError).toBe(true);
    const text = textOf(result);
    expect(text).toMatch(
      /^Allowed directories changed during the call; .* is no longer allowed \(now: .*elsewhere\)\. Nothing of this walk is returned: call again\.$/,
    );
    expect(text).toContain(path.join(base, "project", "second"));
    for (const name of ["secret.txt", "a.txt", "c.txt", "deep"]) expect(text).not.toContain(name);
  });

  it.each(WALKS)("%s goes on to the end when the new roots still hold its directory", async (name, args) => {
    const result = await changeRootsMidWalk(name, args, [rootOf(base)]);
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toContain("secret.txt");
  });

  it("a walk started under the old roots does not widen to the new ones: it keeps its own snapshot", async () => {
    // The new roots add a sibling; the call still judges paths by the roots it started with.
    const result = await changeRootsMidWalk("search_files", { pattern: "**" }, [
      rootOf(path.join(base, "project")),
      rootOf(path.join(base, "elsewhere")),
    ]);
    expect(result.isError).toBeFalsy();
    const lines = textOf(result).split("\n");
    expect(lines).toContain(path.join(base, "project", "second", "deep", "secret.txt"));
    expect(lines.some((l) => l.includes("elsewhere"))).toBe(false);
    // The next call sees the new roots.
    expect(textOf(await call("read_text_file", { path: path.join(base, "elsewhere", "e.txt") }))).toBe("needle\n");
  });
});
