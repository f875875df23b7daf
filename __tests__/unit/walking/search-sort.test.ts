/**
 * search_files' `type`, `sortBy` and `limit` (SPEC §22) against a naive model: GNU find's own sizes, times and
 * kinds on generated trees, under both platform strategies; the cut result against the uncut one.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { afterEach, beforeEach, expect, it, vi } from "vitest";
import { TextSink } from "../../../src/kernel/bounded.js";
import { searchInto, type SearchOptions } from "../../../src/walking/glob-search.js";
import { type Ranked, TopN } from "../../../src/walking/top-n.js";
import { describeEachStrategy, tempDir, walkOptions, currentRuntime } from "../../support/fixtures.js";
import { bigSink } from "../../support/walk-reference.js";

const ADVICE = "narrow it";

let root: string;
let remove: () => Promise<void>;
beforeEach(async () => {
  const made = await tempDir("bfs-sort-");
  root = path.join(made.dir, "root");
  fs.mkdirSync(root);
  remove = made.remove;
});
afterEach(() => remove());

async function search(options: SearchOptions, pattern = "**/*", sink: TextSink = bigSink()): Promise<string> {
  await searchInto(root, pattern, [], sink, walkOptions(currentRuntime(), [root]), options);
  return sink.render(ADVICE);
}

interface Found {
  path: string;
  type: string;
  size: number;
  mtime: number;
}

/** What GNU find says of every entry below the root: path, kind, size and modification time in whole seconds. */
function findEntries(): Found[] {
  const out = execFileSync("find", [root, "-mindepth", "1", "-printf", "%p\\0%y\\0%s\\0%T@\\0"], { encoding: "utf8" });
  const fields = out.split("\0");
  const found: Found[] = [];
  for (let i = 0; i + 3 < fields.length; i += 4) {
    found.push({ path: fields[i]!, type: fields[i + 1]!, size: Number(fields[i + 2]), mtime: Math.floor(Number(fields[i + 3])) });
  }
  return found;
}

const byPath = (a: Found, b: Found): number => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);

/** A random tree: nested directories, files of random sizes and whole-second times (so find and Node agree). */
const treeShape = fc.array(
  fc.record({
    dir: fc.constantFrom("", "a", "a/b", "c", "c/d/e"),
    name: fc.stringMatching(/^[a-z]{1,6}$/),
    size: fc.nat({ max: 5000 }),
    time: fc.integer({ min: 1_000_000_000, max: 1_900_000_000 }),
  }),
  { minLength: 1, maxLength: 40 },
);

function layOut(files: { dir: string; name: string; size: number; time: number }[]): void {
  for (const f of files) {
    const dir = path.join(root, f.dir);
    fs.mkdirSync(dir, { recursive: true });
    const p = path.join(dir, `${f.name}.f`);
    fs.writeFileSync(p, Buffer.alloc(f.size, 120));
    fs.utimesSync(p, f.time, f.time);
  }
}

function clear(): void {
  for (const name of fs.readdirSync(root)) fs.rmSync(path.join(root, name), { recursive: true, force: true });
}

describeEachStrategy("search_files sortBy, type and limit against find", () => {
  it("sortBy size: every file with its exact bytes, largest first, ties by path, as find -printf '%s' orders them", async () => {
    await fc.assert(
      fc.asyncProperty(treeShape, fc.integer({ min: 1, max: 50 }), async (files, limit) => {
        clear();
        layOut(files);
        const expected = findEntries()
          .filter((e) => e.type === "f")
          .sort((a, b) => b.size - a.size || byPath(a, b));
        const whole = await search({ type: "file", sortBy: "size" });
        expect(whole).toBe(expected.map((e) => `${e.path}\t${e.size}`).join("\n"));
        const top = await search({ type: "file", sortBy: "size", limit });
        const shown = expected.slice(0, limit).map((e) => `${e.path}\t${e.size}`);
        const note = limit < expected.length ? `\n(${limit} of ${expected.length} matches shown: limit=${limit})` : "";
        expect(top).toBe(shown.join("\n") + note);
      }),
      { numRuns: 25 },
    );
  });

  it("sortBy modified: newest first with the ISO time of find's %T@", async () => {
    await fc.assert(
      fc.asyncProperty(treeShape, async (files) => {
        clear();
        layOut(files);
        const expected = findEntries()
          .filter((e) => e.type === "f")
          .sort((a, b) => b.mtime - a.mtime || byPath(a, b));
        expect(await search({ type: "file", sortBy: "modified" })).toBe(
          expected.map((e) => `${e.path}\t${new Date(e.mtime * 1000).toISOString()}`).join("\n"),
        );
      }),
      { numRuns: 20 },
    );
  });

  it("type: the counts and paths of find -type f and -type d; sortBy name orders by path", async () => {
    await fc.assert(
      fc.asyncProperty(treeShape, async (files) => {
        clear();
        layOut(files);
        const all = findEntries();
        for (const [type, letter] of [
          ["file", "f"],
          ["directory", "d"],
        ] as const) {
          const want = all.filter((e) => e.type === letter).sort(byPath);
          const count = await search({ type, countOnly: true });
          expect(count).toBe(`${want.length} ${want.length === 1 ? "match" : "matches"}`);
          const listed = await search({ type, sortBy: "name" });
          expect(listed).toBe(want.length === 0 ? "No matches found" : want.map((e) => e.path).join("\n"));
        }
        const both = (await search({})).split("\n").sort();
        expect(both).toEqual(all.map((e) => e.path).sort());
      }),
      { numRuns: 20 },
    );
  });

  it("a sorted result cut by the cap is the uncut one's prefix, its notice counting every entry", async () => {
    const files = Array.from({ length: 300 }, (_, i) => ({
      dir: i % 2 ? "a" : "c/d/e",
      name: `n${i}`,
      size: (i * 37) % 1000,
      time: 1_500_000_000 + i,
    }));
    layOut(files);
    const whole = await search({ sortBy: "size", type: "file" });
    const capped = await search({ sortBy: "size", type: "file" }, "**/*", new TextSink(1000));
    const [text, notice] = [capped.slice(0, capped.lastIndexOf("\n")), capped.slice(capped.lastIndexOf("\n") + 1)];
    expect(whole.startsWith(text)).toBe(true);
    expect(text.length).toBe(1000);
    const shownWhole = text.split("\n").length - 1;
    expect(notice).toBe(
      `[Result truncated: showing characters 1-1,000 of ${whole.length.toLocaleString("en-US")}; ${shownWhole} of 300 entries shown. To see the rest, ${ADVICE}.]`,
    );
  });

  it("a match whose name is not valid UTF-8 has no size to sort by: it is named as skipped, not left out unsaid", async (ctx) => {
    fs.writeFileSync(path.join(root, "ok.txt"), "12345");
    try {
      fs.writeFileSync(Buffer.concat([Buffer.from(`${root}/caf`), Buffer.from([0xe9]), Buffer.from(".txt")]), "x");
    } catch (error) {
      ctx.skip(`this file system refuses a name that is not valid UTF-8 (${(error as Error).message})`);
    }
    expect(await search({ sortBy: "size" })).toBe(`${root}/ok.txt\t5\n\n[Skipped 1 unreadable entry: ${root}/caf\uFFFD.txt (EILSEQ)]`);
    // Without figures to read it is listed, as search_files lists any name.
    expect(await search({})).toBe(`${root}/caf\uFFFD.txt\n${root}/ok.txt`);
  });

  it("links: one to a file inside shows its target's size, one leading outside is never listed", async () => {
    const outside = path.join(path.dirname(root), "outside");
    fs.mkdirSync(outside);
    fs.writeFileSync(path.join(outside, "big"), Buffer.alloc(9000));
    fs.writeFileSync(path.join(root, "real"), Buffer.alloc(700));
    fs.symlinkSync("real", path.join(root, "in"));
    fs.symlinkSync(path.join(outside, "big"), path.join(root, "out"));
    fs.symlinkSync("nowhere", path.join(root, "dangling"));
    fs.mkdirSync(path.join(root, "sub"));
    fs.symlinkSync("sub", path.join(root, "dirlink"));
    expect(await search({ sortBy: "size", type: "file" })).toBe(`${root}/in\t700\n${root}/real\t700`);
    expect(await search({ type: "directory", sortBy: "name" })).toBe(`${root}/dirlink\n${root}/sub`);
    expect(await search({ sortBy: "name" })).toBe(["dangling", "dirlink", "in", "real", "sub"].map((n) => `${root}/${n}`).join("\n"));
    expect(await search({ countOnly: true, type: "file" })).toBe("2 matches");
  });
});

it("walk order with a limit shows the first N found and counts the rest", async () => {
  for (let i = 0; i < 12; i++) fs.writeFileSync(path.join(root, `f${i}`), "");
  const all = (await search({})).split("\n");
  expect(all).toHaveLength(12);
  expect(await search({ limit: 5 })).toBe(`${all.slice(0, 5).join("\n")}\n(5 of 12 matches shown: limit=5)`);
});

it("a sorted search keeps at most `limit` matches at any time, and without a limit only what the cap can show", async () => {
  for (let i = 0; i < 400; i++) fs.writeFileSync(path.join(root, `file-${String(i).padStart(3, "0")}`), Buffer.alloc(i));
  const sizes: number[] = [];
  const push = TopN.prototype.push;
  const spy = vi.spyOn(TopN.prototype, "push").mockImplementation(function (this: TopN<Ranked>, item: Ranked) {
    push.call(this, item);
    sizes.push(this.size);
  });
  try {
    const top = await search({ sortBy: "size", type: "file", limit: 3 });
    expect(top.split("\n").slice(0, 3)).toEqual([399, 398, 397].map((n) => `${root}/file-${n}\t${n}`));
    // One over the limit at most, for the moment between a push and the pop that follows it.
    expect(Math.max(...sizes)).toBe(4);
    sizes.length = 0;
    const capped = await search({ sortBy: "size", type: "file" }, "**/*", new TextSink(1000));
    expect(capped).toContain(`${root}/file-399\t399`);
    const lineChars = `${root}/file-399\t399\n`.length;
    expect(Math.max(...sizes)).toBeLessThanOrEqual(Math.ceil(1001 / (lineChars - 2)) + 2);
    expect(sizes).toHaveLength(400);
  } finally {
    spy.mockRestore();
  }
});
