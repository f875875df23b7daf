/**
 * The streaming edit engine (issue 10, SPEC §12) against the in-memory reference
 * (edits.ts applyEdits + createUnifiedDiff): same text, same diff, line endings kept.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { applyEdits, createUnifiedDiff, fenceDiff, normalizeLineEndings, type EditOperation } from "../src/edits.js";
import { streamEdit, type ByteSource, type StreamEditOptions } from "../src/editing/stream.js";

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
    path: "/t/f.txt",
    write: async (chunk) => void chunks.push(Buffer.from(chunk)),
    ...extra,
  });
  return { out: Buffer.concat(chunks), diff: result.diff, bytesWritten: result.bytesWritten };
}

type Outcome = { text: string; diff: string } | { error: string };

function reference(bytes: Buffer, edits: EditOperation[]): Outcome {
  const original = normalizeLineEndings(bytes.toString("utf8"));
  try {
    const text = applyEdits(original, edits);
    return { text, diff: fenceDiff(createUnifiedDiff(original, text, "/t/f.txt")) };
  } catch (err) {
    return { error: (err as Error).message };
  }
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

describe("streamEdit equals the in-memory reference", () => {
  it("LF files: byte-identical text and diff, any block size", async () => {
    await fc.assert(
      fc.asyncProperty(textArb(ENDINGS.lf), fc.array(stepArb, { maxLength: 6 }), fc.integer({ min: 1, max: 40 }), async (text, steps, blockBytes) => {
        const bytes = Buffer.from(text);
        const edits = buildEdits(text, steps);
        const ref = reference(bytes, edits);
        if ("error" in ref) {
          await expect(run(bytes, edits, { blockBytes })).rejects.toThrow(ref.error);
          return;
        }
        const got = await run(bytes, edits, { blockBytes });
        expect(got.out.toString("utf8")).toBe(ref.text);
        expect(got.diff).toBe(ref.diff);
      }),
      { numRuns: Number(process.env.RUNS ?? 400) },
    );
  });

  it("CRLF and mixed files: same text once normalized, same diff", async () => {
    await fc.assert(
      fc.asyncProperty(textArb(ENDINGS.mixed), fc.array(stepArb, { maxLength: 6 }), fc.integer({ min: 1, max: 40 }), async (text, steps, blockBytes) => {
        const bytes = Buffer.from(text);
        const edits = buildEdits(text, steps);
        const ref = reference(bytes, edits);
        if ("error" in ref) {
          await expect(run(bytes, edits, { blockBytes })).rejects.toThrow(ref.error);
          return;
        }
        const got = await run(bytes, edits, { blockBytes });
        // Lone CRs next to a line break make "normalized once" depend on where the edits fell;
        // any run of CRs before an LF compares as a plain LF.
        const flat = (t: string) => t.replace(/\r+\n/g, "\n");
        expect(flat(got.out.toString("utf8"))).toBe(flat(ref.text));
        expect(got.diff).toBe(ref.diff);
      }),
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
      fc.asyncProperty(longTextArb, fc.array(stepArb, { minLength: 1, maxLength: 10 }), fc.constantFrom(16, 64, 4096), async (text, steps, blockBytes) => {
        const bytes = Buffer.from(text);
        const edits = buildEdits(text, steps);
        const ref = reference(bytes, edits);
        if ("error" in ref) {
          await expect(run(bytes, edits, { blockBytes })).rejects.toThrow(ref.error);
          return;
        }
        const got = await run(bytes, edits, { blockBytes });
        expect(got.out.toString("utf8")).toBe(ref.text);
        expect(got.diff).toBe(ref.diff);
      }),
      { numRuns: Number(process.env.RUNS ?? 150) },
    );
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
        if ("error" in ref) throw new Error(ref.error);
        const got = await run(bytes, edits, { blockBytes });
        expect(got.out.toString("utf8")).toBe(ref.text);
        expect(got.diff).toBe(ref.diff);
      }),
      { numRuns: Number(process.env.RUNS ?? 100) },
    );
  });
});
