/**
 * Regression guard (issue 18): a 5,000-deep tree cost one walk ~780 MB and an
 * fd per level, concurrent walks ran out of descriptors and reported
 * "unreadable" entries, and paths past PATH_MAX were searched only when small
 * and literal. Through the built server, each walking tool now covers the
 * whole tree — the deepest entry listed, found and searched, nothing skipped —
 * with the procfd strategy (every directory reached as /proc/self/fd/<fd>/,
 * whatever its path's length), also several walks at once under a limit of
 * 256 open files. The portable strategy reaches things by path: it walks all
 * it can and says that the rest lies past the platform's path limit, not that
 * it is unreadable. Memory and descriptors are the bench's to print, not asserted here.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STRATEGIES, strategyEnv, tempDir } from "../support/fixtures.js";
import { call, connect, SERVER_JS, textOf, type Connected } from "../support/spawn.js";

const DEPTH = 5000;
const BIG = 20_000;
const NOTICE =
  /\n\[Result truncated: showing characters [\d,]+-[\d,]+ of ([\d,]+)(; [\d,]+ unreadable entr(?:y|ies) skipped \(not shown\))?(?:; [\d,]+ of [\d,]+ entries shown)?\. /;
const PAST_LIMIT = /\[Not read: 1 directory past the platform's path limit \(ENAMETOOLONG\), which this platform reaches only by path: /;

let base: string;
let root: string;
let remove: () => Promise<void>;

// Laid out by a child that walks down with chdir: no path it uses is longer than a name.
const LAYOUT = `
const fs = require("node:fs");
const [root, depth, big] = process.argv.slice(1);
process.chdir(root);
for (let i = 0; i < Number(depth); i++) {
  fs.mkdirSync("d");
  fs.writeFileSync("f.txt", "level " + i + "\\n");
  process.chdir("d");
}
fs.writeFileSync("deepest.txt", "the deepest needle\\n");
fs.writeFileSync("big.txt", "x".repeat(Number(big)) + "\\nthe big needle\\n");
`;

beforeAll(async () => {
  ({ dir: base, remove } = await tempDir("bfs-deep-"));
  root = path.join(base, "root");
  execFileSync("mkdir", [root]);
  const made = spawnSync(process.execPath, ["-e", LAYOUT, root, String(DEPTH), String(BIG)], { stdio: "inherit" });
  expect(made.status).toBe(0);
});

// rm(1) walks with openat, so no path it uses is too long; Node's recursive rm is not relied on here.
afterAll(async () => {
  execFileSync("rm", ["-rf", root]);
  await remove();
});

interface Node {
  name: string;
  type: "file" | "directory";
  children?: Node[];
}

/** The tree's shape, as directory_tree would list it (order aside). */
function shape(depth: number): Node[] {
  let level: Node[] = [
    { name: "deepest.txt", type: "file" },
    { name: "big.txt", type: "file" },
  ];
  for (let i = depth - 1; i >= 0; i--) {
    level = [
      { name: "d", type: "directory", children: level },
      { name: "f.txt", type: "file" },
    ];
  }
  return level;
}

/**
 * The length of JSON.stringify(value, null, 2), counted plainly rather than built: each array or object
 * adds its brackets, its separators and the indentation of its items, whatever its depth (no recursion,
 * so 10,000 levels need no stack).
 */
function jsonLength(value: unknown): number {
  let total = 0;
  const todo: Array<[unknown, number]> = [[value, 0]];
  for (let next = todo.pop(); next !== undefined; next = todo.pop()) {
    const [v, level] = next;
    const items: Array<[string | undefined, unknown]> = Array.isArray(v)
      ? v.map((item) => [undefined, item])
      : typeof v === "object" && v !== null
        ? Object.entries(v)
        : [];
    if (typeof v !== "object" || v === null) {
      total += JSON.stringify(v).length;
      continue;
    }
    if (items.length === 0) {
      total += 2;
      continue;
    }
    // "[\n" … "\n" + indentation + "]", ",\n" between items, each item indented one level deeper.
    total += 2 + 2 * (items.length - 1) + 1 + 2 * level + 1;
    for (const [key, item] of items) {
      total += 2 * (level + 1) + (key === undefined ? 0 : JSON.stringify(key).length + 2);
      todo.push([item, level + 1]);
    }
  }
  return total;
}

const deepest = (): string => path.join(root, ...Array<string>(DEPTH).fill("d"), "deepest.txt");

/** Checks the three walks of the whole tree through `server`, as a walk that reached the bottom gives them. */
async function expectWalkedWhole(results: CallToolResult[]): Promise<void> {
  const [tree, found, searched, big] = results.map(textOf);
  const cut = NOTICE.exec(tree ?? "");
  // Cut by the cap; the figure after "of" is the whole tree's length, and nothing was skipped.
  expect(Number(cut?.[1]?.replaceAll(",", ""))).toBe(jsonLength(shape(DEPTH)));
  expect(cut?.[2]).toBeUndefined();
  expect(found).toBe(deepest());
  expect(searched).toBe(`Found 1 matching line (1 occurrence) in 1 file; searched ${(DEPTH + 2).toLocaleString("en-US")} files.`);
  // Bigger than a small file: opened and streamed through the walk's reach, past PATH_MAX.
  expect(big).toContain(path.join(path.dirname(deepest()), "big.txt"));
  expect(big).toMatch(/\nFound 1 matching line \(1 occurrence\) in 1 file; searched 5,002 files\.$/);
}

const WALKS: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
  ["directory_tree", {}],
  ["search_files", { pattern: "**/deepest.txt" }],
  ["search_file_contents", { query: "deepest", outputMode: "count" }],
  // A literal: a regex's budget is wall time (grep/scan-pool.ts), which a loaded machine can use up
  // over 5,002 files while four walks share the server; what this checks is the walk's reach.
  ["search_file_contents", { query: "big needle", outputMode: "files" }],
];

const walkAll = (server: Connected, walks = WALKS): Promise<CallToolResult[]> =>
  Promise.all(walks.map(([tool, args]) => call(server.client, tool, { path: root, ...args })));

describe("the length oracle", () => {
  it("counts what JSON.stringify writes", () => {
    for (const depth of [0, 1, 3, 17]) expect(jsonLength(shape(depth))).toBe(JSON.stringify(shape(depth), null, 2).length);
  });
});

describe.each(STRATEGIES)("a 5,000-deep tree (%s)", (strategy) => {
  it.skipIf(strategy !== "procfd")("every walking tool walks it whole", async () => {
    const server = await connect([root], { env: strategyEnv(strategy) });
    try {
      await expectWalkedWhole(await walkAll(server));
    } finally {
      await server.close();
    }
  });

  it.skipIf(strategy !== "portable")("the walk goes as deep as paths reach and says the rest is past the platform's path limit", async () => {
    const server = await connect([root], { env: strategyEnv(strategy) });
    try {
      const [tree, found, searched] = (await walkAll(server, WALKS.slice(0, 3))).map(textOf);
      expect(NOTICE.exec(tree ?? "")?.[2]).toBe("; 1 unreadable entry skipped (not shown)");
      expect(found).toMatch(new RegExp(`^No matches found\\n\\n${PAST_LIMIT.source}${root.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}/(d/)+d\\]$`));
      expect(found).not.toContain("unreadable");
      // The directory past the limit, and the files whose own paths pass it in the directories above.
      expect(searched).toMatch(
        /^Found 0 matching lines \(0 occurrences\) in 0 files; searched [\d,]+ files\.\nNot searched: ([\d,]+) files? \(\1 past the platform's path limit \(ENAMETOOLONG\), which this platform reaches only by path\)\.$/,
      );
    } finally {
      await server.close();
    }
  });

  // The portable strategy reaches directories by path and holds no descriptor for them.
  it.skipIf(strategy !== "procfd")("several walks at once under a limit of 256 open files: none runs out of descriptors", async () => {
    const transport = new StdioClientTransport({
      command: "/bin/sh",
      args: ["-c", 'ulimit -n 256 && exec "$0" "$@"', process.execPath, SERVER_JS, root],
      env: { PATH: process.env.PATH ?? "", ...strategyEnv(strategy) },
      stderr: "pipe",
    });
    const client = new Client({ name: "deep-walk-test", version: "1.0.0" });
    await client.connect(transport);
    const server = { client, transport, stderr: () => "", close: () => client.close() } satisfies Connected;
    try {
      // The limit is the server's own, so the walks below really share 256 descriptors.
      expect(readFileSync(`/proc/${transport.pid}/limits`, "utf8")).toMatch(/^Max open files\s+256\s+256\s/m);
      // Six at once: more than 256 descriptors if each held one per level, or even 64.
      const [whole, again] = await Promise.all([walkAll(server), walkAll(server, WALKS.slice(0, 2))]);
      await expectWalkedWhole(whole);
      expect(again.map(textOf)).toEqual(whole.slice(0, 2).map(textOf));
    } finally {
      await server.close();
    }
  });
});
