/**
 * edit_file through the built server (SPEC §12): a long edit does not freeze the
 * server, a cancelled edit leaves the file as it was and releases its lock, and
 * CRLF, mixed endings and a BOM survive an edit.
 *
 * Regression: 200 whitespace-tolerant edits of a 6 MB file made every other
 * call wait 21.7 s (each edit re-split the whole file; the loop never yielded).
 */
import { createHash } from "node:crypto";
import { readdir, readFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "../../support/fixtures.js";
import { call, inProcess, textOf, type InProcess } from "../../support/in-process.js";

let dir: string;
let remove: () => Promise<void>;
let server: InProcess;

/** A file of `lines` tab-indented lines, and 200 edits whose oldText differs only in indentation (tolerant matches). */
async function tolerantCase(name: string, lines: number): Promise<{ file: string; edits: { oldText: string; newText: string }[] }> {
  const file = path.join(dir, name);
  await writeFile(file, Array.from({ length: lines }, (_, i) => `\tentry_${i} = value ${i}\n`).join(""));
  const step = Math.floor(lines / 200);
  const edits = Array.from({ length: 200 }, (_, k) => ({
    oldText: `  entry_${k * step} = value ${k * step}`,
    newText: `  entry_${k * step} = changed`,
  }));
  return { file, edits };
}

const sha = async (file: string): Promise<string> =>
  createHash("sha256")
    .update(await readFile(file))
    .digest("hex");

beforeAll(async () => {
  ({ dir, remove } = await tempDir("bfs-edit-server-"));
  server = await inProcess([dir]);
});

afterAll(async () => {
  await server?.close();
  await remove?.();
});

describe("edit_file through the server", () => {
  it("200 whitespace-tolerant edits of a 12 MB file: another call is answered before the edit finishes", async () => {
    const { file, edits } = await tolerantCase("big.txt", 500_000);
    const order: string[] = [];
    const edit = call(server.client, "edit_file", { path: file, edits, dryRun: true }).then((r) => {
      order.push("edit");
      return r;
    });
    const other = call(server.client, "list_allowed_directories", {}).then((r) => {
      order.push("other");
      return r;
    });
    const [diff] = await Promise.all([edit, other]);
    expect(order).toEqual(["other", "edit"]);
    expect(diff.isError ?? false, textOf(diff)).toBe(false);
    // newText takes the matched line's indentation (a tab), as upstream's tolerant match does.
    expect(textOf(diff)).toContain("-\tentry_0 = value 0\n+\tentry_0 = changed");
  });

  it("a cancelled edit writes nothing, leaves no temp file, and releases the file for the next call", async () => {
    const { file, edits } = await tolerantCase("cancel.txt", 500_000);
    const before = await sha(file);
    const controller = new AbortController();
    const outcome = server.client.callTool({ name: "edit_file", arguments: { path: file, edits } }, undefined, { signal: controller.signal }).then(
      () => "answered",
      () => "cancelled",
    );
    setImmediate(() => controller.abort());
    expect(await outcome).toBe("cancelled");
    // The next edit of the same file waits for the lock the cancelled one held, so once it is
    // answered the cancelled call has ended: the file is as it was, with this edit only.
    const next = await call(server.client, "edit_file", {
      path: file,
      edits: [{ oldText: "\tentry_1 = value 1\n", newText: "\tentry_1 = one\n" }],
      dryRun: true,
    });
    expect(next.isError ?? false, textOf(next)).toBe(false);
    expect(await sha(file)).toBe(before);
    expect((await readdir(dir)).filter((n) => n.endsWith(".tmp"))).toEqual([]);
  });

  it("edits whose newText equals their oldText: the file is not rewritten (same inode and time), and the note says so", async () => {
    const file = path.join(dir, "same.txt");
    await writeFile(file, "one\ntwo\n");
    const before = await stat(file);
    const same = await call(server.client, "edit_file", { path: file, edits: [{ oldText: "one", newText: "one" }] });
    expect(same.isError ?? false, textOf(same)).toBe(false);
    expect(textOf(same).endsWith("\nNote: the edit's newText equals its oldText, so the file was left as it was (not rewritten).")).toBe(true);
    const after = await stat(file);
    expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs]);
    // Its oldText is still looked for: one that is not there fails as any edit's.
    const missing = await call(server.client, "edit_file", { path: file, edits: [{ oldText: "three", newText: "three" }] });
    expect(missing.isError).toBe(true);
    // Beside an edit that changes something, the idle one is named and the other applied.
    const mixed = await call(server.client, "edit_file", {
      path: file,
      edits: [
        { oldText: "one", newText: "one" },
        { oldText: "two", newText: "2" },
      ],
      diff: false,
    });
    expect(textOf(mixed)).toBe(
      `Successfully edited ${file}: 2 edits, 2 replacements, lines 1-2\nNote: edits[0]: newText equals oldText, so it changes nothing.`,
    );
    expect(await readFile(file, "utf8")).toBe("one\n2\n");
  });

  it.each([
    ["CRLF", "one\r\ntwo\r\nthree\r\n", "one\r\n2\r\n2b\r\nthree\r\n"],
    ["mixed", "one\ntwo\r\nthree\n", "one\n2\r\n2b\r\nthree\n"],
    ["BOM + CRLF", "\uFEFFone\r\ntwo\r\nthree\r\n", "\uFEFFone\r\n2\r\n2b\r\nthree\r\n"],
  ])("%s endings survive an edit, outside and inside the edited text", async (_label, text, expected) => {
    const file = path.join(dir, `endings-${_label.replace(/\W/g, "")}.txt`);
    await writeFile(file, text);
    const result = await call(server.client, "edit_file", { path: file, edits: [{ oldText: "two", newText: "2\n2b" }] });
    expect(result.isError ?? false, textOf(result)).toBe(false);
    expect(await readFile(file, "utf8")).toBe(expected);
  });
});
