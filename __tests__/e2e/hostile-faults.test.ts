/**
 * Faults through the built server (SPEC §5): special files are refused, not
 * read (a FIFO used to hang the reference server's read); permission bits
 * survive write_file and edit_file (the reference reset them to 0644); a
 * failed write leaves the old content and no temp file; walks over unreadable,
 * looping, undecodable and vanishing entries complete and say what they skipped.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdir, readdir, readFile, stat, symlink, writeFile, chmod } from "node:fs/promises";
import net from "node:net";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callWithin, connectThroughShell, expectOk, expectRefused, startAttacker, tempFilesIn } from "../support/hostile.js";
import { connect, textOf, type Connected } from "../support/spawn.js";
import { STRATEGIES, strategyEnv, tempDir } from "../support/fixtures.js";

const isRoot = process.getuid?.() === 0;
const isLinux = process.platform === "linux";

let root: string;
let remove: () => Promise<void>;
let server: Connected;
let socketServer: net.Server;

const run = (name: string, args: Record<string, unknown>) => callWithin(server.client, name, args);

describe.each(STRATEGIES)("%s strategy", (name) => {
  beforeAll(async () => {
    const t = await tempDir("bfs-faults-");
    root = t.dir;
    remove = t.remove;
    execFileSync("mkfifo", [path.join(root, "pipe")]);
    socketServer = net.createServer();
    await new Promise<void>((resolve) => socketServer.listen(path.join(root, "sock"), resolve));
    server = await connect([root], { env: strategyEnv(name) });
  });

  afterAll(async () => {
    await server?.close();
    await new Promise((resolve) => socketServer?.close(resolve));
    await remove?.();
  });

  describe("special files are refused without being opened for reading", () => {
    const readers = (p: string): Array<[string, Record<string, unknown>]> => [
      ["read_text_file", { path: p }],
      ["read_file", { path: p }],
      ["read_text_file", { path: p, offset: 5 }],
      ["read_text_file", { path: p, head: 3 }],
      ["read_text_file", { path: p, tail: 3 }],
      ["read_media_file", { path: p }],
      ["edit_file", { path: p, edits: [{ oldText: "a", newText: "b" }] }],
      ["edit_file", { path: p, edits: [{ oldText: "a", newText: "b" }], dryRun: true }],
    ];

    it.each([
      ["pipe", "FIFO"],
      ["sock", "socket"],
    ])("%s (%s): every reading tool answers at once with the kind of file", async (name, kind) => {
      const target = path.join(root, name);
      for (const [tool, args] of readers(target)) {
        expectRefused(await run(tool, args), new RegExp(`Not a regular file: ${target} \\(${kind}\\)`));
      }
      const multi = expectOk(await run("read_multiple_files", { paths: [target, target] }));
      expect(multi).toBe(
        [`${target}: Error - Not a regular file: ${target} (${kind})`, `${target}: Error - Not a regular file: ${target} (${kind})`].join("\n---\n"),
      );
      // write_file does not replace something that is not a regular file either.
      expectRefused(await run("write_file", { path: target, content: "x" }), new RegExp(`${kind}`), target);
      expect(textOf(await run("get_file_info", { path: target }))).toMatch(/isFile: false/);
      const st = await stat(target);
      expect(kind === "FIFO" ? st.isFIFO() : st.isSocket()).toBe(true);
      expect(await tempFilesIn(root)).toEqual([]);
    });

    it("listings, tree and search include them and complete", async () => {
      expect(expectOk(await run("list_directory", { path: root }))).toMatch(/\[FILE\] pipe/);
      expect(expectOk(await run("list_directory_with_sizes", { path: root }))).toMatch(/\[FILE\] sock/);
      expect(JSON.parse(expectOk(await run("directory_tree", { path: root })))).toEqual(
        expect.arrayContaining([
          { name: "pipe", type: "file" },
          { name: "sock", type: "file" },
        ]),
      );
      expect(expectOk(await run("search_files", { path: root, pattern: "p*" }))).toContain(path.join(root, "pipe"));
    });

    it.skipIf(!isLinux)("devices under /dev as the allowed directory: refused before any read", async () => {
      const dev = await connect(["/dev"]);
      try {
        const call = (name: string, args: Record<string, unknown>) => callWithin(dev.client, name, args);
        for (const device of ["/dev/null", "/dev/zero", "/dev/urandom", "/dev/random", "/dev/full"]) {
          for (const args of [{ path: device }, { path: device, head: 1 }, { path: device, tail: 1 }, { path: device, offset: 10 }]) {
            expectRefused(await call("read_text_file", args), /Not a regular file: .* \(character device\)/, device);
          }
          expectRefused(await call("read_media_file", { path: device }), /character device/, device);
          expect(textOf(await call("read_multiple_files", { paths: [device] }))).toBe(
            `${device}: Error - Not a regular file: ${device} (character device)`,
          );
          expect(textOf(await call("get_file_info", { path: device }))).toMatch(/isFile: false/);
        }
        // /dev/stdin and /dev/fd lead to /proc, outside /dev; a link is never followed when opening.
        for (const p of ["/dev/stdin", "/dev/fd/0", "/dev/stdout"]) {
          const result = await call("read_text_file", { path: p });
          expect(result.isError).toBe(true);
          expect(textOf(result)).toMatch(/Access denied|symbolic link|no such file|ENOENT|Not a regular file/);
        }
      } finally {
        await dev.close();
      }
    });

    it.skipIf(!isLinux || !isRoot)("a character device node inside the allowed directory is neither read nor replaced", async () => {
      const node = path.join(root, "null-node");
      execFileSync("mknod", [node, "c", "1", "3"]);
      expectRefused(await run("read_text_file", { path: node }), /character device/, node);
      expectRefused(await run("write_file", { path: node, content: "x" }), /character device/, node);
      expectRefused(await run("edit_file", { path: node, edits: [{ oldText: "", newText: "x" }] }), /character device/, node);
      expect((await stat(node)).isCharacterDevice()).toBe(true);
      expect(await tempFilesIn(root)).toEqual([]);
    });
  });

  describe("files that change while they are read", () => {
    it("reads of a file being truncated, regrown and replaced answer well-formed, never hang or crash", async () => {
      const file = path.join(root, "flux.txt");
      await writeFile(file, "😀 start\n".repeat(5000));
      const attacker = startAttacker(
        "const [file] = args; const tmp = file + '.next';",
        `switch (i % 4) {
           case 0: fs.truncateSync(file, i % 3 === 0 ? 0 : 7); break;
           case 1: fs.appendFileSync(file, "😀 grow " + i + "\\n".repeat(1 + (i % 500))); break;
           case 2: fs.writeFileSync(tmp, "é".repeat(i % 9000)); fs.renameSync(tmp, file); break;
           default: fs.writeFileSync(file, Buffer.from([0xf0, 0x9f, 0x98]));
         }`,
        [file],
      );
      await attacker.started;
      try {
        for (let i = 0; i < 40; i++) {
          const results = await Promise.all([
            run("read_text_file", { path: file }),
            run("read_text_file", { path: file, offset: 3000, limit: 500 }),
            run("read_text_file", { path: file, head: 3 }),
            run("read_text_file", { path: file, tail: 3 }),
            run("read_multiple_files", { paths: [file, file] }),
            run("read_media_file", { path: file }),
            run("get_file_info", { path: file }),
          ]);
          for (const result of results) {
            // The text, and for a read that caught the file holding a cut character (or the NULs a truncate up to 7 bytes
            // leaves), the note that it is not UTF-8.
            const [, note, ...more] = result.content;
            expect(more).toEqual([]);
            if (note !== undefined)
              expect(note).toMatchObject({
                type: "text",
                text: expect.stringMatching(/^Note: .* is (not valid UTF-8 from line|not text \(a NUL byte)/),
              });
            if (result.isError) expect(textOf(result)).toMatch(/no such file|ENOENT|changed|File too large/);
          }
        }
      } finally {
        await attacker.stop();
      }
      expect(server.stderr()).not.toMatch(/\n\s+at |Unhandled/);
    });
  });

  describe("permission bits", () => {
    // 0o444 is refused instead (SPEC §12; write-safety and edit-safety tests).
    it.each([0o755, 0o700, 0o640, 0o600])("mode %s survives write_file and edit_file", async (mode) => {
      const file = path.join(root, `mode-${mode.toString(8)}.sh`);
      await writeFile(file, "#!/bin/sh\necho one\n");
      await chmod(file, mode);
      expectOk(await run("write_file", { path: file, content: "#!/bin/sh\necho two\n" }));
      expect((await stat(file)).mode & 0o7777).toBe(mode);
      expectOk(await run("edit_file", { path: file, edits: [{ oldText: "two", newText: "three" }] }));
      expect((await stat(file)).mode & 0o7777).toBe(mode);
      expect(await readFile(file, "utf8")).toBe("#!/bin/sh\necho three\n");
    });
  });

  describe("a write that fails leaves the old content and no temp file", () => {
    it("write_file onto a directory is refused and the directory stays as it was", async () => {
      const dir = path.join(root, "a-dir");
      await mkdir(dir);
      await writeFile(path.join(dir, "keep.txt"), "kept");
      expectRefused(await run("write_file", { path: dir, content: "x" }), /it is a directory/, dir);
      expectRefused(await run("edit_file", { path: dir, edits: [{ oldText: "", newText: "x" }] }), /directory/, dir);
      expect(await readdir(dir)).toEqual(["keep.txt"]);
      expect(await readFile(path.join(dir, "keep.txt"), "utf8")).toBe("kept");
      expect(await tempFilesIn(root)).toEqual([]);
    });

    it.skipIf(isRoot)("write_file and edit_file in a read-only directory (non-root only)", async () => {
      const dir = path.join(root, "read-only");
      await mkdir(dir);
      await writeFile(path.join(dir, "old.txt"), "old content");
      await chmod(dir, 0o555);
      try {
        expectRefused(await run("write_file", { path: path.join(dir, "old.txt"), content: "new" }), /permission denied|EACCES/);
        expectRefused(
          await run("edit_file", { path: path.join(dir, "old.txt"), edits: [{ oldText: "old", newText: "new" }] }),
          /permission denied|EACCES/,
        );
        expectRefused(await run("write_file", { path: path.join(dir, "fresh.txt"), content: "new" }), /permission denied|EACCES/);
        expect(await readFile(path.join(dir, "old.txt"), "utf8")).toBe("old content");
        expect(await readdir(dir)).toEqual(["old.txt"]);
      } finally {
        await chmod(dir, 0o755);
      }
    });

    it.skipIf(!isLinux)("a write cut short by the file-size limit (EFBIG) keeps the old file and removes the temp file", async () => {
      const dir = path.join(root, "efbig");
      await mkdir(dir);
      const file = path.join(dir, "small.txt");
      await writeFile(file, "old content\n");
      // `ulimit -f 8` allows 8 blocks of 512 bytes; Node ignores SIGXFSZ, so the write fails with EFBIG.
      const limited = await connectThroughShell("ulimit -f 8", [dir]);
      try {
        const big = "x".repeat(64 * 1024);
        const call = (name: string, args: Record<string, unknown>) => callWithin(limited.client, name, args);
        expectRefused(await call("write_file", { path: file, content: big }), /EFBIG|too large/, file);
        expectRefused(await call("edit_file", { path: file, edits: [{ oldText: "old", newText: big }] }), /EFBIG|too large/, file);
        expectRefused(await call("write_file", { path: path.join(dir, "new.txt"), content: big }), /EFBIG|too large/);
        expect(await readFile(file, "utf8")).toBe("old content\n");
        expect((await readdir(dir)).sort()).toEqual(["small.txt"]);
        // Within the limit everything still works on the same connection.
        expectOk(await call("write_file", { path: file, content: "fits\n" }));
        expect(await readFile(file, "utf8")).toBe("fits\n");
        expect(limited.stderr()).not.toMatch(/\n\s+at /);
      } finally {
        await limited.close();
      }
    });

    it("over stdio the HTTP stack is not loaded: no web global of Node's fetch is touched", async () => {
      const preload = path.join(root, "web-globals.mjs");
      await writeFile(
        preload,
        `for (const name of ["fetch", "Request", "Response", "Headers", "FormData", "WebSocket"]) {
          const d = Object.getOwnPropertyDescriptor(globalThis, name);
          if (d === undefined) continue;
          Object.defineProperty(globalThis, name, { configurable: true, get() { process.stderr.write("web global: " + name + "\\n"); return d.value ?? d.get?.call(globalThis); } });
        }`,
      );
      const file = path.join(root, "plain.txt");
      await writeFile(file, "plain\n");
      const watched = await connect([root], { env: { ...strategyEnv(name), NODE_OPTIONS: `--import=${pathToFileURL(preload).href}` } });
      try {
        expect(expectOk(await callWithin(watched.client, "read_text_file", { path: file }))).toBe("plain\n");
        expect(watched.stderr()).toContain("running on stdio");
        expect(watched.stderr()).not.toContain("web global");
      } finally {
        await watched.close();
      }
    });

    // Under an address-space limit V8 cannot reserve the guard region of a WebAssembly memory, which the UTF-8
    // counter of reads and the SIMD loops of literal searches use: they must fall back to their JS loops.
    const ADDRESS_SPACE_KB = 4_000_000;
    it.skipIf(!isLinux)("an address-space limit that leaves no room for a WebAssembly memory: reads and searches answer", async () => {
      const probe = execFileSync("sh", [
        "-c",
        `ulimit -v ${ADDRESS_SPACE_KB}; exec "$0" -e 'try { new WebAssembly.Memory({ initial: 1 }); console.log("allowed") } catch { console.log("refused") }'`,
        process.execPath,
      ]).toString();
      // The premise: under this limit the memory is refused (else this test would not reach the JS loops).
      expect(probe.trim()).toBe("refused");
      const dir = path.join(root, "address-space");
      await mkdir(dir);
      const file = path.join(dir, "words.txt");
      // Lines of common bytes, a mixed-case word in some: long enough for the counter's and the loops' SIMD paths.
      const lines = Array.from({ length: 20_000 }, (_, i) => (i % 97 === 5 ? `ab ${i} NeedLE in line` : `ab ba ${i} aab bba`));
      await writeFile(file, `${lines.join("\n")}\n`);
      const limited = await connectThroughShell(`ulimit -v ${ADDRESS_SPACE_KB}`, [dir]);
      try {
        const call = (name: string, args: Record<string, unknown>) => callWithin(limited.client, name, args);
        const text = lines.join("\n");
        expect(expectOk(await call("read_text_file", { path: file, offset: 100_000, length: 50 }))).toContain(text.slice(100_000, 100_050));
        const needles = lines.flatMap((l, i) => (l.includes("NeedLE") ? [`${i + 1}:${l}`] : []));
        const found = expectOk(await call("search_file_contents", { path: dir, query: "needle", caseSensitive: false, outputMode: "lines" }));
        expect(found.split("\n").filter((l) => /^\d+:/.test(l))).toEqual(needles.slice(0, found.split("\n").filter((l) => /^\d+:/.test(l)).length));
        expect(found).toContain(`Found ${needles.length} matching lines`);
        const pairs = lines.filter((l) => l.includes("ab b")).length;
        expect(expectOk(await call("search_file_contents", { path: dir, query: "ab b", caseSensitive: true, outputMode: "count" }))).toContain(
          `Found ${pairs.toLocaleString("en-US")} matching lines`,
        );
        expect(limited.stderr()).not.toMatch(/\n\s+at /);
      } finally {
        await limited.close();
      }
    });
  });

  describe("walks over hostile trees complete and report what they skipped", () => {
    const skipNote = /\n\n\[Skipped (\d+) unreadable (entry|entries): (.*)\]$/;
    const treeJson = (text: string): unknown => JSON.parse(text.replace(skipNote, ""));

    it.skipIf(isRoot)("unreadable subdirectories (non-root only)", async () => {
      const dir = path.join(root, "locked-tree");
      await mkdir(path.join(dir, "locked", "inner"), { recursive: true });
      await writeFile(path.join(dir, "visible.txt"), "v");
      await chmod(path.join(dir, "locked"), 0o000);
      try {
        const tree = expectOk(await run("directory_tree", { path: dir }));
        expect(tree).toMatch(skipNote);
        expect(tree.match(skipNote)![3]).toContain(`${path.join(dir, "locked")} (EACCES)`);
        expect(treeJson(tree)).toEqual(expect.arrayContaining([{ name: "locked", type: "directory", children: [] }]));
        const search = expectOk(await run("search_files", { path: dir, pattern: "**" }));
        expect(search).toContain(path.join(dir, "visible.txt"));
        expect(search).toMatch(skipNote);
      } finally {
        await chmod(path.join(dir, "locked"), 0o755);
      }
    });

    it("a directory whose name is not UTF-8 cannot be entered by its decoded name: skipped and reported", async () => {
      const dir = path.join(root, "undecodable");
      await mkdir(dir);
      const raw = Buffer.concat([Buffer.from(`${dir}/dir-`), Buffer.from([0xff, 0xfe])]);
      await mkdir(raw);
      await writeFile(Buffer.concat([raw, Buffer.from("/hidden.txt")]), "h");
      await writeFile(path.join(dir, "plain.txt"), "p");
      const lossy = path.join(dir, "dir-\ufffd\ufffd");
      const tree = expectOk(await run("directory_tree", { path: dir }));
      expect(tree.match(skipNote)?.[3]).toBe(`${lossy} (ENOENT)`);
      expect(treeJson(tree)).toEqual(
        expect.arrayContaining([
          { name: "plain.txt", type: "file" },
          { name: "dir-\ufffd\ufffd", type: "directory", children: [] },
        ]),
      );
      const search = expectOk(await run("search_files", { path: dir, pattern: "**" }));
      expect(search).toContain(path.join(dir, "plain.txt"));
      expect(search.match(skipNote)?.[3]).toBe(`${lossy} (ENOENT)`);
    });

    it("symlink loops and links to ancestors are listed, never followed", async () => {
      const dir = path.join(root, "loops");
      await mkdir(path.join(dir, "sub"), { recursive: true });
      await symlink("loop-b", path.join(dir, "loop-a"));
      await symlink("loop-a", path.join(dir, "loop-b"));
      await symlink("..", path.join(dir, "sub", "up"));
      await symlink(dir, path.join(dir, "sub", "root-again"));
      await symlink("self", path.join(dir, "self"));
      const tree = treeJson(expectOk(await run("directory_tree", { path: dir })));
      expect(tree).toEqual(
        expect.arrayContaining([
          { name: "loop-a", type: "file" },
          { name: "self", type: "file" },
          { name: "sub", type: "directory", children: expect.arrayContaining([{ name: "up", type: "file" }]) },
        ]),
      );
      // As upstream: a link whose target cannot be resolved (the loops) fails validation and is left out.
      const search = expectOk(await run("search_files", { path: dir, pattern: "**" })).split("\n");
      expect(search.sort()).toEqual(["sub", "sub/root-again", "sub/up"].map((p) => path.join(dir, p)));
      expect(expectOk(await run("list_directory_with_sizes", { path: dir }))).toMatch(/Total: 3 files, 1 directories/);
    });

    it("entries vanishing and appearing mid-walk: every walk completes with well-formed output", async () => {
      const dir = path.join(root, "churn");
      await mkdir(dir);
      for (let i = 0; i < 40; i++) {
        await mkdir(path.join(dir, `stable-${i}`, "deep"), { recursive: true });
        await writeFile(path.join(dir, `stable-${i}`, "deep", "f.txt"), "f");
      }
      const attacker = startAttacker(
        "const [dir] = args;",
        `const d = path.join(dir, "churn-" + (i % 25));
         try { fs.rmSync(d, { recursive: true, force: true }); } catch {}
         try { fs.mkdirSync(d); fs.mkdirSync(path.join(d, "a")); fs.mkdirSync(path.join(d, "a", "b")); fs.writeFileSync(path.join(d, "a", "b", "f"), "x"); } catch {}`,
        [dir],
      );
      await attacker.started;
      try {
        for (let i = 0; i < 25; i++) {
          const [tree, search, sized, listed] = await Promise.all([
            run("directory_tree", { path: dir }),
            run("search_files", { path: dir, pattern: "**/f*" }),
            run("list_directory_with_sizes", { path: dir, sortBy: "size" }),
            run("list_directory", { path: dir }),
          ]);
          const t = expectOk(tree);
          const parsed = treeJson(t) as Array<{ name: string }>;
          expect(parsed.filter((e) => e.name.startsWith("stable-"))).toHaveLength(40);
          const skipped = t.match(skipNote);
          if (skipped) expect(skipped[3]).toMatch(/\((ENOENT|ENOTDIR)\)/);
          const lines = expectOk(search).replace(skipNote, "").split("\n");
          expect(lines.filter((l) => l.includes("/stable-"))).toHaveLength(40);
          for (const line of lines) expect(line.startsWith(dir)).toBe(true);
          expect(expectOk(sized)).toMatch(/\nTotal: \d+ files, \d+ directories\nCombined size: /);
          expect(expectOk(listed)).toContain("[DIR] stable-0");
        }
      } finally {
        await attacker.stop();
      }
    });
  });
});

describe("the process guard", () => {
  // Under an address-space limit the HTTP stack's import made Node's fetch instantiate its WebAssembly parser, and
  // that rejection, unhandled, ended the process when it came before the server's own handler (2 of 30 starts
  // under load): the guard is installed before any other module is evaluated. Once, not per strategy.
  it("a rejection nothing handles, even while the modules load, is logged and the process goes on", () => {
    const dist = new URL("../../dist/", import.meta.url);
    const guards = new URL("cli/guards.js", dist).href;
    const run = spawnSync(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `await import(${JSON.stringify(guards)}); Promise.reject(new Error("early")); setTimeout(() => console.log("alive"), 20);`,
      ],
      { encoding: "utf8" },
    );
    expect(run.status).toBe(0);
    expect(run.stdout).toBe("alive\n");
    expect(run.stderr).toBe("Unhandled rejection: Error: early\n");
    // And the server's entry evaluates it first.
    const entry = readFileSync(new URL("index.js", dist), "utf8");
    expect(entry.match(/^import .*$/m)?.[0]).toBe('import "./cli/guards.js";');
  });
});
