/**
 * The note on a path that named nothing because one of its names differs from an entry's only in letter case or in
 * Unicode form (tools/near-name.ts), under both platform strategies: what it names, the path it gives, where it says
 * nothing (no such entry, two of them, a directory read past its bound), a link whose target is missing, and that it
 * never looks outside.
 */
import { opendirSync } from "node:fs";
import { mkdir, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NEAR_NAME_ENTRIES, NEAR_NAME_LEVELS, NEAR_NAME_LOOKUPS } from "../../../src/tools/near-name.js";
import { STRATEGIES, tempDir } from "../../support/fixtures.js";
import { call, inProcess, textOf, type InProcess } from "../../support/in-process.js";

const NFD = "cafe\u0301.txt";
const NFC = "caf\u00e9.txt";

describe.each(STRATEGIES)("near names (%s)", (strategy) => {
  let root: string;
  let outside: string;
  let big: string;
  let server: InProcess;
  const cleanups: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    const a = await tempDir("bfs-near-");
    const b = await tempDir("bfs-near-out-");
    cleanups.push(a.remove, b.remove);
    root = a.dir;
    outside = b.dir;
    await writeFile(path.join(root, "README.md"), "hello\n");
    await writeFile(path.join(root, NFD), "accent\n");
    await mkdir(path.join(root, "src"));
    await writeFile(path.join(root, "src", "Main.py"), "print(1)\n");
    await mkdir(path.join(root, "two"));
    await writeFile(path.join(root, "two", "Notes.txt"), "1\n");
    await writeFile(path.join(root, "two", "NOTES.txt"), "2\n");
    await writeFile(path.join(outside, "Secret.txt"), "secret\n");
    await symlink(outside, path.join(root, "escape"));
    await symlink(path.join(root, "gone.txt"), path.join(root, "dangling"));
    await symlink(path.join(root, "no-dir"), path.join(root, "dangling-dir"));
    await symlink(path.join(outside, "gone.txt"), path.join(root, "dangling-out"));
    big = path.join(root, "big");
    await mkdir(big);
    for (let i = 0; i < NEAR_NAME_ENTRIES + 200; i++) await writeFile(path.join(big, `File${i}.txt`), "");
    server = await inProcess([root], { strategy });
  }, 120_000);

  afterAll(async () => {
    await server?.close();
    for (const cleanup of cleanups) await cleanup();
  });

  const run = (name: string, args: Record<string, unknown>) => call(server.client, name, args);
  const failed = (result: CallToolResult): string => {
    expect(result.isError).toBe(true);
    return textOf(result);
  };

  it("names the entry that differs only in letter case, and the path with it", async () => {
    const text = failed(await run("read_text_file", { path: path.join(root, "readme.md") }));
    expect(text).toBe(
      `Cannot open ${root}/readme.md: no such file or directory (ENOENT)\n` +
        `Note: ${root}/ holds no readme.md, but it holds README.md, a name that differs only in letter case; ` +
        `with it, path reads ${root}/README.md`,
    );
    // The path it gives reads the file.
    expect(textOf(await run("read_text_file", { path: `${root}/README.md` }))).toBe("hello\n");
  });

  it("names a directory of the path that differs in letter case, and the whole path with it", async () => {
    const text = failed(await run("get_file_info", { path: path.join(root, "SRC", "Main.py") }));
    expect(text).toMatch(/^Parent directory does not exist: .*\/SRC\n/);
    expect(
      text.endsWith(
        `Note: ${root}/ holds no SRC, but it holds src, a name that differs only in letter case; with it, path reads ${root}/src/Main.py`,
      ),
    ).toBe(true);
    const write = failed(await run("write_file", { path: path.join(root, "Src", "new.py"), content: "x" }));
    expect(write.endsWith(`with it, path reads ${root}/src/new.py`)).toBe(true);
  });

  it("names an entry written in another Unicode form, with its code points as JSON", async () => {
    const text = failed(await run("read_text_file", { path: path.join(root, NFC) }));
    expect(
      text.endsWith(
        `holds no ${NFC}, but it holds ${NFD}, the same letters in other Unicode code points (as JSON: "cafe\\u0301.txt"); with it, path reads ${root}/${NFD}`,
      ),
    ).toBe(true);
    expect(textOf(await run("read_text_file", { path: `${root}/${NFD}` }))).toBe("accent\n");
  });

  it("shows a relative name's directory by its real path, and keeps the path relative", async () => {
    const text = failed(await run("read_text_file", { path: "readme.MD" }));
    expect(
      text.endsWith(
        `Note: ${root} holds no readme.MD, but it holds README.md, a name that differs only in letter case; with it, path reads README.md`,
      ),
    ).toBe(true);
    expect(
      failed(await run("read_text_file", { path: "src/MAIN.py" })).endsWith(
        "Note: src/ holds no MAIN.py, but it holds Main.py, a name that differs only in letter case; with it, path reads src/Main.py",
      ),
    ).toBe(true);
  });

  it("names the parameter that missed: a move's source, a file of read_multiple_files", async () => {
    const moved = failed(await run("move_file", { source: path.join(root, "Readme.md"), destination: path.join(root, "x.md") }));
    expect(moved.endsWith(`with it, source reads ${root}/README.md`)).toBe(true);
    const many = await run("read_multiple_files", { paths: [path.join(root, "README.md"), path.join(root, "src", "main.py")] });
    expect(many.isError ?? false).toBe(false);
    expect(textOf(many)).toContain(
      `${root}/src/main.py: Error - Cannot open ${root}/src/main.py: no such file or directory (ENOENT)\n` +
        `Note: ${root}/src/ holds no main.py, but it holds Main.py, a name that differs only in letter case; with it, paths[1] reads ${root}/src/Main.py`,
    );
  });

  it("looks for near names of at most NEAR_NAME_LOOKUPS failed files of a read_multiple_files call", async () => {
    const paths = Array.from({ length: NEAR_NAME_LOOKUPS + 2 }, () => path.join(root, "readme.md"));
    const text = textOf(await run("read_multiple_files", { paths }));
    expect(text.split("\n").filter((line) => line.startsWith("Note: "))).toHaveLength(NEAR_NAME_LOOKUPS);
    expect(text).toContain(
      `Note: ${root}/ holds no readme.md, but it holds README.md, a name that differs only in letter case; with it, paths[${NEAR_NAME_LOOKUPS - 1}] reads`,
    );
    expect(text).not.toContain(`paths[${NEAR_NAME_LOOKUPS}] reads`);
  });

  it("tries at most NEAR_NAME_LEVELS directories of a path upward", async () => {
    const under = (missing: number) => path.join(root, "SRC", ...Array.from({ length: missing }, () => "m"), "f.txt");
    expect(failed(await run("read_text_file", { path: under(NEAR_NAME_LEVELS - 1) }))).toContain(
      "but it holds src, a name that differs only in letter case",
    );
    expect(failed(await run("read_text_file", { path: under(NEAR_NAME_LEVELS) }))).not.toContain("Note:");
  });

  it("says nothing when no entry is like the name, or two are", async () => {
    expect(failed(await run("read_text_file", { path: path.join(root, "missing.md") }))).not.toContain("Note:");
    expect(failed(await run("read_text_file", { path: path.join(root, "nowhere", "at", "all.md") }))).toBe(
      `Parent directory does not exist: ${root}/nowhere/at`,
    );
    expect(failed(await run("read_text_file", { path: path.join(root, "two", "notes.txt") }))).not.toContain("Note:");
  });

  it("reads a directory only to its first NEAR_NAME_ENTRIES names", async () => {
    // The order the server reads them in: the directory's own (readdirSync sorts them).
    const order: string[] = [];
    const dir = opendirSync(big);
    for (let entry = dir.readSync(); entry !== null; entry = dir.readSync()) order.push(entry.name);
    dir.closeSync();
    const early = order[10] as string;
    const late = order[NEAR_NAME_ENTRIES + 100] as string;
    expect(failed(await run("read_text_file", { path: path.join(big, early.toLowerCase()) }))).toContain(`but it holds ${early},`);
    expect(failed(await run("read_text_file", { path: path.join(big, late.toLowerCase()) }))).not.toContain("Note:");
  });

  it("names a link whose target (inside) does not exist; one leading outside is refused as outside, without a note", async () => {
    expect(failed(await run("read_text_file", { path: path.join(root, "dangling") }))).toBe(
      `Cannot open ${root}/dangling: no such file or directory (ENOENT)\nNote: ${root}/dangling is a symbolic link whose target does not exist.`,
    );
    expect(failed(await run("write_file", { path: path.join(root, "dangling-dir", "new.txt"), content: "x" }))).toBe(
      `Parent directory does not exist: ${root}/dangling-dir\nNote: ${root}/dangling-dir is a symbolic link whose target does not exist.`,
    );
    const out = failed(await run("get_file_info", { path: path.join(root, "dangling-out") }));
    expect(out).toMatch(/^Access denied/);
    expect(out).not.toContain("Note:");
  });

  it("never looks outside: not through a link that leads out, not above an allowed directory", async () => {
    const through = failed(await run("read_text_file", { path: path.join(root, "escape", "secret.txt") }));
    expect(through).toMatch(/^Access denied/);
    expect(through).not.toContain("Secret.txt");
    const above = failed(await run("read_text_file", { path: path.join(path.dirname(root), path.basename(root).toUpperCase(), "README.md") }));
    expect(above).toMatch(/^Access denied/);
    expect(above).not.toContain("Note:");
  });
});
