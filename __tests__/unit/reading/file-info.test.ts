/**
 * get_file_info's line traits (issue 17, SPEC §15): lineEndings, endsWithNewline and text, read from
 * the first and last 8 KiB only; text agrees with what search_file_contents skips as binary (one
 * rule, grep's). In process for the sampling, through the built server under both strategies.
 *
 * Regression guard: appending a line took four calls because nothing told whether a file ended
 * with a line break.
 */
import { mkdir, open, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { SAMPLE_BYTES, sampleEnds } from "../../../src/reading/file-info.js";
import { STRATEGIES, tempDir } from "../../support/fixtures.js";
import { call, inProcess, textOf, type InProcess } from "../../support/in-process.js";

let dir: string;
let remove: () => Promise<void>;

beforeEach(async () => {
  ({ dir, remove } = await tempDir("bfs-info-"));
});
afterEach(async () => {
  await remove();
});

/** sampleEnds of a file holding `bytes`, and the bytes it read. */
async function sample(bytes: Buffer | string) {
  const file = path.join(dir, "f");
  await writeFile(file, bytes);
  const handle = await open(file, "r");
  let read = 0;
  const counting = new Proxy(handle, {
    get(target, key) {
      if (key === "read") {
        return async (buf: Buffer, offset: number, length: number, position: number) => {
          const r = await target.read(buf, offset, length, position);
          read += r.bytesRead;
          return r;
        };
      }
      const value = Reflect.get(target, key);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  try {
    const got = await sampleEnds(counting, Buffer.byteLength(bytes));
    return { lineEndings: got.lineEndings, endsWithNewline: got.endsWithNewline, read };
  } finally {
    await handle.close();
  }
}

describe("sampleEnds", () => {
  it.each([
    ["", "none", false],
    ["one line", "none", false],
    ["a\nb\n", "LF", true],
    ["a\r\nb\r\n", "CRLF", true],
    ["a\r\nb\nc", "mixed", false],
    ["\n", "LF", true],
    ["\r\n", "CRLF", true],
    ["a\rb\r", "none", false],
  ] as const)("%j: %s, endsWithNewline %s", async (text, endings, ends) => {
    expect(await sample(text)).toMatchObject({ lineEndings: endings, endsWithNewline: ends });
  });

  it("a CRLF split across the head's last byte and the tail's first is one CRLF", async () => {
    const bytes = Buffer.alloc(SAMPLE_BYTES + 10, "x");
    bytes[SAMPLE_BYTES - 1] = 0x0d;
    bytes[SAMPLE_BYTES] = 0x0a;
    expect(await sample(bytes)).toMatchObject({ lineEndings: "CRLF", endsWithNewline: false });
  });

  it("a large file is judged from its first and last 8 KiB, reading no more than those (and one byte)", async () => {
    const middle = "mixed\r\n".repeat(100_000);
    const text = `${"head\n".repeat(4000)}${middle}${"tail\n".repeat(4000)}`;
    const got = await sample(text);
    expect(got).toEqual({ lineEndings: "LF", endsWithNewline: true, read: 2 * SAMPLE_BYTES + 1 });
    expect((await sample(`${"a\r\n".repeat(10_000)}${"b\n".repeat(10_000)}`)).lineEndings).toBe("mixed");
  });
});

describe.each(STRATEGIES)("get_file_info through the built server (%s strategy)", (name) => {
  let root: string;
  let removeRoot: () => Promise<void>;
  let s: InProcess;
  const info = async (p: string) => {
    const result = await call(s.client, "get_file_info", { path: p });
    return Object.fromEntries(
      textOf(result)
        .split("\n")
        .map((l) => [l.slice(0, l.indexOf(":")), l.slice(l.indexOf(":") + 2)]),
    );
  };

  beforeAll(async () => {
    ({ dir: root, remove: removeRoot } = await tempDir("bfs-info-server-"));
    s = await inProcess([root], { strategy: name });
  });
  afterAll(async () => {
    await s.close();
    await removeRoot();
  });

  it("adds lineEndings, endsWithNewline and text after upstream's fields for a file, nothing for a directory", async () => {
    await writeFile(path.join(root, "crlf.txt"), "one\r\ntwo\r\n");
    expect(await info(path.join(root, "crlf.txt"))).toMatchObject({ size: "10", lineEndings: "CRLF", endsWithNewline: "true", text: "true" });
    await writeFile(path.join(root, "open.txt"), "one\ntwo");
    expect(await info(path.join(root, "open.txt"))).toMatchObject({ lineEndings: "LF", endsWithNewline: "false", text: "true" });
    const folder = await info(root);
    expect(folder.isDirectory).toBe("true");
    expect(folder).not.toHaveProperty("lineEndings");
    expect(folder).not.toHaveProperty("text");
  });

  it("text is false exactly for the files search_file_contents skips as binary", async () => {
    const files: Record<string, Buffer> = {
      "nul-head.bin": Buffer.from("abc\0def\nfind me\n"),
      "utf16.txt": Buffer.from([0xff, 0xfe, 0x41, 0x42]),
      "nul-late.txt": Buffer.concat([Buffer.from(`find me\n${"x".repeat(SAMPLE_BYTES + 100)}`), Buffer.from([0]), Buffer.from("\n")]),
      "plain.txt": Buffer.from("find me\n"),
    };
    const sub = path.join(root, "binaries");
    await mkdir(sub);
    for (const [n, bytes] of Object.entries(files)) await writeFile(path.join(sub, n), bytes);
    const search = textOf(await call(s.client, "search_file_contents", { path: sub, query: "f", outputMode: "files" }));
    const binaryCount = Number(/(\d+) binary/.exec(search)?.[1] ?? 0);
    const textFalse: string[] = [];
    for (const n of Object.keys(files)) if ((await info(path.join(sub, n))).text === "false") textFalse.push(n);
    expect(textFalse.sort()).toEqual(["nul-head.bin", "utf16.txt"]);
    expect(binaryCount).toBe(textFalse.length);
    for (const n of textFalse) expect(search).not.toContain(n);
    expect(search).toContain("plain.txt");
  });
});
