/**
 * Windowed reads, counts, whole-file streaming and head/tail against the text
 * `fs.readFile(path, "utf8")` gives (SPEC §3.2).
 */
import { mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import type { FileHandle } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TextSink } from "../src/kernel/bounded.js";
import { CheckpointCache, countChars, headInto, readWindow, streamInto, tailInto } from "../src/reading/index.js";
import { refWindow, withHandle } from "./support/window-oracle.js";

let dir: string;
let n = 0;
beforeAll(async () => {
  dir = await realpath(await mkdtemp(path.join(tmpdir(), "paged-read-")));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function fileWith(content: string | Uint8Array): Promise<string> {
  const p = path.join(dir, `f${n++}`);
  await writeFile(p, content);
  return p;
}

async function window(p: string, offset: number, limit: number, chunkSize?: number, cache = new CheckpointCache()) {
  return withHandle(p, (h) => readWindow(h, p, offset, limit, cache, { chunkSize }));
}

describe("readWindow", () => {
  const ascii = "0123456789abcdefghij";

  it("returns the start, middle and end of a file with the exact total", async () => {
    const p = await fileWith(ascii);
    expect(await window(p, 0, 5)).toEqual({ text: "01234", start: 0, end: 5, total: 20 });
    expect(await window(p, 7, 4)).toEqual({ text: "789a", start: 7, end: 11, total: 20 });
    expect(await window(p, 15, 50)).toEqual({ text: "fghij", start: 15, end: 20, total: 20 });
  });

  it("returns an empty window at or past the end", async () => {
    const p = await fileWith(ascii);
    const cache = new CheckpointCache();
    expect(await window(p, 20, 5, undefined, cache)).toEqual({ text: "", start: 20, end: 20, total: 20 });
    expect(await window(p, 999, 5, undefined, cache)).toEqual({ text: "", start: 999, end: 999, total: 20 });
  });

  it("handles an empty file", async () => {
    const p = await fileWith("");
    expect(await window(p, 0, 10)).toEqual({ text: "", start: 0, end: 0, total: 0 });
  });

  it("never starts or ends inside a surrogate pair", async () => {
    const p = await fileWith("ab😀cd");
    // offset 3 is the low half: the window moves back to the high half and reports it
    expect(await window(p, 3, 2)).toEqual({ text: "😀", start: 2, end: 4, total: 6 });
    // an end that would split the pair moves back by one
    expect(await window(p, 0, 3)).toEqual({ text: "ab", start: 0, end: 2, total: 6 });
    expect(await window(p, 1, 2)).toEqual({ text: "b", start: 1, end: 2, total: 6 });
  });

  it("returns the whole pair for limit 1 on an emoji, from either half", async () => {
    const p = await fileWith("😀😁");
    expect(await window(p, 0, 1)).toEqual({ text: "😀", start: 0, end: 2, total: 4 });
    expect(await window(p, 1, 1)).toEqual({ text: "😀", start: 0, end: 2, total: 4 });
    expect(await window(p, 2, 1)).toEqual({ text: "😁", start: 2, end: 4, total: 4 });
  });

  it("keeps a BOM and CRLF as characters", async () => {
    const p = await fileWith(Buffer.from([0xef, 0xbb, 0xbf, 0x61, 0x0d, 0x0a, 0x62]));
    expect(await window(p, 0, 1)).toEqual({ text: "\uFEFF", start: 0, end: 1, total: 5 });
    expect(await window(p, 1, 10)).toEqual({ text: "a\r\nb", start: 1, end: 5, total: 5 });
  });

  it("replaces invalid and truncated sequences exactly as readFile does", async () => {
    const bytes = Buffer.from([0x61, 0xff, 0xe2, 0x82, 0x62, 0xed, 0xa0, 0x80, 0xc0, 0xaf, 0x80, 0xf0, 0x9f, 0x98]);
    const p = await fileWith(bytes);
    const ref = await readFile(p, "utf8");
    expect(ref).toContain("\uFFFD");
    for (const chunkSize of [1, 2, 3, 5, 64]) {
      expect(await window(p, 0, 100, chunkSize)).toEqual(refWindow(ref, 0, 100));
      expect(await window(p, 4, 3, chunkSize)).toEqual(refWindow(ref, 4, 3));
    }
  });

  it("decodes a 4-byte character straddling a chunk boundary", async () => {
    const p = await fileWith("abc😀def😀");
    const ref = await readFile(p, "utf8");
    for (const chunkSize of [1, 2, 3, 4, 5, 6]) {
      for (let offset = 0; offset <= ref.length; offset++) {
        expect(await window(p, offset, 3, chunkSize)).toEqual(refWindow(ref, offset, 3));
      }
    }
  });

  it("reassembles the file when walking by end offsets", async () => {
    const p = await fileWith("héllo 😀 wörld\r\n中文😁".repeat(20));
    const ref = await readFile(p, "utf8");
    const cache = new CheckpointCache({ checkpointEveryBytes: 16 });
    const parts: string[] = [];
    for (let offset = 0; ; ) {
      const w = await window(p, offset, 7, 5, cache);
      expect(w.start).toBe(offset);
      parts.push(w.text);
      if (w.end >= w.total) break;
      offset = w.end;
    }
    expect(parts.join("")).toBe(ref);
  });

  it("rejects a bad offset, limit or chunkSize naming the parameter", async () => {
    const p = await fileWith("abc");
    await expect(window(p, -1, 5)).rejects.toThrow(/offset.*-1/);
    await expect(window(p, 1.5, 5)).rejects.toThrow(/offset.*1\.5/);
    await expect(window(p, 0, 0)).rejects.toThrow(/limit.*0/);
    await expect(window(p, 0, 5, 0)).rejects.toThrow(/chunkSize.*0/);
  });

  it("throws the signal's reason when aborted", async () => {
    const p = await fileWith("abc");
    const controller = new AbortController();
    controller.abort(new Error("stop now"));
    const read = withHandle(p, (h) => readWindow(h, p, 0, 5, new CheckpointCache(), { signal: controller.signal }));
    await expect(read).rejects.toThrow("stop now");
  });

  it("stops between chunks once aborted, in every reader", async () => {
    const p = await fileWith(Buffer.alloc(9 * 1024 * 1024, 0x0a));
    const readers: Array<(h: FileHandle, o: { signal: AbortSignal; onProgress: () => void }) => Promise<unknown>> = [
      (h, o) => readWindow(h, p, 5, 5, new CheckpointCache(), o),
      (h, o) => countChars(h, p, new CheckpointCache(), o),
      (h, o) => streamInto(h, p, new CheckpointCache(), new TextSink(10), o),
      (h, o) => headInto(h, 1e9, new TextSink(10), o),
      (h, o) => tailInto(h, 1e9, new TextSink(10), o),
    ];
    for (const reader of readers) {
      const controller = new AbortController();
      let progressCalls = 0;
      const onProgress = (): void => {
        progressCalls++;
        controller.abort();
      };
      await expect(withHandle(p, (h) => reader(h, { signal: controller.signal, onProgress }))).rejects.toThrow(/abort/i);
      expect(progressCalls).toBe(1);
    }
  });

  it("reports progress every few MiB with the file size", async () => {
    const size = 9 * 1024 * 1024;
    const p = await fileWith(Buffer.alloc(size, 0x61));
    const calls: Array<[number, number]> = [];
    const total = await withHandle(p, (h) => countChars(h, p, new CheckpointCache(), { onProgress: (done, all) => calls.push([done, all]) }));
    expect(total).toBe(size);
    expect(calls.length).toBeGreaterThanOrEqual(2);
    expect(calls.every(([, all]) => all === size)).toBe(true);
    expect(calls.map(([done]) => done)).toEqual([...calls.map(([done]) => done)].sort((a, b) => a - b));
  });
});

describe("countChars and streamInto", () => {
  const mixed = Buffer.concat([Buffer.from("\uFEFFabc 😀 中\r\n"), Buffer.from([0xff, 0xf0, 0x9f]), Buffer.from("x".repeat(300))]);

  it("counts exactly the readFile length, cold and cached", async () => {
    const p = await fileWith(mixed);
    const ref = await readFile(p, "utf8");
    const cache = new CheckpointCache();
    for (const chunkSize of [1, 7, 4096]) {
      expect(await withHandle(p, (h) => countChars(h, p, new CheckpointCache(), { chunkSize }))).toBe(ref.length);
    }
    expect(await withHandle(p, (h) => countChars(h, p, cache))).toBe(ref.length);
    expect(await withHandle(p, (h) => countChars(h, p, cache))).toBe(ref.length);
  });

  it("streams the whole text into a sink that has room", async () => {
    const p = await fileWith(mixed);
    const ref = await readFile(p, "utf8");
    const sink = new TextSink(10_000);
    await withHandle(p, (h) => streamInto(h, p, new CheckpointCache(), sink, { chunkSize: 5 }));
    expect(sink.render("advice")).toBe(ref);
  });

  it("keeps the prefix and the exact total in a small sink, cold and cached, also when already full", async () => {
    const p = await fileWith(mixed);
    const ref = await readFile(p, "utf8");
    const cache = new CheckpointCache();
    for (let round = 0; round < 2; round++) {
      const sink = new TextSink(12);
      sink.append("head:");
      await withHandle(p, (h) => streamInto(h, p, cache, sink, { chunkSize: 3 }));
      expect(sink.total).toBe(5 + ref.length);
      expect(sink.render("x").startsWith(`head:${ref.slice(0, 7)}`)).toBe(true);
    }
    const full = new TextSink(2);
    full.append("already full");
    await withHandle(p, (h) => streamInto(h, p, cache, full));
    expect(full.total).toBe(12 + ref.length);
  });
});

/** Upstream headFile on the decoded text: split on "\n", a final empty piece is no line. */
function refHead(text: string, lines: number): string {
  if (lines <= 0) return "";
  const parts = text.split("\n");
  if (parts[parts.length - 1] === "") parts.pop();
  return parts.slice(0, lines).join("\n");
}

/** Upstream tailFile on the decoded text: CRLF → LF, the last `lines` pieces of a split on "\n". */
function refTail(text: string, lines: number): string {
  if (lines <= 0 || text === "") return "";
  return text.replace(/\r\n/g, "\n").split("\n").slice(-lines).join("\n");
}

describe("headInto and tailInto", () => {
  const inputs: Array<[string, string | Buffer]> = [
    ["empty", ""],
    ["one line, no newline", "only"],
    ["LF with trailing newline", "a\nb\nc\n"],
    ["LF without trailing newline", "a\nb\nc"],
    ["CRLF", "a\r\nb\r\n\r\nc\r\n"],
    ["blank lines", "\n\n\n"],
    ["lone CR and emoji", "x\ry😀\n\rz😀\r"],
    ["invalid bytes", Buffer.from([0x61, 0x0a, 0xff, 0xe2, 0x0a, 0x0d, 0xf0, 0x9f, 0x0a, 0x62, 0xc3])],
  ];
  const lineCounts = [0, 1, 2, 3, 5, 100];

  for (const [name, content] of inputs) {
    it(`match the upstream semantics on ${name}`, async () => {
      const p = await fileWith(content);
      const ref = await readFile(p, "utf8");
      for (const chunkSize of [1, 2, 3, 1024]) {
        for (const lines of lineCounts) {
          const head = new TextSink(10_000);
          const tail = new TextSink(10_000);
          await withHandle(p, (h) => headInto(h, lines, head, { chunkSize }));
          await withHandle(p, (h) => tailInto(h, lines, tail, { chunkSize }));
          expect(head.render("x"), `head ${lines} chunk ${chunkSize}`).toBe(refHead(ref, lines));
          expect(tail.render("x"), `tail ${lines} chunk ${chunkSize}`).toBe(refTail(ref, lines));
        }
      }
    });
  }

  it("count exactly past a full sink, where valid runs are counted, not decoded", async () => {
    const invalidAfterBreaks = Buffer.from([0x0a, 0xff, 0x61, 0x62, 0x0d, 0xff, 0x0d, 0x0a, 0xe2, 0x82, 0x0a]);
    const p = await fileWith(
      Buffer.concat([
        Buffer.from("line one\r\nline two\r\n".repeat(50)),
        Buffer.from("wörds 中文 😀\r\n".repeat(30)),
        invalidAfterBreaks,
        invalidAfterBreaks,
        Buffer.from("tail\r".repeat(3)),
      ]),
    );
    const text = await readFile(p, "utf8");
    for (const chunkSize of [1, 4, 5, 16, 4096]) {
      for (const lines of [1, 2, 7, 40, 1000]) {
        const head = new TextSink(3);
        const tail = new TextSink(3);
        await withHandle(p, (h) => headInto(h, lines, head, { chunkSize }));
        await withHandle(p, (h) => tailInto(h, lines, tail, { chunkSize }));
        const refH = refHead(text, lines);
        const refT = refTail(text, lines);
        expect(head.total, `head ${lines} chunk ${chunkSize}`).toBe(refH.length);
        expect(tail.total, `tail ${lines} chunk ${chunkSize}`).toBe(refT.length);
        expect(head.render("x").startsWith(refH.slice(0, 3))).toBe(true);
        expect(tail.render("x").startsWith(refT.slice(0, 3))).toBe(true);
      }
    }
  });

  it("reject a bad line count naming it", async () => {
    const p = await fileWith("a\n");
    await expect(withHandle(p, (h) => headInto(h, -1, new TextSink(10)))).rejects.toThrow(/lines.*-1/);
    await expect(withHandle(p, (h) => tailInto(h, 2.5, new TextSink(10)))).rejects.toThrow(/lines.*2\.5/);
  });
});
