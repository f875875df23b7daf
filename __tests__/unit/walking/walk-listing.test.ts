import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { TextSink } from "../../../src/kernel/bounded.js";
import { createRuntime } from "../../../src/server/runtime.js";
import { describeEachStrategy, walkOptions } from "../../support/fixtures.js";
import { listInto, listWithSizesInto } from "../../../src/walking/index.js";
import type { WalkOptions } from "../../../src/walking/index.js";
import { bigSink, capWithEntries, lineEnds } from "../../support/walk-reference.js";

const ADVICE = "list a subdirectory, or use search_files with a pattern";

let tmp: string;
let opts: WalkOptions;

beforeEach(() => {
  tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "walk-listing-")));
  opts = walkOptions(createRuntime(), [tmp]);
});

afterEach(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

async function list(dir = tmp): Promise<string> {
  const sink = bigSink();
  await listInto(dir, sink, opts);
  return sink.render(ADVICE);
}

async function sized(sortBy: "name" | "size", dir = tmp): Promise<string> {
  const sink = bigSink();
  await listWithSizesInto(dir, sortBy, sink, opts);
  return sink.render(ADVICE);
}

describe("listInto", () => {
  it("writes [DIR]/[FILE] lines in readdir order", async () => {
    fs.mkdirSync(path.join(tmp, "sub"));
    fs.writeFileSync(path.join(tmp, "a.txt"), "x");
    fs.symlinkSync("sub", path.join(tmp, "link"));
    fs.writeFileSync(path.join(tmp, "odd\nname"), "");
    const order = fs.readdirSync(tmp);
    // A link to a directory inside is one (issue 21).
    const tag: Record<string, string> = { sub: "[DIR]", "a.txt": "[FILE]", link: "[DIR]", "odd\nname": "[FILE]" };
    // A line break in a name is shown escaped, so it cannot fake a line (SPEC §13).
    const shown = (n: string): string => n.replace("\n", "\\n");
    expect(await list()).toBe(order.map((n) => `${tag[n]} ${shown(n)}`).join("\n"));
  });

  it("keeps fs.readdir's order (names by their bytes) for names JavaScript orders otherwise, however the listing is batched", async () => {
    // U+E000 sorts before an astral character by bytes (and code points), after it by UTF-16 units.
    const names = ["a\u{1F600}", "a\uE000", "aZ", "A", "é", "a\uFFFD", ...Array.from({ length: 600 }, (_, i) => `n${(i * 7919) % 600}`)];
    for (const name of names) fs.writeFileSync(path.join(tmp, name), "");
    expect(await list()).toBe(
      fs
        .readdirSync(tmp)
        .map((n) => `[FILE] ${n}`)
        .join("\n"),
    );
  });

  it("writes an empty string for an empty directory", async () => {
    const sink = bigSink();
    await listInto(tmp, sink, opts);
    expect(sink.total).toBe(0);
  });

  it("keeps a byte-identical prefix and the exact total when capped", async () => {
    for (let i = 0; i < 300; i++) fs.writeFileSync(path.join(tmp, `entry-${i}`), "");
    const full = await list();
    for (const max of [1, 100, full.length - 1]) {
      const sink = new TextSink(max);
      await listInto(tmp, sink, opts);
      expect(sink.total).toBe(full.length);
      expect(sink.render(ADVICE)).toBe(capWithEntries(full, max, ADVICE, lineEnds(full)));
    }
  });

  it("fails with the path when the directory cannot be read", async () => {
    const missing = path.join(tmp, "missing");
    await expect(listInto(missing, bigSink(), opts)).rejects.toThrow(missing);
  });
});

describe("listWithSizesInto", () => {
  beforeEach(() => {
    fs.writeFileSync(path.join(tmp, "b.txt"), "x".repeat(10));
    fs.writeFileSync(path.join(tmp, "a-big.bin"), Buffer.alloc(1536));
    fs.mkdirSync(path.join(tmp, "c-dir"));
    fs.symlinkSync("nowhere", path.join(tmp, "d-dangling"));
  });

  it("sorts by name with padded columns and the upstream summary", async () => {
    expect(await sized("name")).toBe(
      [
        "[FILE] a-big.bin                         1.50 KB",
        "[FILE] b.txt                                10 B",
        "[DIR] c-dir                          ",
        "[FILE] d-dangling                            0 B",
        "",
        "Total: 3 files, 1 directories",
        "Combined size: 1.51 KB",
      ].join("\n"),
    );
  });

  it("sorts by size, largest first, counting a directory's own stat size", async () => {
    const dirSize = fs.statSync(path.join(tmp, "c-dir")).size;
    const rows: [number, string][] = [
      [1536, "[FILE] a-big.bin                         1.50 KB"],
      [10, "[FILE] b.txt                                10 B"],
      [dirSize, "[DIR] c-dir                          "],
      [0, "[FILE] d-dangling                            0 B"],
    ];
    // Array#sort is stable, so equal sizes keep the name order the rows start in (which is not readdir order).
    const readdirOrder = fs.readdirSync(tmp);
    rows.sort((x, y) => readdirOrder.indexOf(x[1].split(" ")[1]!) - readdirOrder.indexOf(y[1].split(" ")[1]!));
    rows.sort((x, y) => y[0] - x[0]);
    expect(await sized("size")).toBe([...rows.map((r) => r[1]), "", "Total: 3 files, 1 directories", "Combined size: 1.51 KB"].join("\n"));
  });

  it("writes only the summary for an empty directory", async () => {
    const empty = path.join(tmp, "c-dir");
    expect(await sized("name", empty)).toBe("\nTotal: 0 files, 0 directories\nCombined size: 0 B");
  });

  it("keeps a byte-identical prefix and the exact total when capped", async () => {
    for (let i = 0; i < 300; i++) fs.writeFileSync(path.join(tmp, `entry-${i}`), "y".repeat(i));
    const full = await sized("size");
    for (const max of [1, 500, full.length - 1]) {
      const sink = new TextSink(max);
      await listWithSizesInto(tmp, "size", sink, opts);
      expect(sink.total).toBe(full.length);
      // A cut hides the totals, so its notice states them (issue 28 row 5): the same figures as the full text's last lines.
      const [, files, dirs, bytes] = /Total: (\d+) files, (\d+) directories\nCombined size: (.+)$/.exec(full) ?? [];
      const advice = `${ADVICE}; the totals, counting every entry, are exact: ${Number(files).toLocaleString("en-US")} files, ${Number(dirs).toLocaleString("en-US")} directories, ${bytes}`;
      expect(sink.render(ADVICE)).toBe(capWithEntries(full, max, advice, lineEnds(full, true, full.split("\n").indexOf(""))));
    }
  });

  it("stops when the signal is aborted from onProgress", async () => {
    for (let i = 0; i < 3000; i++) fs.writeFileSync(path.join(tmp, `entry-${i}`), "");
    const controller = new AbortController();
    const seen: number[] = [];
    const sink = bigSink();
    const run = listWithSizesInto(tmp, "name", sink, {
      ...opts,
      signal: controller.signal,
      onProgress: (n) => {
        seen.push(n);
        controller.abort();
      },
    });
    await expect(run).rejects.toMatchObject({ name: "AbortError" });
    expect(seen).toEqual([1000]);
    expect(sink.total).toBe(0);
  });

  it("fails with the path when the directory cannot be read", async () => {
    const missing = path.join(tmp, "missing");
    await expect(listWithSizesInto(missing, "name", bigSink(), opts)).rejects.toThrow(missing);
  });
});

// Regression: the sizes of symlinks were stat'ed through the link wherever it pointed, so a link
// to a file outside the allowed directories revealed that file's size.
describeEachStrategy("listWithSizesInto and symlinks", (_, runtime) => {
  let outsideDir: string;

  beforeEach(() => {
    opts = walkOptions(runtime, [tmp]);
    outsideDir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "walk-listing-outside-")));
    fs.writeFileSync(path.join(outsideDir, "secret.bin"), Buffer.alloc(12_345));
    // Siblings that equal the allowed directory once a trailing space or quote is trimmed.
    for (const suffix of [" ", '"']) {
      fs.mkdirSync(`${tmp}${suffix}`);
      fs.writeFileSync(path.join(`${tmp}${suffix}`, "sibling.bin"), Buffer.alloc(7_777));
    }
    fs.mkdirSync(path.join(tmp, "sub"));
    fs.writeFileSync(path.join(tmp, "sub", "inside.bin"), Buffer.alloc(2_048));
    fs.symlinkSync(path.join(outsideDir, "secret.bin"), path.join(tmp, "out-file"));
    fs.symlinkSync(outsideDir, path.join(tmp, "out-dir"));
    fs.symlinkSync(path.join(`${tmp} `, "sibling.bin"), path.join(tmp, "sibling-space"));
    fs.symlinkSync(path.join(`${tmp}"`, "sibling.bin"), path.join(tmp, "sibling-quote"));
    fs.symlinkSync("sub/inside.bin", path.join(tmp, "in-file"));
    fs.symlinkSync("in-file", path.join(tmp, "in-chain"));
    fs.symlinkSync("nowhere", path.join(tmp, "dangling"));
    fs.symlinkSync("loop", path.join(tmp, "loop"));
  });

  afterEach(() => {
    for (const dir of [outsideDir, `${tmp} `, `${tmp}"`]) fs.rmSync(dir, { recursive: true, force: true });
  });

  it("follows a link to a target inside, and counts one out of the allowed directories (or unresolvable) as 0 B", async () => {
    const text = await sized("size");
    const sizeOf = (name: string): string | undefined => new RegExp(`^\\[FILE\\] ${name} +(.*)$`, "m").exec(text)?.[1]?.trim();
    expect(sizeOf("in-file")).toBe("2.00 KB");
    expect(sizeOf("in-chain")).toBe("2.00 KB");
    for (const name of ["out-file", "out-dir", "sibling-space", "sibling-quote", "dangling", "loop"]) {
      expect(sizeOf(name), name).toBe("0 B");
    }
    expect(text).not.toMatch(/12\.06 KB|7\.60 KB/);
    expect(text).toMatch(/\nTotal: 8 files, 1 directories\nCombined size: 4\.00 KB$/);
  });

  // Issue 21: upstream showed a symlinked directory as [FILE], so a model never looked inside it.
  it("shows a link to a directory inside as [DIR], in both listings, and one leading outside as [FILE]", async () => {
    fs.symlinkSync("sub", path.join(tmp, "in-dir"));
    fs.symlinkSync("in-dir", path.join(tmp, "in-dir-chain"));
    const plain = (await list()).split("\n");
    for (const name of ["sub", "in-dir", "in-dir-chain"]) expect(plain, name).toContain(`[DIR] ${name}`);
    for (const name of ["out-dir", "out-file", "in-file", "dangling", "loop"]) expect(plain, name).toContain(`[FILE] ${name}`);
    expect(plain).toHaveLength(fs.readdirSync(tmp).length);
    const text = await sized("name");
    for (const name of ["in-dir", "in-dir-chain"]) expect(text, name).toMatch(new RegExp(`^\\[DIR\\] ${name} +$`, "m"));
    expect(text).toMatch(/^\[FILE\] out-dir +0 B$/m);
    expect(text).toMatch(/\nTotal: 8 files, 3 directories\nCombined size: 4\.00 KB$/);
  });
});
