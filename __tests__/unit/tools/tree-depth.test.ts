/**
 * directory_tree's maxDepth (depth-cut directories marked, never read) and
 * respectGitignore on directory_tree and search_files, whose default (false)
 * leaves upstream's output unchanged.
 */
import { type CallToolResult, Client, InMemoryTransport } from "@modelcontextprotocol/client";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { TextSink } from "../../../src/kernel/bounded.js";
import { DEFAULTS } from "../../../src/cli/config.js";
import { describeEachStrategy, walkOptions, materialize, type Spec, spyDirectoryReads } from "../../support/fixtures.js";
import { buildServer } from "../../../src/server/index.js";
import { createRuntime } from "../../../src/server/runtime.js";
import { directoryTree } from "../../../src/tools/directory_tree.js";
import { DEPTH_LIMITED, type TreeOptions } from "../../../src/walking/tree.js";
import { searchInto, treeInto } from "../../../src/walking/index.js";
import type { WalkOptions } from "../../../src/walking/index.js";
import { bigSink, buildTreeInMemory, searchReference, searchText, type TreeEntry } from "../../support/walk-reference.js";

const ADVICE = "narrow it";
let tmp: string;
let root: string;
let opts: WalkOptions;

beforeEach(() => {
  tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "tree-depth-test-")));
  root = path.join(tmp, "root");
  fs.mkdirSync(root);
  opts = walkOptions(createRuntime(), [root]);
});

afterEach(() => {
  vi.restoreAllMocks();
  fs.rmSync(tmp, { recursive: true, force: true });
});

async function tree(options?: TreeOptions, excludes: string[] = []): Promise<string> {
  const sink = bigSink();
  await treeInto(root, excludes, sink, opts, options);
  return sink.render(ADVICE);
}

async function search(pattern: string, options?: { respectGitignore?: boolean }): Promise<string> {
  const sink = bigSink();
  await searchInto(root, pattern, [], sink, opts, options);
  return sink.render(ADVICE);
}

/** A depth-limited entry as this server writes it: no children, the marker instead. */
type Limited = { name: string; type: "directory"; [DEPTH_LIMITED]: true };
type Expected = TreeEntry | Limited;

/**
 * The reference tree cut at `maxDepth`: directories on the last level that have entries (after the
 * exclusions) lose their children and gain the marker; empty ones keep `children: []`.
 */
function cut(entries: TreeEntry[], maxDepth: number, depth = 1): Expected[] {
  return entries.map((e): Expected => {
    if (e.type !== "directory") return e;
    if (depth >= maxDepth && (e.children ?? []).length === 0) return { name: e.name, type: "directory", children: [] };
    if (depth >= maxDepth) return { name: e.name, type: "directory", [DEPTH_LIMITED]: true };
    return { name: e.name, type: "directory", children: cut(e.children ?? [], maxDepth, depth + 1) };
  });
}

const SAMPLE: Spec = {
  "top.txt": "",
  empty: {},
  a: { "a1.txt": "", emptyInA: {}, b: { "b1.txt": "", c: { "c1.txt": "", d: { "d1.txt": "" } } } },
  z: { "z1.txt": "" },
};

describeEachStrategy("directory_tree maxDepth", (_, runtime) => {
  beforeEach(() => {
    opts = walkOptions(runtime, [root]);
    materialize(root, SAMPLE);
  });

  it.each([1, 2, 3, 4, 5, 6])("maxDepth %i is upstream's JSON cut at that depth, byte for byte", async (maxDepth) => {
    const expected = cut(await buildTreeInMemory(root, []), maxDepth);
    expect(await tree({ maxDepth })).toBe(JSON.stringify(expected, null, 2));
  });

  it("maxDepth 1 lists only the directory's own entries: every directory with entries marked, the empty one with children []", async () => {
    const listed = JSON.parse(await tree({ maxDepth: 1 })) as Record<string, unknown>[];
    expect(listed.map((e) => e.name).sort()).toEqual(["a", "empty", "top.txt", "z"]);
    for (const e of listed.filter((x) => x.type === "directory" && x.name !== "empty")) {
      expect(e[DEPTH_LIMITED]).toBe(true);
      expect(e).not.toHaveProperty("children");
    }
    // Regression (issue 17): an empty directory at the cut was marked depthLimited like a cut one.
    expect(listed.find((e) => e.name === "empty")).toEqual({ name: "empty", type: "directory", children: [] });
  });

  it("at maxDepth 2 an empty directory has children [] at either level while a depth-cut one is marked", async () => {
    const listed = JSON.parse(await tree({ maxDepth: 2 })) as (Record<string, unknown> & { children?: Record<string, unknown>[] })[];
    const byName = (list: Record<string, unknown>[], name: string) => list.find((e) => e.name === name)!;
    expect(byName(listed, "empty")).toEqual({ name: "empty", type: "directory", children: [] });
    const a = byName(listed, "a") as { children: Record<string, unknown>[] };
    expect(byName(a.children, "emptyInA")).toEqual({ name: "emptyInA", type: "directory", children: [] });
    expect(byName(a.children, "b")).toEqual({ name: "b", type: "directory", [DEPTH_LIMITED]: true });
    expect(byName(a.children, "a1.txt")).toEqual({ name: "a1.txt", type: "file" });
  });

  it("does not read below the depth: directories at the limit are read only to tell empty from cut, their subdirectories never", async () => {
    const reads = spyDirectoryReads();
    await tree({ maxDepth: 2 });
    const listed = [root, path.join(root, "a"), path.join(root, "empty"), path.join(root, "z")];
    expect(reads.sort()).toEqual([...listed, path.join(root, "a", "b"), path.join(root, "a", "emptyInA")].sort());
    expect(reads).not.toContain(path.join(root, "a", "b", "c"));
  });

  it("a directory at the cut whose entries are all excluded, or only the server's own temp files, shows children []", async () => {
    materialize(root, { only: { "x.log": "", "y.log": "" }, hidden: { ".bfs-0123456789abcdef0123456789abcdef.tmp": "" }, kept: { "k.txt": "" } });
    const listed = JSON.parse(await tree({ maxDepth: 1 }, ["**/*.log"])) as Record<string, unknown>[];
    const byName = (name: string) => listed.find((e) => e.name === name);
    expect(byName("only")).toEqual({ name: "only", type: "directory", children: [] });
    expect(byName("hidden")).toEqual({ name: "hidden", type: "directory", children: [] });
    expect(byName("kept")).toEqual({ name: "kept", type: "directory", [DEPTH_LIMITED]: true });
    // The same directories listed one level deeper agree: what was called empty lists nothing.
    const deeper = JSON.parse(await tree({ maxDepth: 2 }, ["**/*.log"])) as { name: string; children?: unknown[] }[];
    expect(deeper.find((e) => e.name === "only")?.children).toEqual([]);
    expect(deeper.find((e) => e.name === "hidden")?.children).toEqual([]);
  });

  it("the cut's JSON length is counted exactly once the cap is passed (both markers)", async () => {
    const whole = await tree({ maxDepth: 2 });
    for (const cap of [40, 200, whole.length - 1]) {
      const sink = new TextSink(cap);
      await treeInto(root, [], sink, opts, { maxDepth: 2 });
      expect(sink.total).toBe(whole.length);
    }
  });

  it("without maxDepth (or deeper than the tree) the output is upstream's unchanged", async () => {
    const upstream = JSON.stringify(await buildTreeInMemory(root, []), null, 2);
    expect(await tree()).toBe(upstream);
    expect(await tree({})).toBe(upstream);
    expect(await tree({ maxDepth: 7 })).toBe(upstream);
  });

  it("combines with excludePatterns: excluded entries are gone at every depth", async () => {
    const expected = cut(await buildTreeInMemory(root, ["b", "*.txt"]), 2);
    expect(await tree({ maxDepth: 2 }, ["b", "*.txt"])).toBe(JSON.stringify(expected, null, 2));
  });
});

describe("directory_tree maxDepth parameter", () => {
  it("accepts integers from 1, is optional, and rejects 0, negatives and fractions", () => {
    const schema = directoryTree.input.maxDepth as unknown as { safeParse(v: unknown): { success: boolean } };
    expect(schema.safeParse(1).success).toBe(true);
    expect(schema.safeParse(undefined).success).toBe(true);
    for (const bad of [0, -1, 1.5, "2"]) expect(schema.safeParse(bad).success, String(bad)).toBe(false);
  });
});

const REPO: Spec = {
  ".gitignore": "*.log\ndist/\n",
  ".git": { HEAD: "ref: refs/heads/main\n", objects: { ab: { cd: "" } } },
  "app.ts": "",
  "debug.log": "",
  dist: { "out.js": "" },
  src: { ".gitignore": "!keep.log\n", "keep.log": "", "drop.log": "", "main.ts": "" },
};

describeEachStrategy("respectGitignore on both tools", (_, runtime) => {
  beforeEach(() => {
    opts = walkOptions(runtime, [root]);
    materialize(root, REPO);
  });

  it("default false: both tools give upstream's output, .git and ignored files included", async () => {
    const upstreamTree = JSON.stringify(await buildTreeInMemory(root, []), null, 2);
    expect(await tree()).toBe(upstreamTree);
    expect(await tree({ respectGitignore: false })).toBe(upstreamTree);
    const upstreamSearch = searchText(await searchReference(root, "**", [], [root]));
    expect(await search("**")).toBe(upstreamSearch);
    expect(await search("**", { respectGitignore: false })).toBe(upstreamSearch);
    expect(upstreamSearch).toContain(path.join(root, ".git", "HEAD"));
    expect(upstreamSearch).toContain(path.join(root, "dist", "out.js"));
  });

  it("directory_tree leaves out .git and ignored entries, keeps re-included ones, and counts them", async () => {
    const text = await tree({ respectGitignore: true });
    const at = text.indexOf("\n\n[");
    const expected = await buildTreeInMemory(root, [".git", "dist", "debug.log", "src/drop.log"]);
    expect(text.slice(0, at)).toBe(JSON.stringify(expected, null, 2));
    expect(text.slice(at)).toBe("\n\n[Left out 3 entries ignored by .gitignore and 1 .git entry; respectGitignore=false includes them]");
  });

  it("search_files leaves out the same entries and counts them", async () => {
    const text = await search("**/*.{log,js,ts}", { respectGitignore: true });
    const at = text.indexOf("\n\n[");
    expect(text.slice(0, at).split("\n").sort()).toEqual(
      [path.join(root, "app.ts"), path.join(root, "src", "keep.log"), path.join(root, "src", "main.ts")].sort(),
    );
    expect(text.slice(at)).toContain("3 entries ignored by .gitignore and 1 .git entry");
  });

  it("combines with maxDepth: the depth-cut directory is read once to judge it, nothing below it", async () => {
    const reads = spyDirectoryReads();
    const text = await tree({ respectGitignore: true, maxDepth: 1 });
    const listed = JSON.parse(text.slice(0, text.indexOf("\n\n["))) as Record<string, unknown>[];
    expect(listed.map((e) => e.name).sort()).toEqual([".gitignore", "app.ts", "src"]);
    expect(listed.find((e) => e.name === "src")).toEqual({ name: "src", type: "directory", [DEPTH_LIMITED]: true });
    expect(reads.sort()).toEqual([root, path.join(root, "src")].sort());
  });

  it("a directory at the cut holding only ignored files shows children []", async () => {
    materialize(root, { logs: { "a.log": "", "b.log": "" } });
    const text = await tree({ respectGitignore: true, maxDepth: 1 });
    const listed = JSON.parse(text.slice(0, text.indexOf("\n\n["))) as Record<string, unknown>[];
    expect(listed.find((e) => e.name === "logs")).toEqual({ name: "logs", type: "directory", children: [] });
  });

  it("no match under .gitignore rules still says what was left out", async () => {
    const text = await search("**/*.log", { respectGitignore: true });
    expect(text).toBe(
      `${path.join(root, "src", "keep.log")}\n\n` +
        "[Left out 3 entries ignored by .gitignore and 1 .git entry; respectGitignore=false includes them]",
    );
    expect(await search("**/*.o", { respectGitignore: true })).toMatch(/^No matches found\n\n\[Left out 3 entries/);
  });
});

describe("through the MCP server", () => {
  it("passes maxDepth and respectGitignore to the walkers and refuses maxDepth 0 naming it", async () => {
    materialize(root, REPO);
    const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
    const server = buildServer({ limits: DEFAULTS, directories: [root], log: () => undefined, runtime: createRuntime() });
    const client = new Client({ name: "tree-depth-test", version: "1.0.0" });
    try {
      await server.connect(serverSide);
      await client.connect(clientSide);
      const call = async (name: string, args: Record<string, unknown>) => {
        const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
        const first = result.content[0];
        return { isError: result.isError === true, text: first?.type === "text" ? first.text : "" };
      };
      const cut = await call("directory_tree", { path: root, maxDepth: 1, respectGitignore: true });
      expect(cut.isError).toBe(false);
      expect(cut.text).toBe(await tree({ maxDepth: 1, respectGitignore: true }));
      expect(cut.text).toContain(`"${DEPTH_LIMITED}": true`);
      const found = await call("search_files", { path: root, pattern: "**/*.log", respectGitignore: true });
      expect(found.text).toBe(await search("**/*.log", { respectGitignore: true }));
      expect((await call("search_files", { path: root, pattern: "**/*.log" })).text).toBe(await search("**/*.log"));
      const refused = await call("directory_tree", { path: root, maxDepth: 0 });
      expect(refused.isError).toBe(true);
      expect(refused.text).toMatch(/maxDepth/);
    } finally {
      await client.close();
    }
  });
});
