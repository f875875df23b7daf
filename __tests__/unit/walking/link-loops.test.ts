/**
 * Regression guard (issue 18): symlink loops inside the allowed directories
 * (self → self, a ↔ b) and chains of more than 40 links were reported as
 * "symlinks leading outside the allowed directories". They are now told as
 * what they are — too many levels of symbolic links (ELOOP) — by reads and
 * get_file_info, and counted as loops in search_file_contents' summary;
 * search_files and listings treat them as upstream does (left out, 0 B). A
 * loop that passes through the outside is still "outside", in the one uniform
 * refusal (SPEC §13). Through the built server, under each platform strategy.
 */
import { mkdir, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STRATEGIES, tempDir } from "../../support/fixtures.js";
import { call, inProcess, textOf, type InProcess } from "../../support/in-process.js";

const LOOP = /Too many levels of symbolic links \(ELOOP\)/;
const OUTSIDE_WORDING = /outside|Access denied/;
// Linux follows at most 40 links in one resolution (MAXSYMLINKS), and so does the server.
const CHAIN = 41;

describe.each(STRATEGIES)("symlink loops and over-long chains (%s)", (strategy) => {
  let base: string;
  let loops: string;
  let outside: string;
  let server: InProcess;
  let removeBase: () => Promise<void>;
  const run = (name: string, args: Record<string, unknown>): Promise<CallToolResult> => call(server.client, name, args);

  beforeAll(async () => {
    ({ dir: base, remove: removeBase } = await tempDir("bfs-loops-"));
    const root = path.join(base, "root");
    loops = path.join(root, "loops");
    outside = path.join(base, "outside");
    await mkdir(loops, { recursive: true });
    await mkdir(outside);
    await writeFile(path.join(loops, "target.txt"), "needle\n");
    await symlink("self", path.join(loops, "self"));
    await symlink("pair-b", path.join(loops, "pair-a"));
    await symlink("pair-a", path.join(loops, "pair-b"));
    // chain-0 → chain-1 → … → chain-40 → target.txt: 41 links from chain-0, 40 from chain-1.
    for (let i = 0; i < CHAIN; i++) await symlink(i + 1 < CHAIN ? `chain-${i + 1}` : "target.txt", path.join(loops, `chain-${i}`));
    // A loop through the outside: out → <outside>/back → <root>/loops/out.
    await symlink(path.join(outside, "back"), path.join(loops, "out"));
    await symlink(path.join(loops, "out"), path.join(outside, "back"));
    server = await inProcess([root], { strategy: strategy });
  });

  afterAll(async () => {
    await server?.close();
    await removeBase?.();
  });

  it.each(["self", "pair-a", "chain-0"])("read_text_file and get_file_info of %s say ELOOP, not outside", async (name) => {
    for (const tool of ["read_text_file", "get_file_info"]) {
      const result = await run(tool, { path: path.join(loops, name) });
      expect(result.isError, tool).toBe(true);
      expect(textOf(result), tool).toMatch(LOOP);
      expect(textOf(result), tool).not.toMatch(OUTSIDE_WORDING);
    }
  });

  it("a chain of 40 links is followed; a loop that passes outside gets the uniform refusal", async () => {
    expect(textOf(await run("read_text_file", { path: path.join(loops, "chain-1") }))).toBe("needle\n");
    const out = await run("read_text_file", { path: path.join(loops, "out") });
    expect(out.isError).toBe(true);
    expect(textOf(out)).toMatch(/^Access denied - path outside allowed directories: /);
    expect(textOf(out)).not.toMatch(/ELOOP|symbolic links/);
    expect(textOf(out)).not.toContain(outside);
  });

  it("search_file_contents counts the loops as loops, and only the link through the outside as outside", async () => {
    const text = textOf(await run("search_file_contents", { path: loops, query: "needle", outputMode: "count" }));
    // target.txt once, by its own name: the 40 links of the chain that reach it lead inside the searched directory.
    expect(text).toMatch(/^Found 1 matching line \(1 occurrence\) in 1 file; searched 1 file\./);
    expect(text).toContain(
      "Not searched: 45 files (1 symlink leading outside the allowed directories; " +
        `${CHAIN - 1} symlinks to files inside the searched directory, not followed: each file is searched under its own name; ` +
        "4 symlink loops or chains of more than 40 links (too many levels of symbolic links, ELOOP)).",
    );
  });

  it("search_files leaves the loops out as upstream's validation does, and listings show them as 0 B", async () => {
    const found = textOf(await run("search_files", { path: loops, pattern: "**" })).split("\n");
    const names = found.map((p) => path.basename(p)).sort();
    const expected = ["target.txt", ...Array.from({ length: CHAIN - 1 }, (_, i) => `chain-${i + 1}`)].sort();
    expect(names).toEqual(expected);
    const sized = textOf(await run("list_directory_with_sizes", { path: loops }));
    for (const name of ["self", "pair-a", "pair-b", "chain-0", "out"]) expect(sized).toMatch(new RegExp(`^\\[FILE\\] ${name} +0 B$`, "m"));
    expect(sized).toMatch(/^\[FILE\] chain-1 +7 B$/m);
  });
});
