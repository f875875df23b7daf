/**
 * The note a read adds for a file that is not UTF-8 (reading/encoding-note.ts), under both platform strategies: UTF-16
 * (either byte order), a binary file, text in another encoding (where its first such bytes are, across read blocks and
 * past the look's bound), none for UTF-8 that holds U+FFFD or NUL itself, and the text itself left exactly as read.
 */
import { open, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Shown } from "../../../src/kernel/escape.js";
import { encodingNote } from "../../../src/reading/index.js";
import { ENCODING_NOTES } from "../../../src/tools/read_multiple_files.js";
import { STRATEGIES, tempDir } from "../../support/fixtures.js";
import { call, inProcess, textOf, type InProcess } from "../../support/in-process.js";

const MIB = 1024 * 1024;
const utf16le = Buffer.from("\ufeffHello world\r\nSecond line \u00fcn\u00ef\r\n", "utf16le");
const utf16be = Buffer.from(utf16le).swap16();
const latin1 = Buffer.from("first line\ncaf\u00e9 cr\u00e8me\n", "latin1");
const binary = Buffer.concat([Buffer.from("GIF89a"), Buffer.from([0, 1, 2, 0xff, 0x0a, 0x41])]);
// Valid UTF-8 that holds U+FFFD itself, and a NUL past the first 8 KiB.
const honest = Buffer.from(`${"x".repeat(9000)}\u0000 and \ufffd are characters too\n`);

const texts = (result: CallToolResult): string[] => {
  expect(result.isError).toBeFalsy();
  return result.content.map((block) => (block.type === "text" ? block.text : `[${block.type}]`));
};

describe.each(STRATEGIES)("the note on a file that is not UTF-8 (%s)", (strategy) => {
  let root: string;
  let server: InProcess;
  let remove: () => Promise<void>;
  const file = (name: string) => path.join(root, name);
  const run = (name: string, args: Record<string, unknown>) => call(server.client, name, args);

  beforeAll(async () => {
    ({ dir: root, remove } = await tempDir("bfs-encoding-"));
    await writeFile(file("ps.log"), utf16le);
    await writeFile(file("be.txt"), utf16be);
    await writeFile(file("latin1.txt"), latin1);
    await writeFile(file("image.gif"), binary);
    await writeFile(file("honest.txt"), honest);
    await writeFile(file("plain.txt"), "plain text\n");
    server = await inProcess([root], { strategy });
  });

  afterAll(async () => {
    await server?.close();
    await remove?.();
  });

  it("says a UTF-16 LE file is UTF-16, in a block after the text, which stays what a UTF-8 decode gives", async () => {
    const [text, note, ...rest] = texts(await run("read_text_file", { path: file("ps.log") }));
    expect(text).toBe(utf16le.toString("utf8"));
    expect(note).toBe(
      `Note: ${file("ps.log")} is UTF-16 LE text (it begins with the byte order mark FF FE), shown here decoded as UTF-8, ` +
        "as every read is: a NUL (\\u0000) beside each ASCII character, U+FFFD (\ufffd) for most others. Text written back " +
        "from this would not be the file's.",
    );
    expect(rest).toEqual([]);
  });

  it("says so for UTF-16 BE, and in every way of reading, read_file too", async () => {
    const ways = [{}, { head: 1 }, { tail: 2 }, { startLine: 1, lineCount: 1 }, { offset: 4, limit: 10 }];
    for (const way of ways) {
      for (const tool of ["read_text_file", "read_file"]) {
        const blocks = texts(await run(tool, { path: file("be.txt"), ...way }));
        expect(blocks, `${tool} ${JSON.stringify(way)}`).toHaveLength(2);
        expect(blocks[1]).toMatch(/^Note: .*be\.txt is UTF-16 BE text \(it begins with the byte order mark FE FF\)/);
      }
    }
  });

  it("edit_file refuses a UTF-16 file naming it UTF-16, and leaves it as it was", async () => {
    for (const [name, order, mark, bytes] of [
      ["ps.log", "LE", "FF FE", utf16le],
      ["be.txt", "BE", "FE FF", utf16be],
    ] as const) {
      const edit = await run("edit_file", { path: file(name), edits: [{ oldText: "Hello", newText: "Bye" }] });
      expect(edit.isError).toBe(true);
      expect(textOf(edit)).toBe(
        `Cannot edit ${file(name)}: it is UTF-16 ${order} text (it begins with the byte order mark ${mark}), not UTF-8, and ` +
          "rewriting it would replace its undecodable bytes.",
      );
      expect(await readFile(file(name))).toEqual(bytes);
    }
  });

  it("says a file with a NUL in its first 8 KiB is not text", async () => {
    const [text, note] = texts(await run("read_text_file", { path: file("image.gif") }));
    expect(text).toBe(binary.toString("utf8"));
    expect(note).toBe(
      `Note: ${file("image.gif")} is not text (a NUL byte in its first 8 KiB; search_file_contents skips it), shown here ` +
        "decoded as UTF-8, U+FFFD (\ufffd) for each byte that is not. An image or audio file: read_media_file.",
    );
  });

  it("names the line and byte offset where a file in another encoding stops being UTF-8", async () => {
    const [text, note] = texts(await run("read_text_file", { path: file("latin1.txt") }));
    expect(text).toBe(latin1.toString("utf8"));
    expect(note).toBe(
      `Note: ${file("latin1.txt")} is not valid UTF-8 from line 2 (byte offset 14): bytes that are not show here as ` +
        "U+FFFD (\ufffd), so text written back from this would replace them (edit_file refuses such a file). It may be " +
        "Latin-1 or Windows-1252 text.",
    );
    // What edit_file says of the same file agrees on where.
    const edit = await run("edit_file", { path: file("latin1.txt"), edits: [{ oldText: "first", newText: "1st" }] });
    expect(edit.isError).toBe(true);
    expect(textOf(edit)).toContain("invalid bytes on line 2, at byte offset 14");
  });

  it("adds nothing to UTF-8 that holds U+FFFD or a NUL itself, nor to plain text, nor to a window without either", async () => {
    expect(texts(await run("read_text_file", { path: file("honest.txt") }))).toEqual([honest.toString("utf8")]);
    expect(texts(await run("read_text_file", { path: file("plain.txt") }))).toEqual(["plain text\n"]);
    // The first line of the Latin-1 file is plain ASCII: a window of it shows nothing to explain.
    expect(texts(await run("read_text_file", { path: file("latin1.txt"), head: 1 }))).toEqual(["first line"]);
  });

  it("read_multiple_files: one note a file that is not UTF-8, in a block after the files' text, which stays as read", async () => {
    const names = ["ps.log", "plain.txt", "latin1.txt", "honest.txt"];
    const blocks = texts(await run("read_multiple_files", { paths: names.map(file) }));
    expect(blocks[0]).toBe(
      `${file("ps.log")}:\n${utf16le.toString("utf8")}\n\n---\n${file("plain.txt")}:\nplain text\n\n\n---\n` +
        `${file("latin1.txt")}:\n${latin1.toString("utf8")}\n\n---\n${file("honest.txt")}:\n${honest.toString("utf8")}\n`,
    );
    expect(blocks.slice(1).join("\n").split("\n")).toEqual([
      expect.stringMatching(/^Note: .*ps\.log is UTF-16 LE text/),
      expect.stringMatching(/^Note: .*latin1\.txt is not valid UTF-8 from line 2 \(byte offset 14\)/),
    ]);
    expect(blocks).toHaveLength(2);
  });

  it(`read_multiple_files looks at ${ENCODING_NOTES} such files a call, at most`, async () => {
    const many = Array.from({ length: ENCODING_NOTES + 3 }, (_, i) => file(`many-${i}.txt`));
    for (const name of many) await writeFile(name, latin1);
    const blocks = texts(await run("read_multiple_files", { paths: many }));
    expect(blocks[1]?.split("\n")).toHaveLength(ENCODING_NOTES);
    expect(blocks[1]).toContain(many[ENCODING_NOTES - 1]);
    expect(blocks[1]).not.toContain(many[ENCODING_NOTES]);
  });

  it("leaves paging exact: following each window's notice gives the file's text, a note beside each window that shows U+FFFD", async () => {
    let got = "";
    let notes = 0;
    for (let offset = 0, calls = 0; calls < 50; calls++) {
      const [text = "", ...rest] = texts(await run("read_text_file", { path: file("latin1.txt"), offset, limit: 6 }));
      notes += rest.length;
      expect(rest.length).toBe(text.includes("\ufffd") ? 1 : 0);
      const next = /Call again with offset=(\d+) to continue\.\]$/.exec(text);
      got += next === null ? text : text.slice(0, text.lastIndexOf("\n[Result truncated:"));
      if (next === null) break;
      offset = Number(next[1]);
    }
    expect(got).toBe(latin1.toString("utf8"));
    expect(notes).toBe(2);
  });
});

describe("encodingNote", () => {
  let root: string;
  let remove: () => Promise<void>;
  beforeAll(async () => {
    ({ dir: root, remove } = await tempDir("bfs-encoding-unit-"));
  });
  afterAll(async () => remove?.());

  const noteOf = async (bytes: Buffer, lookBytes?: number): Promise<string | undefined> => {
    const name = path.join(root, "f");
    await writeFile(name, bytes);
    const handle = await open(name);
    try {
      return await encodingNote(handle, "/d/f" as Shown, lookBytes);
    } finally {
      await handle.close();
    }
  };

  it("finds the first bytes that are not UTF-8 past the first read block, counting lines across it", async () => {
    const lines = "a line of text\n".repeat(MIB / 15 + 10);
    const before = Buffer.from(lines);
    const lineCount = lines.split("\n").length;
    expect(before.length).toBeGreaterThan(MIB);
    expect(await noteOf(Buffer.concat([before, Buffer.from([0xe9, 0x0a])]))).toMatch(
      new RegExp(
        `^Note: /d/f is not valid UTF-8 from line ${lineCount.toLocaleString("en-US")} \\(byte offset ${before.length.toLocaleString("en-US")}\\)`,
      ),
    );
  });

  it("finds a character left unfinished at the end of the file, also where a read block ends inside it", async () => {
    // The euro sign's three bytes, the last one missing; the block edge falls inside the sequence, then at its end.
    for (const pad of [MIB - 1, MIB - 2, 10]) {
      const note = await noteOf(Buffer.concat([Buffer.alloc(pad, 0x61), Buffer.from([0xe2, 0x82])]));
      expect(note, `pad ${pad}`).toMatch(new RegExp(`byte offset ${pad.toLocaleString("en-US")}\\)`));
    }
  });

  it("gives no note where the first such bytes lie past the look's bound, and one where they lie within it", async () => {
    const bytes = Buffer.concat([Buffer.alloc(3 * MIB, 0x61), Buffer.from([0xff])]);
    expect(await noteOf(bytes, 2 * MIB)).toBeUndefined();
    expect(await noteOf(bytes, 4 * MIB)).toMatch(/from line 1 \(byte offset 3,145,728\)/);
  });

  it("gives no note for valid UTF-8, an empty file, or one byte", async () => {
    expect(await noteOf(Buffer.from("caf\u00e9 \ufffd\n"))).toBeUndefined();
    expect(await noteOf(Buffer.alloc(0))).toBeUndefined();
    expect(await noteOf(Buffer.from([0xfe]))).toMatch(/from line 1 \(byte offset 0\)/);
  });
});
