/**
 * edit_file's placement rule (issue 17, SPEC §15) against the naive model of support/edit-model.ts:
 * an oldText in more than one place (exact, or whitespace-tolerant when there is no exact one) is
 * refused naming edits[i], the count and the first ten lines; replaceAll replaces every exact
 * occurrence and the result says how many. Through the streaming engine (any block size, LF and
 * CRLF) and through the built server under both strategies, where a refusal writes nothing.
 *
 * Regression guard: an oldText that occurred twice was silently applied to the first occurrence.
 */
import { readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUnifiedDiff, EditRefused, type EditRefusal, fenceDiff, normalizeLineEndings, type EditOperation } from "../../../src/editing/index.js";
import { MAX_REPLACEMENTS, streamEdit, type ByteSource } from "../../../src/editing/stream.js";
import { escapeControls } from "../../../src/kernel/escape.js";
import { modelCountLines, modelEdits } from "../../support/edit-model.js";
import { STRATEGIES, tempDir } from "../../support/fixtures.js";
import { call, inProcess, textOf, type InProcess } from "../../support/in-process.js";

const memSource = (bytes: Buffer): ByteSource => ({
  size: bytes.length,
  read: async (position, length) => Buffer.from(bytes.subarray(position, position + length)),
});

async function engine(
  bytes: Buffer,
  edits: EditOperation[],
  blockBytes?: number,
  withDiff = true,
): Promise<{ out: string; diff: string; lines?: { first: number; last: number } }> {
  const chunks: Buffer[] = [];
  const result = await streamEdit({
    source: memSource(bytes),
    edits,
    path: escapeControls("/t/f.txt"),
    blockBytes,
    withDiff,
    write: async (chunk) => void chunks.push(Buffer.from(chunk)),
  });
  return { out: Buffer.concat(chunks).toString("utf8"), diff: result.diff, lines: result.lines };
}

// Few, short snippets, so texts repeat them and edits hit several places.
const SNIPPETS = ["ab", "a", "b", "  ab", "\tb a", "x", "ab ab", ""];

const linesArb = fc.array(
  fc.array(fc.constantFrom(...SNIPPETS), { minLength: 1, maxLength: 3 }).map((p) => p.join("")),
  {
    minLength: 1,
    maxLength: 14,
  },
);

const editArb = fc.record({
  kind: fc.nat(9),
  a: fc.nat(),
  b: fc.nat(),
  replaceAll: fc.boolean(),
  newText: fc.array(fc.constantFrom(...SNIPPETS, "\n", "\n  "), { maxLength: 4 }).map((p) => p.join("")),
});

/** An edit aimed at the text as the earlier edits left it (by the model): a slice, re-indented lines, a snippet, a miss. */
function aimed(text: string, step: { kind: number; a: number; b: number; replaceAll: boolean; newText: string }): EditOperation {
  let oldText: string;
  if (step.kind < 4 && text.length > 0) {
    const from = step.a % text.length;
    oldText = text.slice(from, from + 1 + (step.b % 6));
  } else if (step.kind < 7) {
    const lines = text.split("\n");
    const from = step.a % lines.length;
    oldText = lines
      .slice(from, from + 1 + (step.b % 2))
      .map((l) => ` ${l.trim()}`)
      .join("\n");
  } else if (step.kind < 9) {
    oldText = SNIPPETS[step.a % (SNIPPETS.length - 1)] as string;
  } else {
    oldText = "zz";
  }
  return { oldText, newText: step.newText, ...(step.replaceAll && oldText !== "" ? { replaceAll: true } : {}) };
}

function buildEdits(lf: string, steps: readonly Parameters<typeof aimed>[1][]): EditOperation[] {
  const edits: EditOperation[] = [];
  let text = lf;
  for (const step of steps) {
    const edit = aimed(text, step);
    edits.push(edit);
    const next = modelEdits(text, [edit]);
    if ("error" in next) break;
    text = next.text;
  }
  return edits;
}

describe("streamEdit against the naive placement model", () => {
  it("LF and CRLF files, any block size: the same text, counts and diff, or the same refusal", async () => {
    await fc.assert(
      fc.asyncProperty(
        linesArb,
        fc.boolean(),
        fc.boolean(),
        fc.array(editArb, { minLength: 1, maxLength: 5 }),
        fc.integer({ min: 1, max: 24 }),
        async (lines, crlf, finalBreak, steps, blockBytes) => {
          const lf = lines.join("\n") + (finalBreak ? "\n" : "");
          const raw = crlf ? lf.replace(/\n/g, "\r\n") : lf;
          const edits = buildEdits(lf, steps);
          const model = modelEdits(lf, edits);
          if ("error" in model) {
            await expect(engine(Buffer.from(raw), edits, blockBytes)).rejects.toThrow(model.error);
            return;
          }
          const got = await engine(Buffer.from(raw), edits, blockBytes);
          // A CRLF file (one with a line break) stays CRLF, inside the replaced text too.
          const hasBreak = lf.includes("\n");
          expect(got.out).toBe(crlf && hasBreak ? model.text.replace(/\n/g, "\r\n") : model.text);
          expect(got.diff).toBe(modelCountLines(model.counts, edits) + fenceDiff(createUnifiedDiff(lf, model.text, "/t/f.txt")));
        },
      ),
      { numRuns: Number(process.env.RUNS ?? 500) },
    );
  });

  it("without the diff: the same text, and the changed lines cover every difference from the original", async () => {
    await fc.assert(
      fc.asyncProperty(linesArb, fc.boolean(), fc.array(editArb, { minLength: 1, maxLength: 5 }), async (lines, crlf, steps) => {
        const lf = `${lines.join("\n")}\n`;
        const raw = crlf ? lf.replace(/\n/g, "\r\n") : lf;
        const edits = buildEdits(lf, steps);
        const model = modelEdits(lf, edits);
        if ("error" in model) return;
        const got = await engine(Buffer.from(raw), edits, 8, false);
        expect(got.diff).toBe("");
        expect(normalizeLineEndings(got.out)).toBe(model.text);
        if (model.text === lf) return;
        const { first, last } = got.lines!;
        const before = lf.split("\n");
        const after = model.text.split("\n");
        // Outside lines first..last the edited file is the original: its head and its tail.
        expect(after.slice(0, first - 1)).toEqual(before.slice(0, first - 1));
        const tail = after.length - last;
        expect(tail).toBeGreaterThanOrEqual(0);
        expect(after.slice(last)).toEqual(before.slice(before.length - tail));
      }),
      { numRuns: Number(process.env.RUNS ?? 300) },
    );
  });

  it("a replaceAll that replaced one occurrence says so too", async () => {
    const got = await engine(Buffer.from("a\nold\nb\n"), [{ oldText: "old", newText: "new", replaceAll: true }]);
    expect(got.diff.startsWith("edits[0]: replaced 1 occurrence\n\n```diff\n")).toBe(true);
  });

  it("the README chore: one call replaces all 5 occurrences and says so", async () => {
    const raw = Buffer.from("# old-name\n\nInstall old-name, then run old-name.\n\n## old-name API\nold-name!\n");
    const got = await engine(raw, [{ oldText: "old-name", newText: "new-name", replaceAll: true }]);
    expect(got.out).toBe(raw.toString().replaceAll("old-name", "new-name"));
    expect(got.diff.startsWith("edits[0]: replaced 5 occurrences\n\n```diff\n")).toBe(true);
  });

  it("names the count and the first ten lines of a repeated oldText, and the lines are where it is", async () => {
    const lines = Array.from({ length: 30 }, (_, i) => (i % 2 === 0 ? `item ${i} TODO` : `item ${i}`));
    const raw = Buffer.from(`${lines.join("\n")}\n`);
    await expect(engine(raw, [{ oldText: "TODO", newText: "done" }], 64)).rejects.toThrow(
      "edits[0].oldText occurs in 15 places (lines 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, …) in the text as the edits before it left it; " +
        "nothing was written. Add surrounding lines to oldText until it is unique, or pass replaceAll: true",
    );
  });

  it("counts overlapping occurrences as different places", async () => {
    await expect(engine(Buffer.from("aaa\n"), [{ oldText: "aa", newText: "b" }])).rejects.toThrow("occurs in 2 places (lines 1, 1)");
    // replaceAll takes them left to right without overlap.
    expect((await engine(Buffer.from("aaaa\n"), [{ oldText: "aa", newText: "b", replaceAll: true }])).out).toBe("bb\n");
  });

  it("an edit that creates a second occurrence makes a later edit ambiguous; one that removes it makes it unique", async () => {
    const raw = Buffer.from("alpha\nbeta\ngamma\n");
    await expect(
      engine(raw, [
        { oldText: "gamma", newText: "beta two" },
        { oldText: "beta", newText: "B" },
      ]),
    ).rejects.toThrow("edits[1].oldText occurs in 2 places (lines 2, 3)");
    const raw2 = Buffer.from("beta one\nbeta two\n");
    const got = await engine(raw2, [
      { oldText: "beta one", newText: "first" },
      { oldText: "beta", newText: "B" },
    ]);
    expect(got.out).toBe("first\nB two\n");
  });

  it("past the kept first occurrences: with most consumed by an earlier edit, the last one is found by a scan", async () => {
    const lines = Array.from({ length: 40 }, (_, i) => `row ${i} key`);
    const raw = Buffer.from(`${lines.join("\n")}\nlast key\n`);
    const edits = [
      { oldText: " key\n", newText: "\n", replaceAll: true },
      { oldText: "last", newText: "final key" },
      { oldText: "key", newText: "KEY" },
    ];
    const got = await engine(raw, edits, 32);
    const model = modelEdits(raw.toString(), edits);
    if ("error" in model) throw new Error(model.error);
    expect(got.out).toBe(model.text);
    expect(got.out.endsWith("last\nfinal KEY\n")).toBe(false);
    expect(got.out.endsWith("final KEY\n")).toBe(true);
  });

  it("a whitespace-tolerant oldText with two candidates is refused, with one it applies", async () => {
    const raw = Buffer.from("  if (x) {\n    run();\n  }\n\tif (x) {\n\t  run();\n\t}\n");
    await expect(engine(raw, [{ oldText: "if (x) {\nrun();", newText: "go();" }])).rejects.toThrow(
      "edits[0].oldText has no exact match and matches 2 places (lines 1, 4) ignoring whitespace",
    );
    const got = await engine(Buffer.from("  if (x) {\n    run();\n  }\n"), [{ oldText: "if (x) {\nrun();", newText: "go();" }]);
    expect(got.out).toBe("  go();\n  }\n");
  });

  it("replaceAll refuses an oldText with no exact occurrence (no tolerant fallback) and an empty one", async () => {
    const raw = Buffer.from("  a b\n");
    await expect(engine(raw, [{ oldText: "a  b", newText: "c", replaceAll: true }])).rejects.toThrow(
      "edits[0].oldText has no exact occurrence in the text as the edits before it left it (replaceAll matches exactly",
    );
    await expect(engine(raw, [{ oldText: "", newText: "c", replaceAll: true }])).rejects.toThrow("edits[0].oldText is empty");
  });

  it(`refuses a call past ${MAX_REPLACEMENTS} replacements, naming the limit, and takes one at it`, async () => {
    const raw = Buffer.from("x\n".repeat(MAX_REPLACEMENTS));
    const at = await engine(raw, [{ oldText: "x", newText: "y", replaceAll: true }]);
    expect(at.out).toBe("y\n".repeat(MAX_REPLACEMENTS));
    expect(at.diff.startsWith(`edits[0]: replaced ${MAX_REPLACEMENTS.toLocaleString("en-US")} occurrences`)).toBe(true);
    await expect(
      engine(raw, [
        { oldText: "x\nx", newText: "z\nz" },
        { oldText: "x", newText: "y", replaceAll: true },
      ]),
    ).rejects.toThrow("edits[0].oldText occurs in");
    const over = Buffer.from(`${"x\n".repeat(MAX_REPLACEMENTS)}x\n`);
    await expect(engine(over, [{ oldText: "x", newText: "y", replaceAll: true }])).rejects.toThrow(
      `edits[0]: replaceAll would make more than ${MAX_REPLACEMENTS.toLocaleString("en-US")} replacements`,
    );
  }, 60_000);
});

/** The refusal `edits` meet on `raw`, as a value; fails unless the engine refuses with one. */
async function refusalOf(raw: string, edits: EditOperation[]): Promise<EditRefusal> {
  const error = await engine(Buffer.from(raw), edits).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(EditRefused);
  return (error as EditRefused).refusal;
}

describe("an edit's refusals are values (kind and fields), worded once", () => {
  it("not found: the edit, how many there are, its old text and the exact-only line length", async () => {
    expect(
      await refusalOf("alpha\n", [
        { oldText: "alpha", newText: "a" },
        { oldText: "gone", newText: "g" },
      ]),
    ).toEqual({
      kind: "notFound",
      edit: 1,
      edits: 2,
      oldText: "gone",
      maxLineBytes: expect.any(Number),
    });
  });

  it("ambiguous: the count and the first lines, exact or only ignoring whitespace", async () => {
    expect(await refusalOf("x\ny\nx\n", [{ oldText: "x", newText: "z" }])).toEqual({
      kind: "ambiguous",
      edit: 0,
      count: 2,
      lines: [1, 3],
      tolerant: false,
    });
    expect(await refusalOf("  a b\n\ta b\n", [{ oldText: "a b\n", newText: "c\n" }])).toMatchObject({ kind: "ambiguous", count: 2, tolerant: false });
    expect(await refusalOf(" a\n  b\n\ta\n b\n", [{ oldText: "a\nb", newText: "c" }])).toEqual({
      kind: "ambiguous",
      edit: 0,
      count: 2,
      lines: [1, 3],
      tolerant: true,
    });
  });

  it("replaceAll: no occurrence, an empty old text, and past the limit with what was left of it", async () => {
    expect(await refusalOf("a\n", [{ oldText: "b", newText: "c", replaceAll: true }])).toEqual({ kind: "noOccurrence", edit: 0 });
    expect(await refusalOf("a\n", [{ oldText: "", newText: "c", replaceAll: true }])).toEqual({ kind: "emptyOldText", edit: 0 });
    const over = `${"x\n".repeat(MAX_REPLACEMENTS)}x\n`;
    expect(await refusalOf(over, [{ oldText: "x", newText: "y", replaceAll: true }])).toEqual({
      kind: "tooMany",
      edit: 0,
      left: MAX_REPLACEMENTS,
      limit: MAX_REPLACEMENTS,
    });
  }, 60_000);

  it("a lone surrogate names the edit and the field", async () => {
    expect(await refusalOf("a\n", [{ oldText: "a", newText: "\uD800" }])).toEqual({ kind: "loneSurrogate", edit: 0, field: "newText" });
  });
});

describe.each(STRATEGIES)("edit_file placement through the built server (%s strategy)", (name) => {
  let root: string;
  let remove: () => Promise<void>;
  let s: InProcess;
  const edit = (file: string, edits: EditOperation[], dryRun = false) => call(s.client, "edit_file", { path: file, edits, dryRun });

  beforeAll(async () => {
    ({ dir: root, remove } = await tempDir("bfs-ambiguity-"));
    s = await inProcess([root], { strategy: name });
  });
  afterAll(async () => {
    await s.close();
    await remove();
  });

  it("refuses an ambiguous oldText writing nothing, then replaceAll replaces every one and says how many", async () => {
    const file = path.join(root, "README.md");
    const before = "old-name\r\nuse old-name\r\nold-name old-name\r\nend old-name\r\n";
    await writeFile(file, before);
    const refused = await edit(file, [{ oldText: "old-name", newText: "new-name" }]);
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain("edits[0].oldText occurs in 5 places (lines 1, 2, 3, 3, 4)");
    expect(textOf(refused)).toContain("replaceAll: true");
    expect(await readFile(file, "utf8")).toBe(before);
    const dry = await edit(file, [{ oldText: "old-name", newText: "new-name", replaceAll: true }], true);
    expect(textOf(dry).startsWith("edits[0]: replaced 5 occurrences\n\n")).toBe(true);
    expect(await readFile(file, "utf8")).toBe(before);
    const done = await edit(file, [{ oldText: "old-name", newText: "new-name", replaceAll: true }]);
    expect(done.isError).toBeFalsy();
    expect(textOf(done).startsWith("edits[0]: replaced 5 occurrences\n\n")).toBe(true);
    expect(await readFile(file, "utf8")).toBe(before.replaceAll("old-name", "new-name"));
    expect((await readdir(root)).filter((n) => n.startsWith(".bfs-"))).toEqual([]);
  });

  it("diff: false answers with one summary line, dryRun too, and writes what the diff would have shown", async () => {
    const file = path.join(root, "summary.txt");
    await writeFile(file, "one\r\nold two\r\nthree\r\nold four\r\n");
    const args = { path: file, edits: [{ oldText: "old", newText: "new\nline", replaceAll: true }], diff: false };
    const dry = await call(s.client, "edit_file", { ...args, dryRun: true });
    expect(textOf(dry)).toBe(`Dry run, nothing written: would edit ${file}: 1 edit, 2 replacements, lines 2-6\nedits[0]: replaced 2 occurrences`);
    const done = await call(s.client, "edit_file", args);
    expect(textOf(done)).toBe(`Successfully edited ${file}: 1 edit, 2 replacements, lines 2-6\nedits[0]: replaced 2 occurrences`);
    expect(await readFile(file, "utf8")).toBe("one\r\nnew\r\nline two\r\nthree\r\nnew\r\nline four\r\n");
    const plain = await call(s.client, "edit_file", { path: file, edits: [{ oldText: "three", newText: "3" }], diff: false });
    expect(textOf(plain)).toBe(`Successfully edited ${file}: 1 edit, 1 replacement, lines 4-4`);
  });

  it("a later edit of the same call is refused when an earlier one made its text repeat; nothing of the call is written", async () => {
    const file = path.join(root, "two.txt");
    await writeFile(file, "alpha\nbeta\n");
    const result = await edit(file, [
      { oldText: "alpha", newText: "beta-ish" },
      { oldText: "beta", newText: "B" },
    ]);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("edits[1].oldText occurs in 2 places (lines 1, 2)");
    expect(await readFile(file, "utf8")).toBe("alpha\nbeta\n");
  });

  it("agrees with the model on generated files and edit lists (the file afterwards, or untouched on refusal)", async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(linesArb, fc.boolean(), fc.array(editArb, { minLength: 1, maxLength: 4 }), async (lines, crlf, steps) => {
        const lf = `${lines.join("\n")}\n`;
        const raw = crlf ? lf.replace(/\n/g, "\r\n") : lf;
        const file = path.join(root, `gen-${n++}.txt`);
        await writeFile(file, raw);
        const edits = buildEdits(lf, steps);
        const model = modelEdits(lf, edits);
        const result = await edit(file, edits);
        const after = await readFile(file, "utf8");
        if ("error" in model) {
          expect(result.isError).toBe(true);
          expect(textOf(result)).toContain(model.error.split("\n")[0]);
          expect(after).toBe(raw);
          return;
        }
        expect(result.isError).toBeFalsy();
        expect(textOf(result).startsWith(modelCountLines(model.counts, edits))).toBe(true);
        expect(normalizeLineEndings(after)).toBe(model.text);
        if (crlf) expect(after.replace(/\r\n/g, "")).not.toContain("\n");
      }),
      { numRuns: Number(process.env.RUNS ?? 40) },
    );
  }, 120_000);
});

describe("a replaceAll's result stays bounded", () => {
  it("past the diff's read budget the diff stops and says how many regions it left out, the text still whole", async () => {
    const block = (i: number) => `${Array.from({ length: 19 }, (_, j) => `filler line ${i}.${j} with some words`).join("\n")}\nmark ${i}\n`;
    const lf = Array.from({ length: 9000 }, (_, i) => block(i)).join("");
    const got = await engine(Buffer.from(lf), [{ oldText: "mark", newText: "MARK", replaceAll: true }]);
    expect(got.out).toBe(lf.replaceAll("mark", "MARK"));
    const note =
      /\[The diff leaves out ([\d,]+) changed regions from line ([\d,]+) on \(it reads at most [\d,]+ bytes\); the edits apply there too\]\n$/.exec(
        got.diff,
      );
    expect(note).not.toBeNull();
    const left = Number((note?.[1] ?? "").replace(/,/g, ""));
    const shown = got.diff.split("\n").filter((l) => l.startsWith("+MARK")).length;
    expect(left).toBeGreaterThan(0);
    expect(shown + left).toBe(9000);
    // The first region left out is the one after the last shown.
    expect(Number((note?.[2] ?? "").replace(/,/g, ""))).toBe(20 * (shown + 1));
  });

  it("an edit inside one 20 MiB line is written whole; the diff is left out, naming the budget", async () => {
    const half = "word ".repeat(2 * 1024 * 1024);
    const lf = `${half}NEEDLE ${half}\n`;
    const got = await engine(Buffer.from(lf), [{ oldText: "NEEDLE", newText: "found" }]);
    expect(got.out.length).toBe(lf.length - 1);
    expect(got.out).toBe(lf.replace("NEEDLE", "found"));
    expect(got.diff).toMatch(/\[The diff leaves out 1 changed region from line 1 on \(it reads at most 8,388,608 bytes\)/);
  });
});
