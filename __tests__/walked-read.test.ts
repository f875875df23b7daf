/**
 * The synchronous small-file path of a tree content search: the sandbox's
 * readWalkedSmallFile (confinement, symlinks, FIFOs, size boundary), walkFiles
 * with a small-file visitor (same files, same order, each object once), and
 * ContentSearch.searchBytes (same result as searchFile on the same content).
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { TextSink } from "../src/bounded.js";
import { compileQuery, ContentSearch, type OutputMode } from "../src/grep/index.js";
import { Sandbox } from "../src/sandbox/index.js";
import { walkFiles } from "../src/walking/index.js";
import { escapeControls } from "../src/escape.js";
import { describeEachStrategy, tempDir, walkOptions } from "./support/fixtures.js";

let tmp: string;
let remove: () => Promise<void>;
let root: string;
let outside: string;

beforeEach(async () => {
  ({ dir: tmp, remove } = await tempDir("walked-read-"));
  root = path.join(tmp, "root");
  outside = path.join(tmp, "outside");
  fs.mkdirSync(root);
  fs.mkdirSync(outside);
  fs.writeFileSync(path.join(outside, "secret.txt"), "secret\n");
});

afterEach(() => remove());

describeEachStrategy("readWalkedSmallFile", () => {
  const into = Buffer.alloc(8192);
  const read = (name: string, reach = root + path.sep) => new Sandbox([root]).readWalkedSmallFile(reach, name, path.join(root, name), into);

  it("reads a small file whole and names the object it read", () => {
    fs.writeFileSync(path.join(root, "a.txt"), "alpha\nbeta\n");
    fs.writeFileSync(path.join(root, "empty"), "");
    const got = read("a.txt");
    expect(got.kind).toBe("whole");
    if (got.kind !== "whole") return;
    expect(into.subarray(0, got.length).toString()).toBe("alpha\nbeta\n");
    const st = fs.statSync(path.join(root, "a.txt"), { bigint: true });
    expect([BigInt(got.stat.dev), BigInt(got.stat.ino)]).toEqual([st.dev, st.ino]);
    expect(read("empty")).toMatchObject({ kind: "whole", length: 0 });
  });

  it("leaves a file as long as the buffer to be streamed, and reads one a byte shorter", () => {
    fs.writeFileSync(path.join(root, "full"), "x".repeat(8192));
    fs.writeFileSync(path.join(root, "short"), "x".repeat(8191));
    expect(read("full")).toEqual({ kind: "large" });
    expect(read("short")).toMatchObject({ kind: "whole", length: 8191 });
  });

  it("refuses a symlink, even to a file inside, and a FIFO without blocking", () => {
    fs.writeFileSync(path.join(root, "a.txt"), "a");
    fs.symlinkSync(path.join(root, "a.txt"), path.join(root, "link"));
    execFileSync("mkfifo", [path.join(root, "fifo")]);
    expect(() => read("link")).toThrow(/link/);
    expect(() => read("fifo")).toThrow(/fifo/);
  });

  it("refuses a file reached through a path that leads outside", () => {
    fs.symlinkSync(outside, path.join(root, "out"));
    expect(() => read("secret.txt", path.join(root, "out") + path.sep)).toThrow(/outside allowed directories/);
    expect(into.includes("secret")).toBe(false);
  });
});

describeEachStrategy("walkFiles with a small-file visitor", () => {
  it("visits the same files in the same order, each object once, big ones through a handle", async () => {
    fs.mkdirSync(path.join(root, "sub"));
    fs.writeFileSync(path.join(root, "a.txt"), "a\n");
    fs.linkSync(path.join(root, "a.txt"), path.join(root, "hard.txt"));
    fs.writeFileSync(path.join(root, "sub", "c.txt"), "c\n");
    fs.writeFileSync(path.join(root, "big.txt"), "b".repeat(20_000));
    fs.symlinkSync(path.join(root, "sub", "c.txt"), path.join(root, "z-link"));
    fs.symlinkSync(path.join(outside, "secret.txt"), path.join(root, "y-out"));
    const selection = { excludePatterns: [], respectGitignore: false };
    const walk = async (small: boolean) => {
      const seen: string[] = [];
      const skips: string[] = [];
      await walkFiles(
        root,
        selection,
        async (handle, shown) => {
          seen.push(`${path.relative(root, shown)}:${(await handle.readFile()).length}`);
        },
        (reason, n) => skips.push(`${reason}:${n}`),
        walkOptions([root]),
        small ? async (bytes, shown) => seen.push(`${path.relative(root, shown)}:${bytes.length}`) : undefined,
      );
      return { seen, skips };
    };
    const plain = await walk(false);
    const fast = await walk(true);
    expect(fast).toEqual(plain);
    expect(fast.seen.filter((s) => s === "a.txt:2" || s === "hard.txt:2")).toHaveLength(1);
    expect(fast.seen).toContain("big.txt:20000");
    expect(fast.seen.some((s) => s.startsWith("y-out"))).toBe(false);
    expect(fast.skips).toEqual(["outsideLink:1"]);
  });
});

it("searchBytes shows and counts exactly what searchFile does on the same content", async () => {
  const contents = [
    "one\ntwo needle\nthree\nneedle needle\n",
    "no match here",
    "needle at the end without newline\nneedle",
    "bin\0ary needle",
    `${"x".repeat(300)}\nneedle in a file longer than the chunk\n${"y".repeat(200)}needle\n`,
  ];
  const files = contents.map((text, i) => {
    const f = path.join(root, `f${i}`);
    fs.writeFileSync(f, text);
    return f;
  });
  const run = async (mode: OutputMode, bytes: boolean) => {
    const sink = new TextSink(100_000);
    const search = new ContentSearch({ query: compileQuery({ query: "needle" }), sink, mode, contextLines: 1, chunkSize: 64 });
    for (const f of files) {
      if (bytes) await search.searchBytes(fs.readFileSync(f), escapeControls(f));
      else {
        const fh = await fsp.open(f, "r");
        await search.searchFile(fh, escapeControls(f)).finally(() => fh.close());
      }
    }
    search.finish();
    await search.close();
    return sink.render("narrow");
  };
  for (const mode of ["lines", "files", "count"] as const) {
    const expected = await run(mode, false);
    expect(expected).toMatch(/needle|Found/);
    expect(await run(mode, true)).toBe(expected);
  }
});

it("searchBytes refuses a regex query, which only the worker may run", async () => {
  const search = new ContentSearch({ query: compileQuery({ query: "(a+)+$", regex: true }), sink: new TextSink(1000) });
  try {
    expect(search.scansInThread).toBe(false);
    expect(() => search.searchBytes(Buffer.from("aaa"), escapeControls("x"))).toThrow(/literal query/);
  } finally {
    await search.close();
  }
});
