/**
 * append_file in process under both platform strategies (SPEC §15, §18): the
 * line-break report, creation, no lost chunk under concurrent calls, the
 * refusals, and write_file without `append`. Two server processes appending to
 * one file are e2e/append-file.test.ts.
 *
 * Regression guard: write_file's `append` was annotated idempotent (a retried
 * call duplicated its text).
 */
import { createHash } from "node:crypto";
import { chmod, mkdir, readdir, readFile, stat, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { truncationNotice } from "../../../src/kernel/bounded.js";
import { isServerEntry } from "../../../src/sandbox/index.js";
import { STRATEGIES, tempDir } from "../../support/fixtures.js";
import { call, inProcess, textOf, type InProcess } from "../../support/in-process.js";

const leftovers = async (dir: string) => (await readdir(dir)).filter((n) => isServerEntry(n) || n.endsWith(".tmp"));

describe.each(STRATEGIES)("append_file (%s strategy)", (name) => {
  let root: string;
  let remove: () => Promise<void>;
  let s: InProcess;
  const append = (file: string, content: string) => call(s.client, "append_file", { path: file, content });

  beforeAll(async () => {
    ({ dir: root, remove } = await tempDir("bfs-append-"));
    s = await inProcess([root], { strategy: name });
  });
  afterAll(async () => {
    await s.close();
    await remove();
  });

  it.each([
    ["ends with \\n", "one\n", "it ended with a line break"],
    ["ends with \\r\\n", "one\r\n", "it ended with a CRLF line break"],
    ["has no final line break", "one", "it did not end with a line break; the text was added directly after its last character"],
    ["is empty", "", "it was empty"],
  ])("reports how the file ended when it %s", async (_label, before, report) => {
    const file = path.join(root, `ending-${createHash("sha256").update(before).digest("hex").slice(0, 8)}.txt`);
    await writeFile(file, before);
    expect(textOf(await append(file, "two\n"))).toBe(`Successfully appended 4 bytes to ${file} (${report})`);
    expect(await readFile(file, "utf8")).toBe(`${before}two\n`);
  });

  it("refuses a UTF-16 file (a byte order mark first), naming it, and leaves it as it was; a file of one byte FF is appended to", async () => {
    for (const [order, mark, bytes] of [
      ["LE", "FF FE", Buffer.from("\ufeffline\r\n", "utf16le")],
      ["BE", "FE FF", Buffer.from("\ufeffline\r\n", "utf16le").swap16()],
    ] as const) {
      const file = path.join(root, `utf16-${order}.log`);
      await writeFile(file, bytes);
      const result = await append(file, "more\n");
      expect(result.isError).toBe(true);
      expect(textOf(result)).toBe(
        `Cannot append to ${file}: it is UTF-16 ${order} text (it begins with the byte order mark ${mark}), and the text would be ` +
          `added as UTF-8, which a reader of the file would not decode; nothing was appended: ${file} is as it was`,
      );
      expect(await readFile(file)).toEqual(bytes);
    }
    const one = path.join(root, "one-ff.bin");
    await writeFile(one, Buffer.from([0xff]));
    expect(textOf(await append(one, "x"))).toMatch(/^Successfully appended 1 byte/);
    expect(await leftovers(root)).toEqual([]);
  });

  it("creates a missing file (and says so), then adds at the end without truncating; bytes are UTF-8 bytes", async () => {
    const file = path.join(root, "log.txt");
    expect(textOf(await append(file, "first\n"))).toBe(`Successfully appended 6 bytes to ${file} (new file)`);
    expect(textOf(await append(file, "é\n"))).toBe(`Successfully appended 3 bytes to ${file} (it ended with a line break)`);
    expect(await readFile(file, "utf8")).toBe("first\né\n");
    expect(await leftovers(root)).toEqual([]);
  });

  it("keeps the file's mode, and keeps every chunk of many appends sent at once", async () => {
    const file = path.join(root, "many.txt");
    await writeFile(file, "head\n");
    await chmod(file, 0o640);
    const chunks = Array.from({ length: 40 }, (_, i) => `chunk-${i}:${"x".repeat(i * 50)}\n`);
    const results = await Promise.all(chunks.map((chunk) => append(file, chunk)));
    expect(results.filter((r) => r.isError)).toEqual([]);
    const text = await readFile(file, "utf8");
    expect(text.startsWith("head\n")).toBe(true);
    expect(text.length).toBe(5 + chunks.reduce((n, c) => n + c.length, 0));
    for (const chunk of chunks) expect(text.split(chunk).length - 1, chunk.slice(0, 9)).toBe(1);
    expect((await stat(file)).mode & 0o777).toBe(0o640);
    expect(await leftovers(root)).toEqual([]);
  });

  it("refuses a symlink leading outside, a directory and a read-only file, changing nothing", async () => {
    const { dir: outside, remove: removeOutside } = await tempDir("bfs-append-outside-");
    try {
      await writeFile(path.join(outside, "target.txt"), "t\n");
      await symlink(path.join(outside, "target.txt"), path.join(root, "link.txt"));
      expect(textOf(await append(path.join(root, "link.txt"), "x"))).toMatch(/^Access denied/);
      expect(await readFile(path.join(outside, "target.txt"), "utf8")).toBe("t\n");
      expect(await leftovers(outside)).toEqual([]);
    } finally {
      await removeOutside();
    }
    await mkdir(path.join(root, "adir"));
    expect(textOf(await append(path.join(root, "adir"), "x"))).toMatch(/^Cannot append to .*adir: it is a directory/);
    const ro = path.join(root, "ro-append.txt");
    await writeFile(ro, "ro\n");
    await chmod(ro, 0o444);
    expect(textOf(await append(ro, "x"))).toMatch(/^Cannot append to .*ro-append\.txt: it is read-only/);
    expect(await readFile(ro, "utf8")).toBe("ro\n");
  });

  it("refuses text that ends with a non-pageable notice, and creates nothing", async () => {
    const file = path.join(root, "never.txt");
    const content = `x\n${truncationNotice(100, 5000, "list a subdirectory, or use search_files with a pattern")}`;
    const result = await append(file, content);
    expect(textOf(result)).toMatch(/^Refusing to write .*never\.txt/);
    await expect(stat(file)).rejects.toThrow(/ENOENT/);
  });
});

describe("write_file is upstream's again", () => {
  let root: string;
  let remove: () => Promise<void>;
  let s: InProcess;

  beforeAll(async () => {
    ({ dir: root, remove } = await tempDir("bfs-append-write-"));
    s = await inProcess([root]);
  });
  afterAll(async () => {
    await s.close();
    await remove();
  });

  it("has no append parameter, and append_file is not idempotent (a retry appends twice)", async () => {
    const tools = (await s.client.listTools()).tools;
    const write = tools.find((t) => t.name === "write_file")!;
    expect(Object.keys(write.inputSchema.properties ?? {}).sort()).toEqual(["content", "path"]);
    expect(write.annotations?.idempotentHint).toBe(true);
    expect(tools.find((t) => t.name === "append_file")!.annotations).toMatchObject({
      idempotentHint: false,
      destructiveHint: false,
      readOnlyHint: false,
    });
  });

  // Regression: zod drops unknown keys, so `append: true` from a second-round client replaced the whole file.
  it("refuses write_file's retired append: true, naming append_file, and leaves the file as it was", async () => {
    const file = path.join(root, "kept.txt");
    await writeFile(file, "precious\n");
    const result = await call(s.client, "write_file", { path: file, content: "more\n", append: true });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^Invalid arguments for write_file: append: .*use append_file.*Nothing was written\.$/);
    expect(await readFile(file, "utf8")).toBe("precious\n");
    expect(textOf(await call(s.client, "write_file", { path: file, content: "new\n", append: false }))).toBe(`Successfully wrote to ${file}`);
    expect(await readFile(file, "utf8")).toBe("new\n");
  });
});
