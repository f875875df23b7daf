/**
 * The checkpoint cache through the built server (SPEC §13 "Cache identity").
 *
 * Regression: an in-place rewrite that kept the size and the nanosecond mtime
 * (`rsync --inplace -t`, `touch -r`) was served stale from the checkpoint cache.
 */
import { open, stat, utimes, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "../../support/fixtures.js";
import { call, inProcess, textOf, type InProcess } from "../../support/in-process.js";

let dir: string;
let remove: () => Promise<void>;
let server: InProcess;

beforeAll(async () => {
  ({ dir, remove } = await tempDir("bfs-cache-server-"));
  server = await inProcess(["--max-result-chars", "1000", dir]);
});

afterAll(async () => {
  await server?.close();
  await remove?.();
});

describe("a same-size in-place rewrite with the mtime put back", () => {
  it("is read afresh: new text at old offsets, the new total, and line windows of the new text", async () => {
    const file = path.join(dir, "inplace.txt");
    const before = `${"a".repeat(3000)}\n${"b".repeat(2000)}\n`;
    await writeFile(file, before);
    // A whole-second mtime, so putting it back restores it to the nanosecond.
    const SECONDS = 1_700_000_000;
    await utimes(file, SECONDS, SECONDS);
    const mtimeNs = (await stat(file, { bigint: true })).mtimeNs;
    const first = textOf(await call(server.client, "read_text_file", { path: file, offset: 2500 }));
    expect(first.startsWith("a".repeat(500))).toBe(true);
    // Same size, different layout: the line break moves from 3000 to 1000, written in place.
    const after = `${"c".repeat(1000)}\n${"d".repeat(4000)}\n`;
    expect(Buffer.byteLength(after)).toBe(Buffer.byteLength(before));
    const handle = await open(file, "r+");
    try {
      await handle.write(after, 0, "utf8");
    } finally {
      await handle.close();
    }
    await utimes(file, SECONDS, SECONDS);
    expect((await stat(file, { bigint: true })).mtimeNs).toBe(mtimeNs);
    const again = textOf(await call(server.client, "read_text_file", { path: file, offset: 2500 }));
    expect(again.startsWith("d".repeat(500))).toBe(true);
    expect(again).toContain(`of ${(5002).toLocaleString("en-US")}. Call again with offset=3500`);
    // Line 2 now starts at character 1001, not 3001.
    const line2 = textOf(await call(server.client, "read_text_file", { path: file, startLine: 2, lineCount: 1 }));
    expect(line2).toBe(`${"d".repeat(1000)}\n[Result truncated: showing characters 1,002-2,001 of 5,002. Call again with offset=2001 to continue.]`);
  });
});
