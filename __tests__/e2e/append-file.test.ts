/**
 * Two server processes appending 2 MB records to one file (SPEC §18): none
 * interleaved with another, across the process boundary. append_file's own
 * behaviour is tested in process (unit/tools/append-file.test.ts).
 *
 * Regression guard: two processes appending 2 MB records interleaved 10 of 80
 * of them.
 */
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isServerEntry } from "../../src/sandbox/index.js";
import { tempDir } from "../support/fixtures.js";
import { call, connect, textOf, type Connected } from "../support/spawn.js";

const leftovers = async (dir: string) => (await readdir(dir)).filter((n) => isServerEntry(n) || n.endsWith(".tmp"));

describe("two server processes appending to one file", () => {
  let root: string;
  let remove: () => Promise<void>;
  const servers: Connected[] = [];

  beforeAll(async () => {
    ({ dir: root, remove } = await tempDir("bfs-append-two-"));
    servers.push(await connect([root]), await connect([root]));
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
    await remove();
  });

  it("80 records of 2 MB, 40 from each, sent at once: every record is in the file whole, none interleaved", async () => {
    const file = path.join(root, "shared.log");
    const RECORD = 2 * 1024 * 1024;
    // Each record is its own header and one repeated letter, so any interleaving shows.
    const record = (server: number, i: number): string => {
      const head = `<record ${server}-${i}>`;
      return `${head}${String.fromCharCode(97 + ((server * 40 + i) % 26)).repeat(RECORD - head.length - 1)}\n`;
    };
    const results = await Promise.all(
      [0, 1].flatMap((server) =>
        Array.from({ length: 40 }, (_, i) => call(servers[server]!.client, "append_file", { path: file, content: record(server, i) })),
      ),
    );
    expect(results.filter((r) => r.isError).map(textOf)).toEqual([]);
    const text = await readFile(file, "utf8");
    expect(text.length).toBe(80 * RECORD);
    const seen = new Set<string>();
    for (let at = 0; at < text.length; at += RECORD) {
      const head = /^<record (\d)-(\d+)>/.exec(text.slice(at, at + 20));
      expect(head, `a record starts at ${at}`).not.toBeNull();
      const expected = record(Number(head![1]), Number(head![2]));
      expect(text.slice(at, at + RECORD) === expected, `record ${head![0]} at ${at} is whole`).toBe(true);
      seen.add(head![0]);
    }
    expect(seen.size).toBe(80);
    expect(await leftovers(root)).toEqual([]);
  });
});
