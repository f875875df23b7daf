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

  const utf16 = (text: string, order: "LE" | "BE"): Buffer => {
    const le = Buffer.from(`\ufeff${text}`, "utf16le");
    return order === "LE" ? le : le.swap16();
  };

  it.each([
    ["a\r\nb\r\n", "CRLF", true],
    ["a\nb", "LF", false],
    ["a\r\nb\nc\n", "mixed", true],
    ["no break", "none", false],
    // U+010A and U+0A0D hold the bytes of LF and CR in one order or the other: neither is a line break.
    ["\u010a\u0a0d\u0d0a", "none", false],
  ] as const)("UTF-16 (a byte order mark first) is read in UTF-16 units: %j: %s, endsWithNewline %s", async (text, endings, ends) => {
    for (const order of ["LE", "BE"] as const) {
      expect(await sample(utf16(text, order)), order).toMatchObject({ lineEndings: endings, endsWithNewline: ends });
    }
  });

  it("a large UTF-16 file: a CRLF across the head's edge is one CRLF, and the last unit says whether it ends with a break", async () => {
    for (const order of ["LE", "BE"] as const) {
      // The BOM is one unit: SAMPLE_BYTES / 2 - 2 units of x put the CR in the head's last unit and the LF just past it.
      const edge = utf16(`${"x".repeat(SAMPLE_BYTES / 2 - 2)}\r\n${"y".repeat(100)}`, order);
      expect(await sample(edge), order).toMatchObject({ lineEndings: "CRLF", endsWithNewline: false });
      const ends = utf16(`${"x".repeat(SAMPLE_BYTES)}\r\n`, order);
      expect(await sample(ends), order).toMatchObject({ lineEndings: "CRLF", endsWithNewline: true });
      const lf = utf16(`${"a\n".repeat(SAMPLE_BYTES)}z`, order);
      expect(await sample(lf), order).toMatchObject({ lineEndings: "LF", endsWithNewline: false });
    }
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
