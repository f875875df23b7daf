/**
 * Progress and cancellation through the protocol, in process (buildServer
 * under the SDK's stdio entry + InMemoryTransport + the SDK's v2 client, in
 * each protocol era of SPEC §21, as a client would see them): walks and
 * cold big reads report strictly increasing progress; a cancelled call makes
 * the client reject, stops the server's work before it finishes, leaks no
 * file handles, and leaves the server answering.
 */
import { readdirSync } from "node:fs";
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { CallToolResult, Client, Progress } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { DEFAULTS } from "../../../src/cli/config.js";
import { buildServer } from "../../../src/server/index.js";
import { createRuntime } from "../../../src/server/runtime.js";
import { connectStdioEntry, ERAS, type Era } from "../../support/eras.js";

/** One walk seen by the counting hook: entries handed to the visitor, and how it ended. */
interface WalkRecord {
  root: string;
  entered: number;
  outcome: Promise<"finished" | "aborted" | "failed">;
}

// A counting hook around the shared walker, so a test can tell a walk that
// stopped on cancellation from one that ran to the end, without timing.
const walks = vi.hoisted((): WalkRecord[] => []);

vi.mock("../../../src/walking/walker.js", async (importOriginal) => {
  const original = await importOriginal<typeof import("../../../src/walking/walker.js")>();
  const walkTree: typeof original.walkTree = (root, visitor, opts) => {
    const record: WalkRecord = { root, entered: 0, outcome: Promise.resolve("finished") };
    const running = original.walkTree(
      root,
      {
        excluded: (rel) => visitor.excluded(rel),
        enter(dir, entry, rel, depth, reach) {
          record.entered++;
          return visitor.enter(dir, entry, rel, depth, reach);
        },
        leave: (depth, cut) => visitor.leave(depth, cut),
      },
      opts,
    );
    record.outcome = running.then(
      () => "finished" as const,
      () => (opts.signal?.aborted ? ("aborted" as const) : ("failed" as const)),
    );
    walks.push(record);
    return running;
  };
  return { ...original, walkTree };
});

// 30 × 10 directories of 100 files: 30,330 entries, half of the files *.txt.
const TOP = 30;
const SUB = 10;
const FILES = 100;
const TREE_ENTRIES = TOP + TOP * SUB + TOP * SUB * FILES;
const BIG_FILE_BYTES = 32 * 1024 * 1024;

let root: string;
let tree: string;
let bigFile: string;

async function makeTree(dir: string): Promise<void> {
  const files: string[] = [];
  for (let t = 0; t < TOP; t++) {
    for (let s = 0; s < SUB; s++) {
      const leaf = path.join(dir, `t${t}`, `s${s}`);
      await mkdir(leaf, { recursive: true });
      for (let f = 0; f < FILES; f++) files.push(path.join(leaf, `f${String(f).padStart(3, "0")}.${f % 2 === 0 ? "txt" : "md"}`));
    }
  }
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < files.length) await writeFile(files[next++]!, "");
  };
  await Promise.all(Array.from({ length: 16 }, worker));
}

beforeAll(async () => {
  root = await realpath(await mkdtemp(path.join(os.tmpdir(), "bfs-progress-")));
  tree = path.join(root, "tree");
  await makeTree(tree);
  bigFile = path.join(root, "big.txt");
  const line = Buffer.from("a line of text with é, € and 😀 in it\r\n", "utf8");
  await writeFile(bigFile, Buffer.alloc(BIG_FILE_BYTES, line));
});

afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

/** The era the suites below run in (each runs once per era). */
let era: Era = "2025-11-25";

/** A fresh server (empty checkpoint cache) connected to an SDK client in this process, in `era`. */
function connect(): Promise<{ client: Client; close: () => Promise<void> }> {
  // Every server built shares one runtime, as the servers of one process do.
  const runtime = createRuntime();
  const build = () => buildServer({ limits: { ...DEFAULTS, maxResultChars: 200_000 }, directories: [root], log: () => undefined, runtime });
  return connectStdioEntry(build, era);
}

/** Calls a tool with `onprogress`; returns the result and every progress notification seen. */
async function callWithProgress(client: Client, name: string, args: Record<string, unknown>): Promise<{ result: CallToolResult; seen: Progress[] }> {
  const seen: Progress[] = [];
  const result = (await client.callTool(
    { name, arguments: args },
    {
      onprogress: (p) => seen.push(p),
    },
  )) as CallToolResult;
  return { result, seen };
}

/** Starts a call and cancels it from the first progress notification; resolves to the rejection. */
async function cancelAfterFirstProgress(client: Client, name: string, args: Record<string, unknown>): Promise<{ error: unknown; seen: Progress[] }> {
  const controller = new AbortController();
  const seen: Progress[] = [];
  const call = client.callTool(
    { name, arguments: args },
    {
      signal: controller.signal,
      onprogress: (p) => {
        seen.push(p);
        controller.abort(new Error("cancelled by the test"));
      },
    },
  );
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  return { error, seen };
}

const textOf = (result: CallToolResult): string => {
  const block = result.content[0];
  return block?.type === "text" ? block.text : "";
};

function expectIncreasing(seen: Progress[]): void {
  expect(seen.length).toBeGreaterThanOrEqual(1);
  for (let i = 1; i < seen.length; i++) expect(seen[i]!.progress).toBeGreaterThan(seen[i - 1]!.progress);
  for (const p of seen) if (p.total !== undefined) expect(p.progress).toBeLessThanOrEqual(p.total);
}

const openFds = (): number => readdirSync("/proc/self/fd").length;

for (const each of ERAS)
  describe(`protocol ${each}`, () => {
    beforeAll(() => {
      era = each;
    });

    describe("progress notifications", () => {
      it("directory_tree reports strictly increasing progress and still returns the tree", async () => {
        const { client, close } = await connect();
        try {
          const { result, seen } = await callWithProgress(client, "directory_tree", { path: tree });
          expect(result.isError ?? false).toBe(false);
          expect(textOf(result)).toMatch(/^\[\n {2}\{\n {4}"name": "t\d+"/);
          expectIncreasing(seen);
          expect(seen.at(-1)!.progress).toBeLessThanOrEqual(TREE_ENTRIES);
        } finally {
          await close();
        }
      });

      it("search_files reports strictly increasing progress and finds the files", async () => {
        const { client, close } = await connect();
        try {
          const { result, seen } = await callWithProgress(client, "search_files", { path: tree, pattern: "**/*.txt" });
          expect(result.isError ?? false).toBe(false);
          expect(textOf(result).split("\n")[0]).toMatch(/\.txt$/);
          expectIncreasing(seen);
          expect(seen.at(-1)!.progress).toBeLessThanOrEqual(TREE_ENTRIES);
        } finally {
          await close();
        }
      });

      it("a walk whose only progress comes just before its end still delivers it before the result", async () => {
        // t0 holds 1,010 entries: the walker reports at the 1,000th, and the last ten follow without a pause,
        // so the result is ready a few microtasks after the notification was handed to the SDK.
        const { client, close } = await connect();
        try {
          for (const name of ["search_files", "directory_tree"]) {
            const { result, seen } = await callWithProgress(client, name, { path: path.join(tree, "t0"), pattern: "**/*.txt" });
            expect(result.isError ?? false, name).toBe(false);
            expect(
              seen.map((p) => p.progress),
              name,
            ).toEqual([1000]);
          }
        } finally {
          await close();
        }
      });

      it("a cold read of a big file reports strictly increasing progress within the file size", async () => {
        const { client, close } = await connect();
        try {
          const { result, seen } = await callWithProgress(client, "read_text_file", { path: bigFile });
          expect(result.isError ?? false).toBe(false);
          expect(textOf(result)).toMatch(/Call again with offset=\d+ to continue\.\]$/);
          expectIncreasing(seen);
          expect(seen.at(-1)!.progress).toBeLessThanOrEqual(BIG_FILE_BYTES);
        } finally {
          await close();
        }
      });
    });

    describe("cancellation", () => {
      it("a cancelled search_files rejects, stops walking before the end, and the server answers afterwards", async () => {
        const { client, close } = await connect();
        try {
          walks.length = 0;
          const { error, seen } = await cancelAfterFirstProgress(client, "search_files", { path: tree, pattern: "**/*.txt" });
          expect(String(error)).toMatch(/cancelled by the test/);
          expect(seen).toHaveLength(1);
          expect(seen[0]!.progress).toBeLessThan(TREE_ENTRIES);
          expect(walks).toHaveLength(1);
          expect(await walks[0]!.outcome).toBe("aborted");
          expect(walks[0]!.entered).toBeLessThan(TREE_ENTRIES);

          const sub = path.join(tree, "t0");
          const after = (await client.callTool({ name: "search_files", arguments: { path: sub, pattern: "**/*.txt" } })) as CallToolResult;
          expect(after.isError ?? false).toBe(false);
          const lines = textOf(after).split("\n");
          expect(lines).toHaveLength(SUB * (FILES / 2));
          expect(lines.every((l) => l.startsWith(`${sub}${path.sep}`) && l.endsWith(".txt"))).toBe(true);
          expect(walks).toHaveLength(2);
          expect(await walks[1]!.outcome).toBe("finished");
          expect(walks[1]!.entered).toBe(SUB + SUB * FILES);
        } finally {
          await close();
        }
      });

      it("a cancelled directory_tree stops walking before the end", async () => {
        const { client, close } = await connect();
        try {
          walks.length = 0;
          const { error } = await cancelAfterFirstProgress(client, "directory_tree", { path: tree });
          expect(String(error)).toMatch(/cancelled by the test/);
          expect(walks).toHaveLength(1);
          expect(await walks[0]!.outcome).toBe("aborted");
          expect(walks[0]!.entered).toBeLessThan(TREE_ENTRIES);
        } finally {
          await close();
        }
      });

      it.skipIf(process.platform !== "linux")("repeated cancelled walks and reads leave no file descriptors open", async () => {
        const { client, close } = await connect();
        try {
          const before = openFds();
          walks.length = 0;
          for (let i = 0; i < 5; i++) {
            const search = await cancelAfterFirstProgress(client, "search_files", { path: tree, pattern: "**/*.md" });
            expect(String(search.error)).toMatch(/cancelled by the test/);
            const read = await cancelAfterFirstProgress(client, "read_text_file", { path: bigFile, offset: 0 });
            expect(String(read.error)).toMatch(/cancelled by the test/);
          }
          const outcomes = await Promise.all(walks.map((w) => w.outcome));
          expect(outcomes).toEqual(Array(5).fill("aborted"));
          // A full call afterwards proves the server is healthy and lets in-flight directory reads settle.
          const info = (await client.callTool({ name: "get_file_info", arguments: { path: bigFile } })) as CallToolResult;
          expect(textOf(info)).toContain(`size: ${BIG_FILE_BYTES}`);
          expect(openFds()).toBeLessThanOrEqual(before + 2);
        } finally {
          await close();
        }
      });
    });
  });
