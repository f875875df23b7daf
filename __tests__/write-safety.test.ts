/**
 * write_file's promises (SPEC §12): a capped read is not written back, and a
 * file's owner and read-only mode are respected (append_file's own promises:
 * append-file.test.ts).
 */
import { chmod, chown, readdir, readFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { endsWithNotice, pageNotice, truncationNotice } from "../src/kernel/bounded.js";
import { isServerEntry } from "../src/sandbox/index.js";
import { tempDir } from "./support/fixtures.js";
import { IS_ROOT, NOBODY, NOBODY_SUITE, NOBODY_UNAVAILABLE, serverAsNobody } from "./support/privileges.js";
import { call, connect, textOf, type Connected } from "./support/spawn.js";

let root: string;
let remove: () => Promise<void>;
let s: Connected;

beforeAll(async () => {
  ({ dir: root, remove } = await tempDir("bfs-write-safety-"));
  s = await connect([root, "--max-result-chars", "1000"]);
});
afterAll(async () => {
  await s.close();
  await remove();
});

const write = (file: string, content: string) => call(s.client, "write_file", { path: file, content });

const leftovers = async (dir: string) => (await readdir(dir)).filter((n) => n.endsWith(".tmp") || isServerEntry(n));

describe("endsWithNotice: this server's notice frames, exactly", () => {
  const notices = [
    pageNotice(0, 50_000, 1_234_567),
    pageNotice(99_999, 1_000_000, 1_000_001),
    truncationNotice(50_000, 812_345, "pass a deeper path, or add excludePatterns"),
    truncationNotice(7, 8, "ask for fewer lines, or use offset and limit", { included: 12, requested: 40 }),
  ];

  it.each(notices)("recognises %s as the last line, with or without a final line break", (notice) => {
    expect(endsWithNotice(`some text\n${notice}`)).toBe(true);
    expect(endsWithNotice(`some text\n${notice}\n`)).toBe(true);
    expect(endsWithNotice(`some text\r\n${notice}\r\n`)).toBe(true);
    expect(endsWithNotice(notice)).toBe(true);
  });

  it.each(notices)("does not take %s in the middle, inside a line, or altered", (notice) => {
    expect(endsWithNotice(`before\n${notice}\nafter\n`)).toBe(false);
    expect(endsWithNotice(`quoted: ${notice}`)).toBe(false);
    expect(endsWithNotice(`${notice} and more`)).toBe(false);
    expect(endsWithNotice(`x\n${notice.replace("Result truncated", "Result cut")}`)).toBe(false);
    expect(endsWithNotice(`x\n${notice.replace(/\d/, "x")}`)).toBe(false);
    expect(endsWithNotice(`x\n${notice}\n\n`)).toBe(false);
  });
});

describe("write_file refuses to write back a capped read", () => {
  it("refuses the text a capped read_text_file returned, and leaves the file whole", async () => {
    const file = path.join(root, "big.txt");
    const full = "line of text\n".repeat(100);
    await writeFile(file, full);
    const window = textOf(await call(s.client, "read_text_file", { path: file }));
    expect(window).toMatch(/\n\[Result truncated: showing characters 1-1,000 of 1,300\. Call again with offset=1000 to continue\.\]$/);
    const result = await write(file, window);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^Refusing to write .*big\.txt: the content's last line is this server's own/);
    expect(textOf(result)).toMatch(/edit_file/);
    expect(textOf(result)).toMatch(/offset/);
    expect(await readFile(file, "utf8")).toBe(full);
  });

  it("accepts ordinary text that mentions a notice in the middle", async () => {
    const file = path.join(root, "doc.md");
    const content = `# Notices\nThe server ends a capped read with\n${pageNotice(0, 100, 520)}\nand nothing else.\n`;
    const result = await write(file, content);
    expect(textOf(result)).toBe(`Successfully wrote to ${file}`);
    expect(await readFile(file, "utf8")).toBe(content);
  });
});

describe("write_file: owner, group and permission", () => {
  it("a read-only (0444) file is refused and left as it was", async () => {
    const file = path.join(root, "readonly.txt");
    await writeFile(file, "one\n");
    await chmod(file, 0o444);
    const result = await write(file, "two\n");
    expect(textOf(result)).toMatch(/^Cannot write .*readonly\.txt: it is read-only for this server's user \(mode 0444/);
    expect(await readFile(file, "utf8")).toBe("one\n");
    expect(await leftovers(root)).toEqual([]);
  });

  it.skipIf(!IS_ROOT)("as root, the replaced file keeps its owner, group and mode (needs root to chown)", async () => {
    const file = path.join(root, "owned.txt");
    await writeFile(file, "one\n");
    await chown(file, 1234, 5678);
    await chmod(file, 0o640);
    expect((await write(file, "two\n")).isError).toBeFalsy();
    const st = await stat(file);
    expect([st.uid, st.gid, st.mode & 0o777]).toEqual([1234, 5678, 0o640]);
  });

  describe.skipIf(NOBODY_UNAVAILABLE !== undefined)(NOBODY_SUITE, () => {
    const shared = serverAsNobody(() => root);

    it("a file of another owner, writable through its group, is refused, not handed to nobody", async () => {
      const file = path.join(shared.dir(), "theirs.txt");
      await writeFile(file, "one\n");
      await chown(file, 1234, NOBODY.gid);
      await chmod(file, 0o664);
      const result = await call(shared.server().client, "write_file", { path: file, content: "two\n" });
      expect(textOf(result)).toMatch(/^Cannot replace .*theirs\.txt: it is owned by uid 1234 gid 65534/);
      const st = await stat(file);
      expect([st.uid, st.gid]).toEqual([1234, NOBODY.gid]);
      expect(await readFile(file, "utf8")).toBe("one\n");
      expect(await leftovers(shared.dir())).toEqual([]);
      // Appending changes no owner: it is allowed through the group's write bit (in place, as the file cannot be re-owned).
      expect(textOf(await call(shared.server().client, "append_file", { path: file, content: "more\n" }))).toBe(
        `Successfully appended 5 bytes to ${file} (it ended with a line break)`,
      );
      expect(await readFile(file, "utf8")).toBe("one\nmore\n");
    });

    it("its own files are written with owner kept; its read-only file is refused", async () => {
      const file = path.join(shared.dir(), "mine.txt");
      expect((await call(shared.server().client, "write_file", { path: file, content: "new\n" })).isError).toBeFalsy();
      expect((await stat(file)).uid).toBe(NOBODY.uid);
      await chmod(file, 0o444);
      const result = await call(shared.server().client, "write_file", { path: file, content: "again\n" });
      expect(textOf(result)).toMatch(/^Cannot write .*mine\.txt: it is read-only for this server's user/);
      expect(await readFile(file, "utf8")).toBe("new\n");
    });
  });
});
