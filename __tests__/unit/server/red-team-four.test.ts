/**
 * Findings of the fourth red-team pass (issue 28) that a client sees through the tools, each
 * reproduced through an in-process server under both platform strategies: names that reorder
 * or hide text (row 17), an empty oldText (row 15).
 */
import fs from "node:fs";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeEach, expect, it } from "vitest";
import { TextSink } from "../../../src/kernel/bounded.js";
import { listInto, listWithSizesInto } from "../../../src/walking/index.js";
import { __listingHooks } from "../../../src/walking/listing.js";
import { inProcess } from "../../support/in-process.js";
import { describeEachStrategy, tempDir, walkOptions, currentRuntime } from "../../support/fixtures.js";

let dir: string;
let remove: () => Promise<void>;
let client: Client;
let closeAll: () => Promise<void>;

beforeEach(async () => {
  ({ dir, remove } = await tempDir("red-team-four-"));
  ({ client, close: closeAll } = await inProcess([dir, "--max-result-chars", "100000"], { runtime: currentRuntime() }));
});

afterEach(async () => {
  delete __listingHooks.held;
  await closeAll();
  await remove();
});

async function call(name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

const textOf = (r: CallToolResult): string => (r.content[0]?.type === "text" ? r.content[0].text : "");

// Every character that reorders or hides text in a name, as the red team used them.
const INVISIBLE = [
  "\u202a",
  "\u202b",
  "\u202c",
  "\u202d",
  "\u202e",
  "\u2066",
  "\u2067",
  "\u2068",
  "\u2069",
  "\u200b",
  "\u200c",
  "\u200d",
  "\u2060",
  "\ufeff",
];
const escaped = (ch: string): string => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`;

describeEachStrategy("issue 28 row 17: names are shown escaped once, invisible characters included", () => {
  it("the diff header shows a name with a CR escaped once, not C-quoted on top", async () => {
    const file = path.join(dir, "cr\rFAKE.txt");
    fs.writeFileSync(file, "one\ntwo\n");
    const result = await call("edit_file", { path: file, edits: [{ oldText: "two", newText: "2" }], dryRun: true });
    const text = textOf(result);
    const shown = path.join(dir, "cr\\rFAKE.txt");
    expect(result.isError).toBeFalsy();
    expect(text).toContain(`\nIndex: ${shown}\n`);
    expect(text).toContain(`\n--- ${shown}\toriginal\n+++ ${shown}\tmodified\n`);
    expect(text).not.toContain("\\\\r");
  });

  it("bidi controls and zero-width characters are escaped in listings, searches, diffs, results and errors", async () => {
    const names = INVISIBLE.map((ch, i) => `n${i}${ch}txt.exe`);
    for (const name of names) fs.writeFileSync(path.join(dir, name), "old\n");
    const listed = textOf(await call("list_directory", { path: dir }));
    const sized = textOf(await call("list_directory_with_sizes", { path: dir }));
    const found = textOf(await call("search_files", { path: dir, pattern: "*.exe" }));
    const tree = textOf(await call("directory_tree", { path: dir }));
    for (const [i, name] of names.entries()) {
      const shownName = `n${i}${escaped(INVISIBLE[i] as string)}txt.exe`;
      expect(listed).toContain(`[FILE] ${shownName}`);
      expect(sized).toContain(`[FILE] ${shownName}`);
      expect(found).toContain(path.join(dir, shownName));
      // The tree is JSON: the character is written as a JSON escape, so it reads back as the name.
      expect(tree).toContain(`"${shownName}"`);
      const file = path.join(dir, name);
      const diff = textOf(await call("edit_file", { path: file, edits: [{ oldText: "old", newText: "new" }], dryRun: true }));
      expect(diff).toContain(`--- ${path.join(dir, shownName)}\toriginal`);
      const wrote = textOf(await call("write_file", { path: file, content: "x" }));
      expect(wrote).toContain(path.join(dir, shownName));
      const missing = await call("read_text_file", { path: path.join(dir, `${name}.missing`) });
      expect(missing.isError).toBe(true);
      expect(textOf(missing)).toContain(`${shownName}.missing`);
    }
    for (const text of [listed, sized, found, tree]) {
      for (const ch of INVISIBLE) expect(text).not.toContain(ch);
    }
  });
});

describeEachStrategy("issue 28 row 15: an empty oldText is refused, not applied as a prepend", () => {
  it("refuses it naming edits[i].oldText and leaves the file as it was", async () => {
    const file = path.join(dir, "f.txt");
    fs.writeFileSync(file, "body\n");
    for (const edits of [
      [{ oldText: "", newText: "head\n" }],
      [
        { oldText: "body", newText: "b" },
        { oldText: "", newText: "x", replaceAll: true },
      ],
    ]) {
      const result = await call("edit_file", { path: file, edits });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(new RegExp(`^edits\\[${edits.length - 1}\\]\\.oldText is empty: .*nothing was written`));
      expect(fs.readFileSync(file, "utf8")).toBe("body\n");
    }
  });
});

/** Writes `text` at `offset` of the file `file`. */
function writeAt(file: string, offset: number, text: string): void {
  const fd = fs.openSync(file, "r+");
  try {
    fs.writeSync(fd, text, offset);
  } finally {
    fs.closeSync(fd);
  }
}

/** The `length` bytes at `offset` of `file`, as text. */
function readAt(file: string, offset: number, length: number): string {
  const fd = fs.openSync(file, "r");
  try {
    const buffer = Buffer.alloc(length);
    return buffer.subarray(0, fs.readSync(fd, buffer, 0, length, offset)).toString("latin1");
  } finally {
    fs.closeSync(fd);
  }
}

describeEachStrategy("issue 28 row 11: copy_file keeps holes", () => {
  const GIB = 1024 * 1024 * 1024;
  // Data at the start, in the middle (not on a block boundary) and in the last bytes; holes between.
  const marks: [number, string][] = [
    [0, "head"],
    [GIB / 2 + 1000, "middle"],
    [GIB - 4, "tail"],
  ];

  it("a sparse 1 GiB file's copy uses about the blocks of its data, not of its size, and reads the same", async () => {
    const source = path.join(dir, "sparse.img");
    fs.closeSync(fs.openSync(source, "w"));
    fs.truncateSync(source, GIB);
    for (const [offset, text] of marks) writeAt(source, offset, text);
    // Blocks of 512 bytes, as stat counts them.
    const sourceBlocks = fs.statSync(source).blocks;
    expect(sourceBlocks * 512).toBeLessThan(1024 * 1024);
    const result = await call("copy_file", { source, destination: path.join(dir, "copy.img") });
    expect(result.isError).toBeFalsy();
    const copy = fs.statSync(path.join(dir, "copy.img"));
    expect(copy.size).toBe(GIB);
    expect(copy.blocks * 512).toBeLessThan(1024 * 1024);
    for (const [offset, text] of marks) {
      const from = Math.max(offset - 8, 0);
      expect(readAt(path.join(dir, "copy.img"), from, text.length + 16)).toBe(readAt(source, from, text.length + 16));
      expect(readAt(path.join(dir, "copy.img"), offset, text.length)).toBe(text);
    }
    expect(readAt(path.join(dir, "copy.img"), GIB / 4, 16)).toBe("\0".repeat(16));
  });

  it("a sparse file inside a tree copied with recursive stays sparse too", async () => {
    const size = 64 * 1024 * 1024;
    fs.mkdirSync(path.join(dir, "tree"));
    const source = path.join(dir, "tree", "disk.img");
    fs.closeSync(fs.openSync(source, "w"));
    fs.truncateSync(source, size);
    writeAt(source, size / 2, "data");
    const result = await call("copy_file", { source: path.join(dir, "tree"), destination: path.join(dir, "tree-copy"), recursive: true });
    expect(result.isError).toBeFalsy();
    const copy = fs.statSync(path.join(dir, "tree-copy", "disk.img"));
    expect(copy.size).toBe(size);
    expect(copy.blocks * 512).toBeLessThan(1024 * 1024);
    expect(readAt(path.join(dir, "tree-copy", "disk.img"), size / 2 - 2, 8)).toBe("\0\0data\0\0");
  });

  it("a dense file is still copied byte for byte, zeros included", async () => {
    const source = path.join(dir, "dense.bin");
    const bytes = Buffer.alloc(3 * 4096 + 100);
    bytes.write("start", 0);
    bytes.write("end", bytes.length - 3);
    fs.writeFileSync(source, bytes);
    expect((await call("copy_file", { source, destination: path.join(dir, "dense-copy.bin") })).isError).toBeFalsy();
    expect(fs.readFileSync(path.join(dir, "dense-copy.bin")).equals(bytes)).toBe(true);
  });
});

describeEachStrategy("issue 28 row 5: a huge listing holds a bounded number of entries and lets other work in between batches", (_, runtime) => {
  const ENTRIES = 12_000;
  // A cap of 2,000 characters shows at most 2,000 / 8 + 1 lines ("[DIR] x" and its line break is the shortest);
  // the listing holds at most twice that, plus one batch of 256 being sorted in.
  const MAX = 2_000;
  const BOUND = 2 * (Math.floor(MAX / 8) + 1) + 256;

  beforeEach(() => {
    fs.mkdirSync(path.join(dir, "huge"));
    for (let i = 0; i < ENTRIES; i++) fs.writeFileSync(path.join(dir, "huge", `entry-${String(i).padStart(6, "0")}`), "");
  });

  for (const [tool, list] of [
    ["list_directory", (sink: TextSink) => listInto(path.join(dir, "huge"), sink, walkOptions(runtime, [dir]))],
    ["list_directory_with_sizes", (sink: TextSink) => listWithSizesInto(path.join(dir, "huge"), "name", sink, walkOptions(runtime, [dir]))],
  ] as const) {
    it(`${tool}: entries held stay under the bound, a turn of the event loop passes between batches, the total stays exact`, async () => {
      const held: number[] = [];
      const events: string[] = [];
      __listingHooks.held = (n) => {
        held.push(n);
        events.push(`batch ${held.length}`);
        // Queued now: it runs before the next batch only if the listing gives the event loop a turn in between.
        if (held.length === 1) setImmediate(() => events.push("other work"));
      };
      const sink = new TextSink(MAX);
      await list(sink);
      expect(held.length).toBeGreaterThanOrEqual(ENTRIES / 256);
      expect(Math.max(...held)).toBeLessThanOrEqual(BOUND);
      expect(events.slice(0, 3)).toEqual(["batch 1", "other work", "batch 2"]);
      const full = new TextSink(10_000_000);
      await list(full);
      expect(sink.total).toBe(full.total);
      const text = sink.render("narrow it");
      expect(text.slice(0, text.lastIndexOf("\n["))).toBe(full.render("narrow it").slice(0, text.lastIndexOf("\n[")));
      expect(text).toMatch(/; [\d,]+ of 12,000 entries shown\. To see the rest, narrow it[.;]/);
      // The totals come last, so a cut hides them: the sized listing's notice states them, exact.
      if (tool === "list_directory_with_sizes")
        expect(text).toMatch(/; the totals, counting every entry, are exact: 12,000 files, 0 directories, 0 B\.\]$/);
      expect(full.render("x")).toContain(tool === "list_directory" ? "[FILE] entry-011999" : "Total: 12000 files, 0 directories");
      if (tool === "list_directory") {
        // What upstream writes: fs.readdir's order, whole; the held top-N shows its prefix.
        const upstream = fs
          .readdirSync(path.join(dir, "huge"))
          .map((n) => `[FILE] ${n}`)
          .join("\n");
        expect(full.render("x")).toBe(upstream);
        expect(upstream.startsWith(text.slice(0, text.lastIndexOf("\n[")))).toBe(true);
      }
    });
  }
});

describeEachStrategy("issue 28 row 10: a first answer does not wait for the exact total of an arbitrarily large file", () => {
  const TIB = 1024 ** 4;
  // Counting stops 64 MiB in (COUNT_BUDGET_BYTES), 64 MiB further on each later read: a lower bound, said as such.
  const NOT_COUNTED =
    / of at least [\d,]+ \(the total is not counted yet: only the first [\d,]+ MiB of the file are counted so far; get_file_info gives its size\)/;
  const MIB = 1024 * 1024;
  /** The characters and MiB a notice says are counted so far. */
  const countedOf = (text: string): { chars: number; mib: number } => ({
    chars: Number(/of at least ([\d,]+)/.exec(text)?.[1]?.replaceAll(",", "")),
    mib: Number(/the first ([\d,]+) MiB of the file are counted so far/.exec(text)?.[1]?.replaceAll(",", "")),
  });
  const HEAD = "line1\nline2\nline3\n";
  let file: string;

  beforeEach(() => {
    // 1 TiB, sparse: three short lines, then zero bytes (valid UTF-8 NULs, no line break) to the end.
    file = path.join(dir, "huge.img");
    fs.writeFileSync(file, HEAD);
    fs.truncateSync(file, TIB);
  });

  it("the first window (and one at an offset) comes back with a notice saying the total is not known yet", async () => {
    const first = textOf(await call("read_text_file", { path: file }));
    expect(first.startsWith(`${HEAD}\0\0\0`)).toBe(true);
    const notice = first.slice(first.lastIndexOf("\n") + 1);
    expect(notice).toMatch(/^\[Result truncated: showing characters 1-100,000 of at least /);
    expect(notice).toMatch(NOT_COUNTED);
    expect(notice).toMatch(/\. Call again with offset=100000 to continue\.\]$/);
    const counted = Number(/of at least ([\d,]+)/.exec(notice)?.[1]?.replaceAll(",", ""));
    expect(counted).toBeGreaterThanOrEqual(64 * 1024 * 1024);
    expect(counted).toBeLessThan(TIB);
    expect(countedOf(notice).mib).toBe(64);
    // The new notice is one of the server's own: writing a capped read back is refused, as for the others.
    const writeBack = await call("write_file", { path: path.join(dir, "back.txt"), content: `line1\n${notice}` });
    expect(writeBack.isError).toBe(true);
    expect(fs.existsSync(path.join(dir, "back.txt"))).toBe(false);
    const atOffset = textOf(await call("read_text_file", { path: file, offset: 6, limit: 6 }));
    expect(atOffset).toMatch(/^line2\n\n\[Result truncated: showing characters 7-12 of at least /);
    expect(atOffset).toMatch(/Call again with offset=12 to continue\.\]$/);
  });

  it("each later read counts on from where the last one stopped, also past a far window, until the total is exact", async () => {
    // A far window first: read (and counted) up to it.
    const far = countedOf(textOf(await call("read_text_file", { path: file, offset: 300 * MIB, limit: 10 })));
    expect(far.mib).toBeGreaterThanOrEqual(300);
    expect(far.chars).toBeGreaterThanOrEqual(300 * MIB);
    // A window at the start then counts on from there (it started again from 0 before: 64 MiB).
    const next = countedOf(textOf(await call("read_text_file", { path: file, limit: 10 })));
    expect(next.chars).toBeGreaterThan(far.chars + 60 * MIB);
    expect(next.mib).toBeGreaterThanOrEqual(far.mib + 60);
    // A file past the budget but not far past it: exact on the third read, and from then on.
    const small = path.join(dir, "160mib.img");
    fs.writeFileSync(small, HEAD);
    fs.truncateSync(small, 160 * MIB);
    const first = textOf(await call("read_text_file", { path: small, limit: 10 }));
    expect(first).toMatch(NOT_COUNTED);
    const second = textOf(await call("read_text_file", { path: small, limit: 10 }));
    expect(countedOf(second).chars).toBeGreaterThan(countedOf(first).chars);
    expect(countedOf(second).chars).toBeLessThan(160 * MIB);
    for (let read = 3; read <= 4; read++) {
      expect(textOf(await call("read_text_file", { path: small, limit: 10 }))).toMatch(
        /showing characters 1-10 of 167,772,160\. Call again with offset=10/,
      );
    }
  });

  it("a line window: whole lines come back whole; a window from a line says the total is not known yet", async () => {
    expect(textOf(await call("read_text_file", { path: file, startLine: 2, lineCount: 1 }))).toBe("line2\n");
    const fromLine = textOf(await call("read_text_file", { path: file, startLine: 3 }));
    expect(fromLine.startsWith("line3\n\0")).toBe(true);
    expect(fromLine).toMatch(NOT_COUNTED);
    expect(fromLine).toMatch(/Call again with offset=100012 to continue\.\]$/);
  });

  it("head past the lines there are says the total is not known yet; tail refuses at once, naming tail and the bound", async () => {
    const head = textOf(await call("read_text_file", { path: file, head: 5 }));
    expect(head.startsWith(`${HEAD}\0`)).toBe(true);
    expect(head).toMatch(/\n\[Result truncated: showing characters 1-100,000 of at least /);
    expect(head).toMatch(NOT_COUNTED);
    for (const tail of [1, 2, 10]) {
      const result = await call("read_text_file", { path: file, tail });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(
        new RegExp(`^tail=${tail}: the last ${tail} lines of this file are longer than the 64 MiB read back from its end`),
      );
    }
  });

  it("a file within the counting budget still gets its exact total", async () => {
    const small = path.join(dir, "small.txt");
    fs.writeFileSync(small, "x".repeat(250_000));
    expect(textOf(await call("read_text_file", { path: small }))).toMatch(
      /\n\[Result truncated: showing characters 1-100,000 of 250,000\. Call again/,
    );
  });
});
