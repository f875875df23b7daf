/**
 * The streaming edit engine (issue 10, SPEC §12) against the in-memory reference
 * (the naive placement model of support/edit-model.ts, which applies a unique edit with
 * edits.ts applyEdits, + createUnifiedDiff): same text, same diff, line endings kept.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { applyPatch } from "diff";
import { applyEdits, createUnifiedDiff, fenceDiff, normalizeLineEndings, type EditOperation } from "../../../src/editing/index.js";
import { escapeControls } from "../../../src/kernel/escape.js";
import { EditRefused } from "../../../src/editing/refusals.js";
import { streamEdit, type ByteSource, type StreamEditOptions } from "../../../src/editing/stream.js";
import { WRITE_BYTES } from "../../../src/editing/write-out.js";
import { modelCountLines, modelEdits } from "../../support/edit-model.js";

function memSource(bytes: Buffer, reads?: { count: number }): ByteSource {
  return {
    size: bytes.length,
    read: async (position, length) => {
      if (reads) reads.count++;
      return Buffer.from(bytes.subarray(position, position + length));
    },
  };
}

async function run(bytes: Buffer, edits: EditOperation[], extra: Partial<StreamEditOptions> = {}) {
  const chunks: Buffer[] = [];
  const result = await streamEdit({
    source: memSource(bytes),
    edits,
    path: escapeControls("/t/f.txt"),
    write: async (chunk) => void chunks.push(Buffer.from(chunk)),
    ...extra,
  });
  return { out: Buffer.concat(chunks), diff: result.diff, bytesWritten: result.bytesWritten };
}

type Outcome = { text: string; diff: string } | { error: string };

/** The reference diff of edits that must apply. */
function refDiff(bytes: Buffer, edits: EditOperation[]): string {
  const ref = reference(bytes, edits);
  if ("error" in ref) throw new Error(ref.error);
  return ref.diff;
}

function reference(bytes: Buffer, edits: EditOperation[]): Outcome {
  const original = normalizeLineEndings(bytes.toString("utf8"));
  const model = modelEdits(original, edits);
  if ("error" in model) return model;
  return { text: model.text, diff: modelCountLines(model.counts) + fenceDiff(createUnifiedDiff(original, model.text, "/t/f.txt")) };
}

const PIECES = ["a", "b", "  a", "\tb", "x y", "é", "😀", "", "  ", "a😀b", "$&"];
const ENDINGS = { lf: ["\n"], crlf: ["\r\n"], mixed: ["\n", "\r\n", "\r"] } as const;

const textArb = (endings: readonly string[]) =>
  fc
    .tuple(
      fc.array(fc.tuple(fc.constantFrom(...PIECES), fc.constantFrom(...PIECES), fc.constantFrom(...endings)), { maxLength: 30 }),
      fc.boolean(),
      fc.boolean(),
    )
    .map(([lines, finalNewline, bom]) => {
      let text = lines.map(([a, b, end]) => a + b + end).join("");
      if (!finalNewline && text.length > 0) text += "a";
      return (bom ? "\uFEFF" : "") + text;
    });

const stepArb = fc.record({
  mode: fc.nat(9),
  a: fc.nat(),
  b: fc.nat(),
  newText: fc.array(fc.constantFrom(...PIECES, "\n", "\n  "), { maxLength: 5 }).map((p) => p.join("")),
});

/** Builds edits that hit the text as the edits before left it: exact slices, re-indented lines, misses. */
function buildEdits(start: string, steps: readonly { mode: number; a: number; b: number; newText: string }[]): EditOperation[] {
  const edits: EditOperation[] = [];
  let text = normalizeLineEndings(start);
  for (const step of steps) {
    let oldText: string;
    const chars = Array.from(text);
    if (step.mode < 5 && chars.length > 0) {
      const from = step.a % chars.length;
      oldText = chars.slice(from, from + 1 + (step.b % 12)).join("");
    } else if (step.mode < 9) {
      const lines = text.split("\n");
      const from = step.a % lines.length;
      const picked = lines.slice(from, from + 1 + (step.b % 3));
      oldText = picked.map((l, j) => (j % 2 === step.mode % 2 ? `  ${l.trim()}` : `${l.trim()} `)).join("\n");
    } else {
      oldText = "no such text";
    }
    const edit = { oldText, newText: step.newText };
    edits.push(edit);
    try {
      text = applyEdits(text, [edit]);
    } catch {
      break;
    }
  }
  return edits;
}

/**
 * The streaming engine against the in-memory reference for the edits `steps` build on `text`: the same
 * refusal, or the same text (compared through `flat`) and the same diff.
 */
async function expectAsReference(
  text: string,
  steps: Parameters<typeof buildEdits>[1],
  blockBytes: number,
  flat = (t: string) => t,
  extra: Partial<StreamEditOptions> = {},
): Promise<void> {
  const bytes = Buffer.from(text);
  const edits = buildEdits(text, steps);
  const ref = reference(bytes, edits);
  if ("error" in ref) {
    await expect(run(bytes, edits, { blockBytes, ...extra })).rejects.toThrow(ref.error);
    return;
  }
  const got = await run(bytes, edits, { blockBytes, ...extra });
  expect(flat(got.out.toString("utf8"))).toBe(flat(ref.text));
  expect(got.diff).toBe(ref.diff);
}

describe("streamEdit equals the in-memory reference", () => {
  it("LF files: byte-identical text and diff, any block size", async () => {
    await fc.assert(
      fc.asyncProperty(textArb(ENDINGS.lf), fc.array(stepArb, { maxLength: 6 }), fc.integer({ min: 1, max: 40 }), async (text, steps, blockBytes) => {
        await expectAsReference(text, steps, blockBytes);
      }),
      { numRuns: Number(process.env.RUNS ?? 400) },
    );
  });

  it("diff windows cut every few lines (as nearby edits past DIFF_WINDOW_LINES are) give a diff that turns the file into the edited one", async () => {
    // Cut windows may align repeated lines otherwise than one whole diff would; what must hold is the patch itself.
    const patchOf = (diff: string): string => diff.slice(diff.indexOf("```diff\n") + 8, diff.lastIndexOf("```"));
    const holds = async (raw: Buffer, edits: EditOperation[], diffWindowLines: number): Promise<void> => {
      const ref = reference(raw, edits);
      if ("error" in ref) return;
      const got = await run(raw, edits, { diffWindowLines });
      expect(applyPatch(normalizeLineEndings(raw.toString("utf8")), patchOf(got.diff))).toBe(ref.text);
    };
    await fc.assert(
      fc.asyncProperty(textArb(ENDINGS.lf), fc.array(stepArb, { maxLength: 6 }), fc.constantFrom(1, 2, 3, 8), async (text, steps, k) =>
        holds(Buffer.from(text), buildEdits(text, steps), k),
      ),
      { numRuns: Number(process.env.RUNS ?? 400) },
    );
    // A replaceAll's many nearby changes, cut the same way.
    const lineArb = fc.array(fc.constantFrom("a", "b", "foo a", "foo b", "x foo", ""), { minLength: 1, maxLength: 60 });
    await fc.assert(
      fc.asyncProperty(lineArb, fc.constantFrom(1, 2, 3, 8), fc.constantFrom("bar", "", "foo\nnew"), async (lines, k, newText) =>
        holds(Buffer.from(`${lines.join("\n")}\n`), [{ oldText: "foo", newText, replaceAll: true }], k),
      ),
      { numRuns: Number(process.env.RUNS ?? 400) },
    );
  });

  it("a replaceAll of a name on every third line of 5,000: the diff shows each change beside what it replaced, not every line removed then added", async () => {
    const lines = Array.from({ length: 5000 }, (_, i) => (i % 3 === 0 ? `  const x${i} = oldName(y);` : `  other line ${i}`));
    const got = await run(Buffer.from(`${lines.join("\n")}\n`), [{ oldText: "oldName", newText: "newName", replaceAll: true }]);
    const body = got.diff.split("\n");
    expect(body).not.toContain("-  other line 1");
    const first = body.indexOf("-  const x0 = oldName(y);");
    expect(body.slice(first, first + 4)).toEqual(["-  const x0 = oldName(y);", "+  const x0 = newName(y);", "   other line 1", "   other line 2"]);
    expect(body.filter((l) => l.startsWith("-"))).toHaveLength(1667 + 1);
    expect(body.filter((l) => l.startsWith("+"))).toHaveLength(1667 + 1);
    expect(body.filter((l) => l.startsWith("@@"))).toEqual(["@@ -1,5000 +1,5000 @@"]);
  });

  it("CRLF and mixed files: same text once normalized, same diff", async () => {
    await fc.assert(
      fc.asyncProperty(
        textArb(ENDINGS.mixed),
        fc.array(stepArb, { maxLength: 6 }),
        fc.integer({ min: 1, max: 40 }),
        async (text, steps, blockBytes) => {
          // Lone CRs next to a line break make "normalized once" depend on where the edits fell;
          // any run of CRs before an LF compares as a plain LF.
          await expectAsReference(text, steps, blockBytes, (t) => t.replace(/\r+\n/g, "\n"));
        },
      ),
      { numRuns: Number(process.env.RUNS ?? 300) },
    );
  });

  it("a CRLF file stays CRLF, inside the edited text too", async () => {
    await fc.assert(
      fc.asyncProperty(textArb(ENDINGS.crlf), fc.array(stepArb, { maxLength: 4 }), async (text, steps) => {
        const bytes = Buffer.from(text);
        const edits = buildEdits(text, steps).filter((e) => !e.newText.includes("\r"));
        if ("error" in reference(bytes, edits) || !text.includes("\r\n")) return;
        const out = (await run(bytes, edits, { blockBytes: 7 })).out.toString("utf8");
        expect(out.replace(/\r\n/g, "")).not.toContain("\n");
      }),
      { numRuns: 200 },
    );
  });
});

const WORDS = ["alpha", "beta", "gamma", "  delta", "\tepsilon", "", "}", "  return x;", "é😀", "zeta eta"];

/** Longer LF files, so edits fall in separate diff windows and hunks. */
const longTextArb = fc
  .tuple(fc.array(fc.tuple(fc.constantFrom(...WORDS), fc.nat(400)), { minLength: 20, maxLength: 300 }), fc.boolean())
  .map(([lines, final]) => lines.map(([w, n]) => `${w}${n % 7 === 0 ? "" : n}`).join("\n") + (final ? "\n" : ""));

describe("streamEdit on longer files", () => {
  it("edits far apart: separate hunks, byte-identical text and diff", async () => {
    await fc.assert(
      fc.asyncProperty(
        longTextArb,
        fc.array(stepArb, { minLength: 1, maxLength: 10 }),
        fc.constantFrom(16, 64, 4096),
        async (text, steps, blockBytes) => {
          await expectAsReference(text, steps, blockBytes);
        },
      ),
      { numRuns: Number(process.env.RUNS ?? 150) },
    );
  });
});

describe("streamEdit with a block cache of 4 blocks", () => {
  it("ranges and diff windows longer than the cache (its slots reused inside one read) equal the reference", async () => {
    await fc.assert(
      fc.asyncProperty(longTextArb, fc.array(stepArb, { minLength: 1, maxLength: 10 }), async (text, steps) => {
        // cacheBytes 1 leaves the minimum of 4 slots of 16 bytes: a window of a few lines spans more.
        await expectAsReference(text, steps, 16, undefined, { cacheBytes: 1 });
      }),
      { numRuns: Number(process.env.RUNS ?? 150) },
    );
  });
});

describe("streamEdit over blocks dense with CRLFs", () => {
  it("more CRLFs in a block than its first gathering holds: a replaceAll and its reloads keep every ending", async () => {
    // 64 KiB blocks of 3-byte lines: over 20,000 CRLFs each, re-read for each of the replacements.
    const lines = Array.from({ length: 60_000 }, (_, i) => (i % 997 === 0 ? "z" : "a")).join("\r\n");
    const raw = Buffer.from(`${lines}\r\n`);
    const { out, diff } = await run(raw, [{ oldText: "z\na", newText: "Z\nA", replaceAll: true }]);
    expect(out.toString()).toBe(raw.toString().replaceAll("z\r\na", "Z\r\nA"));
    expect(diff).toContain("edits[0]: replaced 61 occurrences");
  });
});

describe("streamEdit with many edits in one call", () => {
  it("many long exact edits (found together by the rolling hash) equal the reference", async () => {
    const many = fc.array(fc.record({ a: fc.nat(), b: fc.nat(32), newText: fc.constantFrom("", "X", "line\nbreak", "gamma77") }), {
      minLength: 8,
      maxLength: 25,
    });
    await fc.assert(
      fc.asyncProperty(longTextArb, many, fc.constantFrom(32, 4096), async (text, picks, blockBytes) => {
        const bytes = Buffer.from(text);
        const edits: EditOperation[] = [];
        let current = text;
        for (const { a, b, newText } of picks) {
          const chars = Array.from(current);
          const from = a % Math.max(1, chars.length - 8);
          const oldText = chars.slice(from, from + 8 + b).join("");
          edits.push({ oldText, newText });
          current = applyEdits(current, [{ oldText, newText }]);
        }
        const ref = reference(bytes, edits);
        if ("error" in ref) {
          await expect(run(bytes, edits, { blockBytes })).rejects.toThrow(ref.error);
          return;
        }
        const got = await run(bytes, edits, { blockBytes });
        expect(got.out.toString("utf8")).toBe(ref.text);
        expect(got.diff).toBe(ref.diff);
      }),
      { numRuns: Number(process.env.RUNS ?? 100) },
    );
  });
});

describe("streamEdit: endings, encoding, limits", () => {
  it("keeps every line's own ending outside the edit, and a BOM", async () => {
    const raw = Buffer.from("\uFEFFone\r\ntwo\nthree\rfour\r\nfive target six\r\nseven\n");
    const { out } = await run(raw, [{ oldText: "target", newText: "hit" }], { blockBytes: 3 });
    expect(out.toString("utf8")).toBe("\uFEFFone\r\ntwo\nthree\rfour\r\nfive hit six\r\nseven\n");
  });

  it("writes newText's line breaks in the ending of the line where the edit starts", async () => {
    const raw = Buffer.from("a\nb target\r\nc\n");
    const { out } = await run(raw, [{ oldText: "target", newText: "x\ny\r\nz" }]);
    expect(out.toString("utf8")).toBe("a\nb x\r\ny\r\nz\r\nc\n");
    const lf = await run(Buffer.from("a\r\nb target\nc\r\n"), [{ oldText: "target", newText: "x\ny" }]);
    expect(lf.out.toString("utf8")).toBe("a\r\nb x\ny\nc\r\n");
  });

  it("a whitespace-tolerant edit of a CRLF file keeps CRLF around and inside it", async () => {
    const raw = Buffer.from("keep\r\n    if (a) {\r\n        go();\r\n    }\r\nend\r\n");
    const edits = [{ oldText: "if (a) {\n    go();\n}", newText: "if (b) {\n    stop();\n}" }];
    const { out, diff } = await run(raw, edits);
    // Each new line takes the indentation of the line its old one matched: the block keeps its nesting (upstream's
    // re-basing wrote "    stop();" and "}" one level out).
    expect(out.toString("utf8")).toBe("keep\r\n    if (b) {\r\n        stop();\r\n    }\r\nend\r\n");
    expect(diff).toBe(refDiff(raw, edits));
  });

  it.each([
    ["an invalid byte", Buffer.from([0x61, 0x0a, 0xff, 0x62]), "line 2, at byte offset 2"],
    ["a 4-byte character cut at the end", Buffer.from("ab😀").subarray(0, 5), "line 1, at byte offset 2"],
    ["an overlong encoding across blocks", Buffer.from([0x61, 0x61, 0xc0, 0x80, 0x61]), "line 1, at byte offset 2"],
    [
      "a Latin-1 byte after lines and blocks",
      Buffer.concat([Buffer.from("a1\nb2\nc3 caf"), Buffer.from([0xe9]), Buffer.from(" x\n")]),
      "line 3, at byte offset 12",
    ],
  ])("refuses a file with %s, naming the line and offset where it stops being UTF-8", async (_, raw, where) => {
    await expect(run(raw, [{ oldText: "a", newText: "b" }], { blockBytes: 2 })).rejects.toThrow(
      `Cannot edit /t/f.txt: it is not valid UTF-8 text (invalid bytes on ${where}), and rewriting it would replace its undecodable bytes.`,
    );
  });

  it("names the edit that matched nowhere after the unchanged prefix", async () => {
    const raw = Buffer.from("alpha\nbeta\n");
    const edits = [
      { oldText: "alpha", newText: "gamma" },
      { oldText: "alpha", newText: "x" },
    ];
    await expect(run(raw, edits)).rejects.toThrow("Could not find exact match for edit:\nalpha\n(edits[1], edit 2 of 2");
  });

  it("refuses an edit text with a lone surrogate", async () => {
    await expect(run(Buffer.from("a"), [{ oldText: "a", newText: "\uD800" }])).rejects.toThrow(/edits\[0\]\.newText is not well-formed/);
  });

  it("a later edit may match text an earlier edit inserted, across block boundaries", async () => {
    const raw = Buffer.from(`${"x".repeat(5000)}\nneedle\n${"y".repeat(5000)}`);
    const edits = [
      { oldText: "needle", newText: "hay😀stack" },
      { oldText: "x\nhay😀", newText: "[joined]" },
      { oldText: "[joined]stack\nyy", newText: "done" },
    ];
    const got = await run(raw, edits, { blockBytes: 7 });
    expect(got.out.toString("utf8")).toBe(applyEdits(raw.toString("utf8"), edits));
    expect(got.diff).toBe(refDiff(raw, edits));
  });

  it("an empty oldText is refused as a value naming edits[i].oldText, not applied as a prepend (issue 28 row 15)", async () => {
    const raw = Buffer.from("\uFEFFbody\r\n");
    for (const replaceAll of [undefined, true]) {
      const edits = [
        { oldText: "body", newText: "b" },
        { oldText: "", newText: "head\n", replaceAll },
      ];
      const refused = await run(raw, edits).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(EditRefused);
      expect((refused as EditRefused).refusal).toEqual({ kind: "emptyOldText", edit: 1 });
      expect((refused as Error).message).toMatch(/^edits\[1\]\.oldText is empty: .*nothing was written/);
    }
  });

  it("an old text found nowhere whose every line starts with a line number says the numbers are not the file's text", async () => {
    const raw = Buffer.from("const a = 1;\nconst b = 2;\n");
    const refusal = (oldText: string) =>
      run(raw, [{ oldText, newText: "x" }]).then(
        () => "",
        (error: unknown) => (error as Error).message,
      );
    for (const numbered of ["1:const a = 1;\n2-const b = 2;", "     2\tconst b = 2;", "2\u2192const b = 2;"]) {
      expect(await refusal(numbered)).toMatch(/\nIts lines start with line numbers, as search_file_contents shows them .*without them/);
    }
    for (const plain of ["const c = 3;", "1:const a = 1;\nconst b"]) expect(await refusal(plain)).not.toMatch(/line numbers/);
  });

  it("a file of many default-size blocks equals the reference byte for byte", async () => {
    const lines = Array.from({ length: 60000 }, (_, i) => `${i % 3 === 0 ? "\t" : ""}entry ${i} 😀 value=${(i * 7919) % 1000}`);
    const raw = Buffer.from(lines.join("\n"));
    const edits = [
      { oldText: "entry 59999 😀", newText: "last" },
      { oldText: "entry 3 😀 value=", newText: "third\n" },
      { oldText: "entry 30000 😀 value=0\nentry 30001", newText: "middle" },
      { oldText: "  entry 41001 😀 value=919\n  entry 41002 😀 value=838", newText: "  tolerant\n  two" },
    ];
    const got = await run(raw, edits);
    expect(raw.length).toBeGreaterThan(20 * 65536);
    expect(got.out.equals(Buffer.from(applyEdits(raw.toString("utf8"), edits)))).toBe(true);
    expect(got.diff).toBe(refDiff(raw, edits));
  });

  it("occurrences an earlier edit consumed no longer count, and the one left is found (exact and tolerant)", async () => {
    const raw = Buffer.from("  foo\n  bar\nmid\n  foo\n  bar\nend foo\n");
    const edits = [
      { oldText: "  foo\n  bar\nmid", newText: "one\nmid" },
      { oldText: "foo\n  bar", newText: "two\n  bar" },
      { oldText: "two\nbar", newText: "three\nbar" },
      { oldText: "three\nbar", newText: "four" },
      { oldText: "foo", newText: "five" },
    ];
    const got = await run(raw, edits, { blockBytes: 3 });
    expect(got.out.toString("utf8")).toBe(applyEdits(raw.toString("utf8"), edits));
    expect(got.out.toString("utf8")).toBe("one\nmid\n  four\nend five\n");
    expect(got.diff).toBe(refDiff(raw, edits));
  });

  it("a change too large for the exact diff gets the same coarse hunk as the reference", async () => {
    const lines = Array.from({ length: 3000 }, (_, i) => `old ${i}`);
    const raw = Buffer.from(`${lines.join("\n")}\n`);
    const oldText = lines.slice(200, 1500).join("\n");
    const newText = Array.from({ length: 1300 }, (_, i) => `new ${i}`).join("\n");
    const got = await run(raw, [{ oldText, newText }]);
    expect(got.diff).toBe(refDiff(raw, [{ oldText, newText }]));
    expect(got.diff).toContain("@@ -197,1308 +197,1308 @@");
  });

  it("refuses when the file changes length between its passes", async () => {
    const raw = Buffer.from("alpha\nbeta\n".repeat(100));
    let calls = 0;
    const shrinking: ByteSource = {
      size: raw.length,
      read: async (p, l) => (++calls > 3 ? Buffer.from(raw.subarray(p, p + l - 1)) : Buffer.from(raw.subarray(p, p + l))),
    };
    await expect(
      streamEdit({
        source: shrinking,
        edits: [{ oldText: "beta\nalpha", newText: "x" }],
        path: escapeControls("/t/f.txt"),
        blockBytes: 400,
        write: async () => {},
      }),
    ).rejects.toThrow(/File changed during edit: \/t\/f\.txt/);
  });

  it("200 tolerant edits read the file a bounded number of times, not once per edit", async () => {
    const lines = Array.from({ length: 4000 }, (_, i) => `    line ${i} with some text`);
    const raw = Buffer.from(`${lines.join("\n")}\n`);
    const edits = Array.from({ length: 200 }, (_, k) => ({
      oldText: `line ${k * 20} with some text\n  line ${k * 20 + 1} with some text`,
      newText: `changed ${k}`,
    }));
    const reads = { count: 0 };
    const blockBytes = 4096;
    const result = await streamEdit({ source: memSource(raw, reads), edits, path: escapeControls("/t/f.txt"), blockBytes });
    expect(result.diff).toBe(refDiff(raw, edits));
    const blocks = Math.ceil(raw.length / blockBytes);
    // Two passes (exact, tolerant) plus the cache's single reads of each block, and one look per edit for its line ending.
    expect(reads.count).toBeLessThanOrEqual(3 * blocks + 2 * edits.length);
  });
});

describe("streamEdit: cancellation and fairness", () => {
  const big = Buffer.from(Array.from({ length: 20000 }, (_, i) => `row ${i}`).join("\n"));

  it("stops when the signal aborts, before writing anything", async () => {
    const controller = new AbortController();
    const reads = { count: 0 };
    const source = memSource(big, reads);
    const aborting: ByteSource = {
      size: source.size,
      read: async (p, l) => {
        if (reads.count === 3) controller.abort(new Error("cancelled by test"));
        return source.read(p, l);
      },
    };
    const written: Buffer[] = [];
    const edit = streamEdit({
      source: aborting,
      edits: [{ oldText: "row 19999", newText: "x" }],
      signal: controller.signal,
      blockBytes: 1024,
      write: async (c) => void written.push(c),
    });
    await expect(edit).rejects.toThrow("cancelled by test");
    expect(reads.count).toBeLessThan(6);
    expect(written).toHaveLength(0);
  });

  it("lets other callbacks run while it works", async () => {
    let ticks = 0;
    let running = true;
    const tick = (): void => {
      ticks++;
      if (running) setImmediate(tick);
    };
    setImmediate(tick);
    const before = ticks;
    const edits = Array.from({ length: 50 }, (_, k) => ({ oldText: `  row ${k * 300}`, newText: `r${k}` }));
    await streamEdit({ source: memSource(big), edits, blockBytes: 1024, sliceMs: 0 });
    const during = ticks - before;
    running = false;
    expect(during).toBeGreaterThan(0);
  });

  describe("the line limit of whitespace-tolerant matching", () => {
    it("a line longer than maxLineBytes is matched exactly but not ignoring whitespace, and the error names the limit", async () => {
      const long = `  ${"x".repeat(100)}\n`;
      const bytes = Buffer.from(`short\n${long}end\n`);
      // Exactly: still found.
      const exact = await run(bytes, [{ oldText: "x".repeat(100), newText: "y" }], { maxLineBytes: 64 });
      expect(exact.out.toString()).toBe("short\n  y\nend\n");
      // Only by ignoring the indentation: the long line takes no part.
      await expect(run(bytes, [{ oldText: `\t${"x".repeat(100)}\nend`, newText: "z" }], { maxLineBytes: 64 })).rejects.toThrow(
        /^Could not find exact match for edit:\n[\s\S]*lines over 64 bytes are matched only exactly/,
      );
      // Under the limit the same edit matches.
      const tolerant = await run(bytes, [{ oldText: `\t${"x".repeat(100)}\nend`, newText: "z" }], { maxLineBytes: 1024 });
      expect(tolerant.out.toString()).toBe("short\n  z\n");
    });
  });
});

describe("streamEdit writes the result in few large writes (issue 28 row 12)", () => {
  /** Runs the edits with a spy for `write`: how many writes, and what they wrote together. */
  async function spied(raw: Buffer, edits: EditOperation[], writeBytes?: number, failAt?: number) {
    const sizes: number[] = [];
    const chunks: Buffer[] = [];
    const result = await streamEdit({
      source: memSource(raw),
      edits,
      writeBytes,
      write: async (chunk) => {
        if (sizes.length === failAt) throw new Error("disk full (test)");
        sizes.push(chunk.length);
        chunks.push(Buffer.from(chunk));
      },
    });
    return { sizes, out: Buffer.concat(chunks), result };
  }

  // 100,000 replacements in a 400 KB file: one write per piece was 200,000 writes.
  const lf = "k x\n".repeat(100_000);

  it("a replaceAll of 100,000 occurrences is written in at most two writes per buffer, whatever the pieces", async () => {
    for (const writeBytes of [4096, undefined]) {
      const { sizes, out, result } = await spied(Buffer.from(lf), [{ oldText: "x", newText: "yy", replaceAll: true }], writeBytes);
      expect(result.counts).toEqual([100_000]);
      expect(out.toString()).toBe(lf.replaceAll("x", "yy"));
      expect(result.bytesWritten).toBe(out.length);
      const capacity = writeBytes ?? WRITE_BYTES;
      expect(sizes.length).toBeLessThanOrEqual(2 * Math.ceil(out.length / capacity) + 1);
      expect(Math.max(...sizes)).toBeLessThanOrEqual(capacity);
    }
  });

  it("the same in a CRLF file, where each replacement's line break is written as CRLF", async () => {
    const crlf = "k x\r\n".repeat(100_000);
    const { sizes, out } = await spied(Buffer.from(crlf), [{ oldText: "x\n", newText: "y\nz\n", replaceAll: true }], 8192);
    expect(out.toString()).toBe(crlf.replaceAll("x\r\n", "y\r\nz\r\n"));
    expect(sizes.length).toBeLessThanOrEqual(2 * Math.ceil(out.length / 8192) + 1);
  });

  it("long unchanged stretches and a text longer than the buffer come out whole and in order", async () => {
    const raw = Buffer.from(`${"a".repeat(100_000)}\nMID\n${"b".repeat(50_000)}\nEND\n`);
    const big = "n".repeat(20_000);
    const { sizes, out } = await spied(
      raw,
      [
        { oldText: "MID", newText: big },
        { oldText: "END", newText: "fin" },
      ],
      4096,
    );
    expect(out.toString()).toBe(raw.toString().replace("MID", big).replace("END", "fin"));
    expect(sizes.length).toBeLessThanOrEqual(2 * Math.ceil(out.length / 4096) + 1);
  });

  it("a write that fails fails the edit with its error, after the writes before it", async () => {
    await expect(spied(Buffer.from(lf), [{ oldText: "x", newText: "yy", replaceAll: true }], 4096, 3)).rejects.toThrow("disk full (test)");
  });
});

describe("streamEdit hands a long unchanged start to copyPrefix (a kernel copy)", () => {
  const lines = (from: number, n: number, ending: string) =>
    Array.from({ length: n }, (_, i) => `line ${from + i} of the file`).join(ending) + ending;

  async function withPrefix(raw: Buffer, edits: EditOperation[]) {
    const chunks: Buffer[] = [];
    const prefixes: number[] = [];
    // When the copy was started ahead, counted in bytes written by then (it must come before any write).
    const aheads: number[] = [];
    // Where the output was ended by the source's rest left in place (the copy ahead holds it at the same offsets).
    const rests: number[] = [];
    const result = await streamEdit({
      source: memSource(raw),
      edits,
      write: async (chunk) => void chunks.push(Buffer.from(chunk)),
      copyAhead: () => void aheads.push(chunks.length),
      keepRest: async (from) => {
        if (aheads.length === 0 || Buffer.concat(chunks).length !== from) return false;
        rests.push(from);
        chunks.push(Buffer.from(raw.subarray(from)));
        return true;
      },
      // What a sink's kernel copy puts first: the source's first `length` bytes.
      copyPrefix: async (length) => {
        if (chunks.length > 0) throw new Error("copyPrefix after a write");
        prefixes.push(length);
        chunks.push(Buffer.from(raw.subarray(0, length)));
      },
    });
    return { out: Buffer.concat(chunks), prefixes, aheads, rests, result };
  }

  it("an edit three quarters in: the start up to the edited bytes is copied, the rest written, CRLF kept", async () => {
    const raw = Buffer.from(lines(0, 120_000, "\r\n"));
    const target = "line 90000 of the file";
    const { out, prefixes, result } = await withPrefix(raw, [{ oldText: target, newText: "changed\nline" }]);
    expect(out.toString()).toBe(raw.toString().replace(target, "changed\r\nline"));
    expect(prefixes).toEqual([raw.indexOf(target)]);
    expect(result.bytesWritten).toBe(out.length);
  });

  it("an edit near the start of a large file: the copy started ahead still gives the bytes before it", async () => {
    const raw = Buffer.from(lines(0, 120_000, "\n"));
    const { out, prefixes, aheads } = await withPrefix(raw, [{ oldText: "line 100 of", newText: "row 100 of" }]);
    expect(aheads).toEqual([0]);
    expect(prefixes).toEqual([raw.indexOf("line 100 of")]);
    expect(out.toString()).toBe(raw.toString().replace("line 100 of", "row 100 of"));
  });

  it("edits that change no length in total leave the rest after the last one to the copy; others write it", async () => {
    const raw = Buffer.from(lines(0, 120_000, "\r\n"));
    const shorter = { oldText: "line 50000 of", newText: "line 50000 o" };
    const longer = { oldText: "line 70000 of", newText: "line 70000 off" };
    const endOf = (text: string) => raw.indexOf(text) + text.length;
    const cases = [
      { edits: [{ oldText: "line 50000 of", newText: "LINE 50000 of" }], rests: [endOf("line 50000 of")] },
      { edits: [shorter, longer], rests: [endOf("line 70000 of")] },
      { edits: [longer], rests: [] },
    ];
    for (const { edits, rests } of cases) {
      const done = await withPrefix(raw, edits);
      const expected = edits.reduce((text, e) => text.replace(e.oldText, e.newText), raw.toString());
      expect(done.rests).toEqual(rests);
      expect(done.out.toString()).toBe(expected);
      expect(done.result.bytesWritten).toBe(Buffer.byteLength(expected));
    }
  });

  it("a file under 1 MiB is neither copied ahead nor copied: the whole file is written", async () => {
    const raw = Buffer.from(lines(0, 20_000, "\n"));
    expect(raw.length).toBeLessThan(1024 * 1024);
    const target = "line 19000 of";
    const { out, prefixes, aheads } = await withPrefix(raw, [{ oldText: target, newText: "row 19000 of" }]);
    expect(aheads).toEqual([]);
    expect(prefixes).toEqual([]);
    expect(out.toString()).toBe(raw.toString().replace(target, "row 19000 of"));
  });
});
