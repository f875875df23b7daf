import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { capText, TextSink } from "../src/bounded.js";
import { searchInto, treeInto } from "../src/walk.js";
import type { WalkOptions } from "../src/walk.js";
import { SkipLog } from "../src/walk-core.js";
import { bigSink, buildTreeInMemory, searchReference, searchText } from "./walk-reference.js";

const ADVICE = "pass a deeper path, or add excludePatterns";

type Spec = { [name: string]: string | Spec | { link: string } };

function materialize(dir: string, spec: Spec): void {
  for (const [name, value] of Object.entries(spec)) {
    const p = path.join(dir, name);
    if (typeof value === "string") fs.writeFileSync(p, value);
    else if ("link" in value && typeof value.link === "string") fs.symlinkSync(value.link, p);
    else {
      fs.mkdirSync(p);
      materialize(p, value as Spec);
    }
  }
}

let tmp: string;
let root: string;
let outside: string;
let opts: WalkOptions;

beforeEach(() => {
  tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "walk-test-")));
  root = path.join(tmp, "root");
  outside = path.join(tmp, "outside");
  fs.mkdirSync(root);
  fs.mkdirSync(outside);
  fs.writeFileSync(path.join(outside, "secret.txt"), "s");
  opts = { allowedDirs: [root] };
});

afterEach(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

async function tree(excludes: string[] = [], o: WalkOptions = opts): Promise<string> {
  const sink = bigSink();
  await treeInto(root, excludes, sink, o);
  return sink.render(ADVICE);
}

async function search(pattern: string, excludes: string[] = [], o: WalkOptions = opts): Promise<string> {
  const sink = bigSink();
  await searchInto(root, pattern, excludes, sink, o);
  return sink.render(ADVICE);
}

/** A mixed tree of ~400 entries: nested dirs, dotfiles, odd names, empty dirs, symlinks. */
function mixedTree(): void {
  const spec: Spec = {
    ".git": { HEAD: "ref", objects: { ab: { cdef: "x" } } },
    node_modules: { pkg: { "index.js": "", "package.json": "{}" } },
    src: { "a.ts": "", "b.log": "", 'quote"and\\back': "", "ünï😀": "", "new\nline": "", empty: {} },
    "link-in": { link: "src" },
    "link-out": { link: outside },
    dangling: { link: "nowhere" },
  };
  for (let i = 0; i < 20; i++) {
    const sub: Spec = {};
    for (let j = 0; j < 15; j++) sub[j % 3 === 0 ? `f${j}.log` : `f${j}.ts`] = "";
    sub[`d${i}`] = { "deep.ts": "", ".hidden": "" };
    spec[`dir${i}`] = sub;
  }
  materialize(root, spec);
}

describe("treeInto", () => {
  it("renders an empty root as []", async () => {
    expect(await tree()).toBe("[]");
  });

  it("renders files and empty directories exactly as JSON.stringify(tree, null, 2)", async () => {
    materialize(root, { x: { "y.txt": "" }, e: {} });
    const text = await tree(["e"]);
    expect(text).toBe(
      '[\n  {\n    "name": "x",\n    "type": "directory",\n    "children": [\n' +
        '      {\n        "name": "y.txt",\n        "type": "file"\n      }\n    ]\n  }\n]',
    );
    fs.rmSync(path.join(root, "x"), { recursive: true });
    expect(await tree()).toBe('[\n  {\n    "name": "e",\n    "type": "directory",\n    "children": []\n  }\n]');
  });

  it("equals the in-memory reference on a real mixed tree, with and without excludePatterns", async () => {
    mixedTree();
    for (const excludes of [[], ["node_modules", ".git"], ["*.log", "**/d1*"], ["src/empty", "**/.hidden"]]) {
      const expected = JSON.stringify(await buildTreeInMemory(root, excludes), null, 2);
      expect(await tree(excludes)).toBe(expected);
    }
  });

  it("lists a symlink to a directory as a file and never follows it", async () => {
    materialize(root, { real: { inner: "" }, alias: { link: "real" }, loop: { link: "loop" } });
    const parsed = JSON.parse(await tree()) as { name: string; type: string; children?: unknown[] }[];
    const byName = Object.fromEntries(parsed.map((e) => [e.name, e]));
    expect(byName.alias).toEqual({ name: "alias", type: "file" });
    expect(byName.loop).toEqual({ name: "loop", type: "file" });
    expect(byName.real?.children).toHaveLength(1);
  });

  it("keeps a byte-identical prefix and the exact total when capped", async () => {
    mixedTree();
    const full = await tree();
    for (const max of [1, 2, 7, 100, 4_999, full.length - 1, full.length]) {
      const sink = new TextSink(max);
      await treeInto(root, [], sink, opts);
      expect(sink.total).toBe(full.length);
      expect(sink.render(ADVICE)).toBe(capText(full, max, ADVICE));
    }
  });

  it("fails with the path when the root cannot be read", async () => {
    const missing = path.join(root, "missing");
    await expect(treeInto(missing, [], bigSink(), opts)).rejects.toThrow(missing);
  });
});

describe("searchInto", () => {
  it("equals upstream's algorithm on a real mixed tree", async () => {
    mixedTree();
    const cases: [string, string[]][] = [
      ["**/*.ts", []],
      ["**/*", ["node_modules/**", ".git"]],
      ["*", []],
      ["**/.*", ["**/objects/**"]],
      ["**/link-*", []],
      ["**/d1*/**", ["**/*.log"]],
    ];
    for (const [pattern, excludes] of cases) {
      const expected = searchText(await searchReference(root, pattern, excludes, opts.allowedDirs));
      expect(await search(pattern, excludes)).toBe(expected);
    }
  });

  it("returns No matches found when nothing matches", async () => {
    mixedTree();
    expect(await search("**/*.nothing")).toBe("No matches found");
  });

  it("skips symlinks that escape or loop, lists inside and dangling ones, never descends them", async () => {
    materialize(root, {
      real: { "hit.txt": "" },
      "in.txt": { link: "real/hit.txt" },
      "dir-in.txt": { link: "real" },
      "out.txt": { link: path.join(outside, "secret.txt") },
      "dangling.txt": { link: "nowhere" },
      "loop.txt": { link: "loop.txt" },
    });
    const lines = (await search("**/*.txt")).split("\n").sort();
    expect(lines).toEqual(
      ["real/hit.txt", "in.txt", "dir-in.txt", "dangling.txt"].map((p) => path.join(root, p)).sort(),
    );
  });

  it("keeps a byte-identical prefix and the exact total when capped", async () => {
    mixedTree();
    const full = await search("**/*");
    for (const max of [1, 50, 999, full.length - 1]) {
      const sink = new TextSink(max);
      await searchInto(root, "**/*", [], sink, opts);
      expect(sink.total).toBe(full.length);
      expect(sink.render(ADVICE)).toBe(capText(full, max, ADVICE));
    }
  });

  it("fails with the path when the root cannot be read", async () => {
    const file = path.join(root, "file.txt");
    fs.writeFileSync(file, "");
    await expect(searchInto(file, "*", [], bigSink(), opts)).rejects.toThrow(file);
  });
});

describe("unreadable entries inside a walk", () => {
  it.skipIf(process.getuid?.() === 0)("treats an unreadable subdirectory as empty and names it in a note", async () => {
    materialize(root, { locked: { inner: "" } });
    const locked = path.join(root, "locked");
    fs.chmodSync(locked, 0o000);
    try {
      expect(await tree()).toBe(
        '[\n  {\n    "name": "locked",\n    "type": "directory",\n    "children": []\n  }\n]' +
          `\n\n[Skipped 1 unreadable entry: ${locked} (EACCES)]`,
      );
      expect(await search("**/*")).toBe(`${locked}\n\n[Skipped 1 unreadable entry: ${locked} (EACCES)]`);
    } finally {
      fs.chmodSync(locked, 0o755);
    }
  });

  it("survives directories that vanish mid-walk and reports them", async () => {
    // Each d<i> holds one subdirectory s; once the walk is under way every s is
    // removed, so listings read earlier still name s but reading s fails.
    for (let i = 0; i < 1500; i++) fs.mkdirSync(path.join(root, `d${i}`, "s"), { recursive: true });
    const removeAll = (): void => {
      for (let i = 0; i < 1500; i++) fs.rmSync(path.join(root, `d${i}`, "s"), { recursive: true, force: true });
    };
    const runs = [(o: WalkOptions) => tree([], o), (o: WalkOptions) => search("**/s", [], o)];
    for (const [index, run] of runs.entries()) {
      let removed = false;
      const onProgress = (): void => {
        if (!removed) removeAll();
        removed = true;
      };
      const text = await run({ ...opts, onProgress });
      const note = /\n\n\[Skipped ([\d,]+) unreadable entr(?:y|ies): (.*)\]$/.exec(text);
      expect(note).not.toBeNull();
      expect(note?.[2]).toMatch(/\/d\d+\/s \(ENOENT\)/);
      if (index === 0) expect(() => JSON.parse(text.slice(0, note?.index))).not.toThrow();
      for (let i = 0; i < 1500; i++) fs.mkdirSync(path.join(root, `d${i}`, "s"), { recursive: true });
    }
  });

  it("words the note for one entry and for more than ten", () => {
    const one = new SkipLog();
    one.add("/r/a", Object.assign(new Error("x"), { code: "EACCES" }));
    const sink1 = bigSink();
    one.appendNote(sink1);
    expect(sink1.render(ADVICE)).toBe("\n\n[Skipped 1 unreadable entry: /r/a (EACCES)]");

    const many = new SkipLog();
    for (let i = 0; i < 1234; i++) many.add(`/r/d${i}`, Object.assign(new Error("x"), { code: "ENOENT" }));
    const sink2 = bigSink();
    many.appendNote(sink2);
    const shown = Array.from({ length: 10 }, (_, i) => `/r/d${i} (ENOENT)`).join(", ");
    expect(sink2.render(ADVICE)).toBe(`\n\n[Skipped 1,234 unreadable entries: ${shown}, and 1,224 more]`);

    const none = bigSink();
    new SkipLog().appendNote(none);
    expect(none.total).toBe(0);
  });
});

describe("cancellation and progress", () => {
  // Both shapes hold 5,000 entries with names of equal length, so output length is proportional to entries visited.
  const shapes = {
    nested(): void {
      for (let i = 0; i < 50; i++) {
        const d = path.join(root, `dir${String(i).padStart(4, "0")}`);
        fs.mkdirSync(d);
        for (let j = 0; j < 99; j++) fs.writeFileSync(path.join(d, `file${String(j).padStart(4, "0")}`), "");
      }
    },
    flat(): void {
      for (let j = 0; j < 5000; j++) fs.writeFileSync(path.join(root, `file${String(j).padStart(4, "0")}`), "");
    },
  };
  const TOTAL = 5000;

  it.each(Object.keys(shapes) as (keyof typeof shapes)[])(
    "reports increasing progress, one call per thousand entries (%s)",
    async (shape) => {
      shapes[shape]();
      const runs = [(o: WalkOptions) => tree([], o), (o: WalkOptions) => search("**/*", [], o)];
      for (const run of runs) {
        const seen: number[] = [];
        await run({ ...opts, onProgress: (n) => seen.push(n) });
        expect(seen).toEqual([1000, 2000, 3000, 4000, 5000]);
      }
    },
  );

  it.each(Object.keys(shapes) as (keyof typeof shapes)[])(
    "stops within a few hundred entries when the signal is aborted from onProgress (%s)",
    async (shape) => {
      shapes[shape]();
      const fullTree = await tree();
      const fullSearch = await search("**/*");
      for (const [walk, fullLength] of [
        [(s: TextSink, o: WalkOptions) => treeInto(root, [], s, o), fullTree.length],
        [(s: TextSink, o: WalkOptions) => searchInto(root, "**/*", [], s, o), fullSearch.length],
      ] as const) {
        const controller = new AbortController();
        const reason = new Error("cancelled by test");
        const seen: number[] = [];
        const sink = bigSink();
        const run = walk(sink, {
          ...opts,
          signal: controller.signal,
          onProgress: (n) => {
            seen.push(n);
            controller.abort(reason);
          },
        });
        await expect(run).rejects.toBe(reason);
        expect(seen).toEqual([1000]);
        // Aborted at entry 1,000 and checked at least every 256 entries: well under 1,400 of 5,000 written.
        expect(sink.total).toBeLessThan((fullLength * 1400) / TOTAL);
      }
    },
  );

  it("rejects at once with an AbortError when the signal is already aborted", async () => {
    shapes.nested();
    const controller = new AbortController();
    controller.abort();
    const sink = bigSink();
    await expect(treeInto(root, [], sink, { ...opts, signal: controller.signal })).rejects.toMatchObject({
      name: "AbortError",
    });
    expect(sink.total).toBeLessThanOrEqual(1);
  });
});
