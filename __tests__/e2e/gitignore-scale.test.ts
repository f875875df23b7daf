/**
 * Regression guard (issue 18): a .gitignore rule like a/**\/a/**\/… (12 times)
 * over a 44-deep a/a/… tree made the ignore library's regex backtrack on the
 * main thread (the server deaf for ≥ 25 s, cancel ignored), and an ordinary
 * 1 MiB .gitignore of 66,229 plain rules took 183 s over 3,000 files with
 * the server answering nothing for up to 76 s at a time. Through the built
 * server, under each platform strategy: a ping sent once the search has
 * started is answered before the search's result (order, never time); the
 * rule too costly to match is named in the result; and the decisions are
 * git's (`git check-ignore` on a sample of the tree).
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { CallToolResultSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_GITIGNORE_BYTES } from "../../src/walking/gitignore.js";
import { MAX_RULE_WILDCARDS } from "../../src/walking/gitignore-rules.js";
import { STRATEGIES, strategyEnv, tempDir, noGit } from "../support/fixtures.js";
import { call, connect, textOf, type Connected } from "../support/spawn.js";

let base: string;
let remove: () => Promise<void>;

beforeAll(async () => {
  ({ dir: base, remove } = await tempDir("bfs-gitignore-scale-"));
});
afterAll(() => remove());

/**
 * Starts `name` with a progress token and pings the server once the first progress notification has come
 * (so the search is under way); resolves to the result and the order in which the two answers arrived.
 */
async function pingDuring(server: Connected, name: string, args: Record<string, unknown>): Promise<{ result: CallToolResult; order: string[] }> {
  const order: string[] = [];
  let pinged: Promise<void> | undefined;
  const searching = server.client
    .callTool({ name, arguments: args }, CallToolResultSchema, {
      timeout: 120_000,
      onprogress: () => {
        pinged ??= server.client.ping().then(() => {
          order.push("ping");
        });
      },
    })
    .then((result) => {
      order.push(name);
      return result as CallToolResult;
    });
  const result = await searching;
  expect(pinged, "the search sent progress").toBeDefined();
  await pinged;
  return { result, order };
}

describe("the hostile pattern of issue 18", () => {
  const HOSTILE = `${"a/**/".repeat(12)}keep-out.txt`;
  const COSTLY = "*?".repeat(MAX_RULE_WILDCARDS / 2 + 1);
  const LEVELS = 44;
  const FILLER = 250;
  const FILLED_LEVELS = 40;
  // Empty files the walks pass after their first progress notification (at 1,000 entries), so a search
  // is still running when the ping that notification sets off arrives, even on a loaded machine that
  // reads its pipe late (with only the 10,000 entries above, a search_files walk was over in ~0.1 s and
  // its progress could reach the client in the same read as its result, which the SDK client then drops).
  const WIDE = 30_000;
  let root: string;

  beforeAll(() => {
    root = path.join(base, "hostile");
    mkdirSync(root);
    writeFileSync(path.join(root, ".gitignore"), `*.tmp\n${HOSTILE}\n${COSTLY}\n${"a/**/".repeat(12)}z\n`);
    let dir = root;
    for (let level = 1; level <= LEVELS; level++) {
      dir = path.join(dir, "a");
      mkdirSync(dir);
      writeFileSync(path.join(dir, "keep-out.txt"), "needle\n");
      writeFileSync(path.join(dir, "other.txt"), "other\n");
      if (level <= FILLED_LEVELS) for (let i = 0; i < FILLER; i++) writeFileSync(path.join(dir, `n${i}.txt`), "needle\n");
    }
    mkdirSync(path.join(root, "wide"));
    for (let i = 0; i < WIDE; i++) writeFileSync(path.join(root, "wide", `w${i}`), "");
  });

  describe.each(STRATEGIES)("(%s)", (strategy) => {
    let server: Connected;
    beforeAll(async () => {
      server = await connect([root], { env: strategyEnv(strategy) });
    });
    afterAll(() => server?.close());

    it("search_file_contents answers a ping first, applies the rule as git means it, and names the costly one", async () => {
      const { result, order } = await pingDuring(server, "search_file_contents", { path: root, query: "needle", outputMode: "count" });
      expect(order).toEqual(["ping", "search_file_contents"]);
      const text = textOf(result);
      // keep-out.txt under twelve or more a/ is ignored (33 of 44); the rest is searched.
      const kept = 11;
      const files = FILLED_LEVELS * FILLER + kept;
      expect(text).toContain(
        `Found ${files.toLocaleString("en-US")} matching lines (${files.toLocaleString("en-US")} occurrences) in ${files.toLocaleString("en-US")} files; searched ${(files + LEVELS + 1 + WIDE).toLocaleString("en-US")} files.`,
      );
      expect(text).toContain("Not searched: 33 files (33 ignored by .gitignore");
      expect(text).toContain(
        `\n\n[.gitignore rule not applied, too costly to match on every entry (what it would leave out is included): ${path.join(root, ".gitignore")} ` +
          `line 3 "${COSTLY}" (${MAX_RULE_WILDCARDS + 2} wildcards; the limit is ${MAX_RULE_WILDCARDS})]`,
      );
    });

    it("search_files with respectGitignore also answers a ping first and lists what git would", async () => {
      const { result, order } = await pingDuring(server, "search_files", { path: root, pattern: "**/keep-out.txt", respectGitignore: true });
      expect(order).toEqual(["ping", "search_files"]);
      const [listed, ...notes] = textOf(result).split("\n\n");
      const expected = Array.from({ length: 11 }, (_, i) => path.join(root, ...Array<string>(i + 1).fill("a"), "keep-out.txt"));
      expect(listed!.split("\n").sort()).toEqual(expected.sort());
      expect(notes.join("\n\n")).toContain(`line 3 "${COSTLY}"`);
    });
  });
});

describe("a large ordinary .gitignore", () => {
  const RULES = 66_229;
  const DIRS = 30;
  const PER_DIR = 100;
  const COPIES = 10;
  let root: string;
  let rules: string;
  const sample: string[] = [];

  /** Rule k of the big file: plain names, anchored paths, directories, re-inclusions, and a few wildcards. */
  const rule = (k: number): string => {
    if (k === 0) return "*.o";
    if (k === 1) return "build-*/";
    if (k === 2) return "**/tmp/*.log";
    return [`gen-${k}.dat`, `/d${k % DIRS}/out-${k}.log`, `cache-${k}/`, `!keep-${k}.o`][k % 4]!;
  };

  beforeAll(() => {
    root = path.join(base, "large");
    mkdirSync(root);
    rules = `${Array.from({ length: RULES }, (_, k) => rule(k)).join("\n")}\n`;
    writeFileSync(path.join(root, ".gitignore"), rules);
    for (let d = 0; d < DIRS; d++) {
      const dir = path.join(root, `d${d}`);
      mkdirSync(dir);
      if (d < COPIES) writeFileSync(path.join(dir, ".gitignore"), rules);
      for (let j = 0; j < PER_DIR; j++) {
        // Names the rules speak of, and names they do not: one of each kind per 10 entries.
        const k = 4 * (d * PER_DIR + j);
        const names = [`gen-${k}.dat`, `gen-${k + 2}.dat`, `out-${k + 1}.log`, `keep-${k + 3}.o`, `keep-${k + 1}.o`, `plain-${k}.txt`];
        const name = names[j % names.length]!;
        writeFileSync(path.join(dir, name), "needle\n");
        if (j % 10 === 0) sample.push(`d${d}/${name}`);
      }
      for (const sub of [`cache-${4 * d + 2}`, `cache-${4 * d + 3}`, "build-x", "tmp"]) {
        mkdirSync(path.join(dir, sub));
        writeFileSync(path.join(dir, sub, "inner.log"), "needle\n");
        sample.push(`d${d}/${sub}/inner.log`);
      }
    }
    if (!noGit) execFileSync("git", ["init", "-q", "--template=", "."], { cwd: root });
  });

  it("is the size of the issue's file, within the limit", () => {
    expect(Buffer.byteLength(rules)).toBeLessThanOrEqual(MAX_GITIGNORE_BYTES);
    expect(Buffer.byteLength(rules)).toBeGreaterThan(MAX_GITIGNORE_BYTES * 0.9);
  });

  describe.each(STRATEGIES)("(%s)", (strategy) => {
    let server: Connected;
    beforeAll(async () => {
      // A cap that holds the whole listing, so that every path left out was left out by the rules.
      server = await connect(["--max-result-chars=1000000", root], { env: strategyEnv(strategy) });
    });
    afterAll(() => server?.close());

    it("a search answers a ping first", async () => {
      const { result, order } = await pingDuring(server, "search_file_contents", { path: root, query: "needle", outputMode: "count" });
      expect(order).toEqual(["ping", "search_file_contents"]);
      expect(textOf(result)).toMatch(
        /^Found [\d,]+ matching lines \([\d,]+ occurrences\) in [\d,]+ files; searched [\d,]+ files\.\nNot searched: [\d,]+ files \([\d,]+ ignored by \.gitignore/,
      );
      expect(textOf(result)).not.toContain(".gitignore not applied");
    });

    it.skipIf(noGit)("leaves out exactly what git check-ignore ignores, on a sample of the tree", async () => {
      const text = textOf(await call(server.client, "search_files", { path: root, pattern: "**", respectGitignore: true }));
      expect(text).not.toContain("[Result truncated");
      const listed = new Set(
        text
          .split("\n\n")[0]!
          .split("\n")
          .map((p) => path.relative(root, p)),
      );
      let out = "";
      try {
        out = execFileSync("git", ["check-ignore", "--no-index", "--stdin"], {
          cwd: root,
          input: `${sample.join("\n")}\n`,
          encoding: "utf8",
          env: { ...process.env, HOME: root, XDG_CONFIG_HOME: root, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" },
        });
      } catch (error) {
        if ((error as { status?: number }).status !== 1) throw error;
      }
      const ignored = new Set(out.split("\n").filter((p) => p !== ""));
      // Both verdicts are well represented, so the comparison says something.
      expect(ignored.size).toBeGreaterThan(sample.length / 4);
      expect(ignored.size).toBeLessThan((sample.length * 3) / 4);
      expect(sample.filter((p) => listed.has(p) === ignored.has(p))).toEqual([]);
    });
  });
});
