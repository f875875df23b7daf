/**
 * The bounding layer seen by a client: every tool pushed past a small cap,
 * compared with the same call on an effectively uncapped server.
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formatCount } from "../../../src/kernel/bounded.js";
import { call, inProcess, textOf, type InProcess } from "../../support/in-process.js";
import { tempDir } from "../../support/fixtures.js";
import { lineEnds } from "../../support/walk-reference.js";

const CAP = 1000;
const NOTICE = /\n(\[Result truncated: showing characters ([\d,]+)-([\d,]+) of ([\d,]+)[^\n]*\])$/;

let root: string;
let small: InProcess;
let big: InProcess;
let remove: () => Promise<void>;
const p = (...parts: string[]) => path.join(root, ...parts);

beforeAll(async () => {
  ({ dir: root, remove } = await tempDir("bfs-bound-"));
  await writeFile(p("long.txt"), Array.from({ length: 600 }, (_, i) => `line ${i} \u{1F600} é\r\n`).join(""));
  await mkdir(p("many"));
  for (let i = 0; i < 200; i++) await writeFile(p("many", `file-${String(i).padStart(3, "0")}.txt`), "x".repeat(i));
  for (let i = 0; i < 5; i++) await writeFile(p(`part${i}.txt`), String(i).repeat(900));
  small = await inProcess(["--max-result-chars", String(CAP), root]);
  big = await inProcess(["--max-result-chars", "10000000", root]);
});

afterAll(async () => {
  await small?.close();
  await big?.close();
  await remove();
});

/** Splits a capped text into kept part and notice, checking the kept part is within the cap. */
function split(text: string): { kept: string; notice?: string; total?: number } {
  const match = NOTICE.exec(text);
  if (!match) {
    expect(text.length).toBeLessThanOrEqual(CAP);
    return { kept: text };
  }
  const kept = text.slice(0, match.index);
  expect(kept.length).toBeLessThanOrEqual(CAP);
  return { kept, notice: match[1], total: Number(match[4]?.replace(/,/g, "")) };
}

// Where each entry of a listing, tree or search ends in its uncapped text (SPEC §16: the notice counts those shown whole).
const listEnds = (full: string): number[] => lineEnds(full);
const sizedEnds = (full: string): number[] => lineEnds(full, true, full.split("\n").indexOf(""));
const treeEnds = (full: string): number[] =>
  [...full.matchAll(/"children": \[|"file"\n *\}|"depthLimited": true\n *\}/g)].map((m) => m.index + m[0].length);

async function compare(
  name: string,
  args: Record<string, unknown>,
  advice: string,
  entryEnds?: (full: string) => number[],
  said?: (full: string) => string,
): Promise<string> {
  const full = textOf(await call(big.client, name, args));
  const capped = textOf(await call(small.client, name, args));
  const { kept, notice, total } = split(capped);
  expect(full.length).toBeGreaterThan(CAP);
  expect(full.startsWith(kept)).toBe(true);
  expect(kept.length).toBeGreaterThanOrEqual(CAP - 1);
  expect(total).toBe(full.length);
  const ends = entryEnds?.(full);
  const entries =
    ends === undefined ? "" : `; ${formatCount(ends.filter((e) => e <= kept.length).length)} of ${formatCount(ends.length)} entries shown`;
  expect(notice).toBe(
    `[Result truncated: showing characters 1-${formatCount(kept.length)} of ${formatCount(full.length)}${entries}. To see the rest, ${advice}${said?.(full) ?? ""}.]`,
  );
  return full;
}

describe("paged reads through the client", () => {
  it("following the notices reassembles the file exactly", async () => {
    const expected = await readFile(p("long.txt"), "utf8");
    let offset = 0;
    let text = "";
    for (let calls = 0; calls < 1000; calls++) {
      const result = textOf(await call(small.client, "read_text_file", { path: p("long.txt"), offset }));
      const { kept, notice, total } = split(result);
      text += kept;
      if (!notice) break;
      expect(total).toBe(expected.length);
      const next = /offset=(\d+) to continue\.\]$/.exec(notice);
      expect(next).not.toBeNull();
      offset = Number(next?.[1]);
      expect(offset).toBe(text.length);
    }
    expect(text).toBe(expected);
  });

  it("limit above the cap is clamped to it", async () => {
    const { kept } = split(textOf(await call(small.client, "read_text_file", { path: p("long.txt"), limit: 10 * CAP })));
    expect(kept.length).toBeGreaterThanOrEqual(CAP - 1);
  });

  it("head and tail are capped with the non-pageable notice", async () => {
    await compare("read_text_file", { path: p("long.txt"), head: 100 }, "ask for fewer lines, or use startLine and lineCount");
    await compare("read_text_file", { path: p("long.txt"), tail: 100 }, "ask for fewer lines, or use startLine and lineCount");
  });
});

describe("non-pageable results", () => {
  it("read_multiple_files counts the files included in full", async () => {
    const paths = [0, 1, 2, 3, 4].map((i) => p(`part${i}.txt`));
    const full = textOf(await call(big.client, "read_multiple_files", { paths }));
    const capped = textOf(await call(small.client, "read_multiple_files", { paths }));
    const { kept } = split(capped);
    expect(full.startsWith(kept)).toBe(true);
    const included = full.split("\n---\n").reduce(
      (acc, part, i) => {
        const end = acc.pos + (i > 0 ? 5 : 0) + part.length;
        return { pos: end, n: acc.n + (end <= kept.length ? 1 : 0) };
      },
      { pos: 0, n: 0 },
    ).n;
    expect(included).toBe(1);
    expect(capped.slice(kept.length + 1)).toBe(
      `[Result truncated: showing characters 1-${formatCount(kept.length)} of ${formatCount(full.length)}; ` +
        `${included} of 5 requested files included in full. To see the rest, request fewer files, or read the others with read_text_file.]`,
    );
  });

  it("listings, tree and search keep an exact prefix of the uncapped output", async () => {
    const listAdvice = "list a subdirectory, or use search_files with a pattern";
    await compare("list_directory", { path: p("many") }, listAdvice, listEnds);
    // A cut sized listing says the totals its cut hides (issue 28 row 5), as the uncapped listing ends with them.
    const totals = (full: string): string => {
      const [, files, dirs, size] = /Total: (\d+) files, (\d+) directories\nCombined size: (.+)$/.exec(full) ?? [];
      return `; the totals, counting every entry, are exact: ${formatCount(Number(files))} files, ${formatCount(Number(dirs))} directories, ${size}`;
    };
    await compare("list_directory_with_sizes", { path: p("many") }, listAdvice, sizedEnds, totals);
    const tree = await compare("directory_tree", { path: root }, "pass a deeper path, or add excludePatterns", treeEnds);
    expect(() => JSON.parse(tree)).not.toThrow();
    await compare("search_files", { path: root, pattern: "**/*.txt" }, "pass a deeper path, a narrower pattern, or add excludePatterns", listEnds);
  });

  it("edit_file's diff is capped and the edit still applied", async () => {
    await writeFile(p("edit.txt"), "a\n".repeat(300));
    const capped = textOf(
      await call(small.client, "edit_file", { path: p("edit.txt"), edits: [{ oldText: "a\n".repeat(300), newText: "b\n".repeat(300) }] }),
    );
    const { notice } = split(capped);
    expect(notice).toMatch(/To see the rest, the edit was still applied unless dryRun was set; read the file with read_text_file to see it\.\]$/);
    expect(await readFile(p("edit.txt"), "utf8")).toBe("b\n".repeat(300));
  });
});

describe("errors are capped too", () => {
  const expectCappedError = (result: CallToolResult) => {
    expect(result.isError).toBe(true);
    const { notice } = split(textOf(result));
    expect(notice).toMatch(/To see the rest, retry with shorter arguments/);
  };

  it("an edit_file error quoting a 1 MB oldText", async () => {
    await writeFile(p("e.txt"), "content");
    expectCappedError(await call(small.client, "edit_file", { path: p("e.txt"), edits: [{ oldText: "z".repeat(1 << 20), newText: "" }] }));
    expect(await readFile(p("e.txt"), "utf8")).toBe("content");
  });

  it("argument validation errors", async () => {
    // Ten issues are named, each with 80 characters of the value given: past the cap of 1,000.
    const edits = Array.from({ length: 50 }, () => ({ oldText: ["x".repeat(200)], newText: 2 }));
    expectCappedError(await call(small.client, "edit_file", { path: p("e.txt"), edits }));
  });

  it("a very long path", async () => {
    expectCappedError(await call(small.client, "read_text_file", { path: `/${"q".repeat(100_000)}` }));
  });

  it("list_allowed_directories with many directories", async () => {
    const dirs = Array.from({ length: 40 }, (_, i) => p("many-dirs", `directory-number-${i}`));
    for (const d of dirs) await mkdir(d, { recursive: true });
    const server = await inProcess(["--max-result-chars", String(CAP), ...dirs]);
    try {
      const { kept, total } = split(textOf(await call(server.client, "list_allowed_directories")));
      expect(total).toBe(`Allowed directories:\n${dirs.join("\n")}`.length);
      expect(kept).toBe(`Allowed directories:\n${dirs.join("\n")}`.slice(0, CAP));
    } finally {
      await server.close();
    }
  });
});

describe("media limit", () => {
  it("accepts a file at the limit and refuses one byte over, naming size and limit", async () => {
    await writeFile(p("at.png"), Buffer.alloc(1000, 1));
    await writeFile(p("over.png"), Buffer.alloc(1001, 1));
    const server = await inProcess(["--max-media-bytes", "1000", root]);
    try {
      const ok = await call(server.client, "read_media_file", { path: p("at.png") });
      expect(ok.content[0]).toMatchObject({ type: "image", mimeType: "image/png", data: Buffer.alloc(1000, 1).toString("base64") });
      const refused = await call(server.client, "read_media_file", { path: p("over.png") });
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toBe(`File too large for read_media_file: ${p("over.png")} is 1,001 bytes; the limit is 1,000 bytes.`);
    } finally {
      await server.close();
    }
  });

  it("the environment variable sets the media limit", async () => {
    await writeFile(p("env.png"), Buffer.alloc(11));
    const server = await inProcess([root], { env: { BOUNDED_FS_MAX_MEDIA_BYTES: "10" } });
    try {
      expect(textOf(await call(server.client, "read_media_file", { path: p("env.png") }))).toMatch(/is 11 bytes; the limit is 10 bytes\.$/);
    } finally {
      await server.close();
    }
  });

  it.skipIf(process.platform !== "linux")("refuses a file that grows past the limit while being read", async () => {
    // /proc files report size 0 to stat but yield bytes when read: growth after the stat check, made deterministic.
    const server = await inProcess(["--max-media-bytes", "16", "/proc"]);
    try {
      const result = await call(server.client, "read_media_file", { path: "/proc/self/status" });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(
        /^File too large for read_media_file: \/proc\/\d+\/status grew past 16 bytes while being read; the limit is 16 bytes\.$/,
      );
    } finally {
      await server.close();
    }
  });
});
