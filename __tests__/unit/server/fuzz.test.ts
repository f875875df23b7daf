/**
 * Fuzzing the in-process server (SPEC §3.1, §3.5, §5): fast-check generates
 * tool names (the 14 and junk) and argument objects mixing plausible paths
 * inside and outside the allowed directory with odd strings, numbers, arrays
 * and objects. Every call must come back as a well-formed result whose text
 * blocks respect the cap, nothing may escape as an unhandled rejection, and
 * nothing outside the allowed directory may change.
 */
import { mkdir, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { type CallToolResult, Client, InMemoryTransport } from "@modelcontextprotocol/client";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildServer } from "../../../src/server/index.js";
import { createRuntime } from "../../../src/server/runtime.js";
import { expectSameSnapshot, snapshot, type EntryState, sandbox } from "../../support/hostile.js";

const CAP = 300;
const NOTICE = /^\[Result truncated: .*\]$/;
const TOOL_NAMES = [
  "read_file",
  "read_text_file",
  "read_media_file",
  "read_multiple_files",
  "write_file",
  "edit_file",
  "create_directory",
  "list_directory",
  "list_directory_with_sizes",
  "directory_tree",
  "move_file",
  "search_files",
  "get_file_info",
  "list_allowed_directories",
];

let base: string;
let root: string;
let outside: string;
let remove: () => Promise<void>;
let client: Client;
let closeServer: () => Promise<void>;
let outsideBefore: Map<string, EntryState>;
const rejections: unknown[] = [];
const onRejection = (reason: unknown) => void rejections.push(reason);
const savedHome = process.env.HOME;

beforeAll(async () => {
  ({ base, root, outside, remove } = await sandbox("bfs-fuzz-"));
  await mkdir(path.join(root, "sub", "deeper"), { recursive: true });
  await mkdir(`${root} `);
  await writeFile(path.join(root, "a.txt"), "alpha\nbeta\ngamma\n");
  await writeFile(path.join(root, "sub", "b.md"), "# B\n");
  await writeFile(path.join(root, "big.txt"), "αβγ😀 line\n".repeat(200));
  await writeFile(path.join(root, "img.png"), Buffer.from("89504e470d0a1a0a0000000d49484452", "hex"));
  await writeFile(path.join(outside, "secret.txt"), "secret alpha\n");
  await writeFile(path.join(`${root} `, "sibling.txt"), "sibling alpha\n");
  await symlink(outside, path.join(root, "link-out"));
  await symlink(path.join(outside, "secret.txt"), path.join(root, "secret-link"));
  await symlink("loop", path.join(root, "loop"));
  // `~` must land somewhere snapshotted, never in the real home directory.
  process.env.HOME = outside;
  outsideBefore = await snapshot(base, [root]);

  process.on("unhandledRejection", onRejection);
  const server = buildServer({
    limits: { maxResultChars: CAP, maxMediaBytes: 4096 },
    directories: [root],
    log: () => undefined,
    runtime: createRuntime(),
  });
  const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  client = new Client({ name: "fuzz", version: "1.0.0" });
  await client.connect(clientSide);
  closeServer = () => server.close();
});

afterAll(async () => {
  process.off("unhandledRejection", onRejection);
  process.env.HOME = savedHome;
  await client?.close();
  await closeServer?.();
  await remove?.();
});

/** A path-ish string: relative names, `..` walks, absolute paths inside the temp base only, odd characters. */
function pathArb(): fc.Arbitrary<string> {
  const fixed = fc.constantFrom(
    "a.txt",
    "sub",
    "sub/b.md",
    "big.txt",
    "img.png",
    ".",
    "",
    "link-out",
    "link-out/secret.txt",
    "secret-link",
    "loop",
    "../outside/secret.txt",
    "~",
    "~/secret.txt",
    "a.txt\0",
    "%2e%2e/outside",
    "new.txt",
  );
  const anchored = fc
    .tuple(
      fc.constantFrom(
        () => root,
        () => outside,
        () => `${root} `,
        () => base,
        () => ".",
        () => "..",
      ),
      fc.array(fc.constantFrom("..", ".", "sub", "a.txt", "x", "new", "%2e%2e", "\n", '"', "link-out", "😀", " "), { maxLength: 5 }),
    )
    .map(([start, parts]) => [start(), ...parts].join("/"));
  // Random text is kept relative, or anchored in the temp base: never an arbitrary absolute path.
  const random = fc.string({ maxLength: 40, unit: "grapheme" }).map((s) => (s.startsWith("/") ? base + s : s));
  const long = fc.constantFrom("x".repeat(5000), "../".repeat(3000), "a/".repeat(2500));
  return fc.oneof(
    { weight: 4, arbitrary: fixed },
    { weight: 4, arbitrary: anchored },
    { weight: 2, arbitrary: random },
    { weight: 1, arbitrary: long },
  );
}

const junk: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.string({ maxLength: 10 }),
  fc.array(fc.oneof(fc.integer(), fc.string({ maxLength: 5 })), { maxLength: 4 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.oneof(fc.integer(), fc.string({ maxLength: 5 })), { maxKeys: 3 }),
);

/** Mostly the right type, sometimes junk. */
const typed = <T>(good: fc.Arbitrary<T>): fc.Arbitrary<unknown> =>
  fc.oneof({ weight: 5, arbitrary: good as fc.Arbitrary<unknown> }, { weight: 1, arbitrary: junk });

const editArb = fc.record({
  oldText: typed(fc.oneof(fc.constantFrom("alpha", "beta\n", "", "# B", "line"), fc.string({ maxLength: 10 }))),
  newText: typed(fc.oneof(fc.constantFrom("$&", "$1", "$$", "x".repeat(1000)), fc.string({ maxLength: 10 }))),
});

const number = typed(fc.oneof(fc.nat(3000), fc.integer({ min: -5, max: 5 }), fc.constantFrom(1e15, 0.5)));

const argsArb: fc.Arbitrary<Record<string, unknown>> = fc.record(
  {
    path: typed(pathArb()),
    paths: typed(fc.array(typed(pathArb()), { maxLength: 4 })),
    source: typed(pathArb()),
    destination: typed(pathArb()),
    content: typed(fc.oneof(fc.string({ maxLength: 50 }), fc.constant("y".repeat(2000)))),
    edits: typed(fc.array(editArb, { maxLength: 3 })),
    dryRun: typed(fc.boolean()),
    offset: number,
    limit: number,
    head: number,
    tail: number,
    pattern: typed(fc.constantFrom("*", "**", "**/*.txt", "*.md", "[", "{a,b}", "!x", "")),
    excludePatterns: typed(fc.array(fc.constantFrom("sub", "*.txt", "**", "[", ""), { maxLength: 3 })),
    sortBy: typed(fc.constantFrom("name", "size", "date")),
    surprise: junk,
  },
  { requiredKeys: [] },
);

const nameArb = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...TOOL_NAMES) },
  { weight: 1, arbitrary: fc.oneof(fc.string({ maxLength: 20 }), fc.constantFrom("", "READ_FILE", "__proto__", "constructor", "toString")) },
);

/** Content blocks as the protocol defines them, and text within the cap plus at most one notice line. */
function checkResult(result: CallToolResult): void {
  expect(Array.isArray(result.content)).toBe(true);
  expect(result.content.length).toBeGreaterThan(0);
  expect(result.structuredContent).toBeUndefined();
  expect(result.isError === undefined || typeof result.isError === "boolean").toBe(true);
  for (const block of result.content) {
    switch (block.type) {
      case "text": {
        const cut = block.text.lastIndexOf("\n[Result truncated: ");
        if (block.text.length > CAP) {
          expect(cut).toBeGreaterThanOrEqual(0);
          expect(cut).toBeLessThanOrEqual(CAP);
          expect(block.text.slice(cut + 1)).toMatch(NOTICE);
          expect(block.text.slice(cut + 1)).not.toContain("\n");
        }
        break;
      }
      case "image":
      case "audio":
        expect(block.data).toMatch(/^[A-Za-z0-9+/]*={0,2}$/);
        expect(block.mimeType).toMatch(/^(image|audio)\//);
        break;
      case "resource":
        expect(block.resource.uri).toMatch(/^file:\/\//);
        expect("blob" in block.resource && typeof block.resource.blob === "string").toBe(true);
        break;
      default:
        throw new Error(`unexpected block type ${(block as { type: string }).type}`);
    }
  }
}

describe("fuzzed tool calls", () => {
  it("every call answers with a well-formed, capped result; nothing escapes", async () => {
    let calls = 0;
    let errors = 0;
    await fc.assert(
      fc.asyncProperty(nameArb, argsArb, async (name, args) => {
        const result = (await client.callTool({ name, arguments: args }, { timeout: 10_000 })) as CallToolResult;
        calls++;
        if (result.isError) errors++;
        checkResult(result);
      }),
      { numRuns: 400, seed: Number(process.env.FUZZ_SEED ?? 20260101) },
    );
    expect(calls).toBe(400);
    // Both kinds of outcome were exercised.
    expect(errors).toBeGreaterThan(0);
    expect(errors).toBeLessThan(calls);
    expect(rejections).toEqual([]);
    expectSameSnapshot(outsideBefore, await snapshot(base, [root]));
  });

  it("the same calls issued concurrently also all answer", async () => {
    const samples = fc.sample(fc.tuple(nameArb, argsArb), { numRuns: 150, seed: 7 });
    const results = await Promise.all(
      samples.map(([name, args]) => client.callTool({ name, arguments: args }, { timeout: 20_000 }) as Promise<CallToolResult>),
    );
    results.forEach(checkResult);
    expect(rejections).toEqual([]);
    expectSameSnapshot(outsideBefore, await snapshot(base, [root]));
  });
});
