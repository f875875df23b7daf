import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  boundError,
  runBounded,
  capText,
  cutIndex,
  ERROR_ADVICE,
  formatCount,
  pageNotice,
  renderWindow,
  TextSink,
  truncationNotice,
} from "../src/kernel/bounded.js";

const EMOJI = "\u{1F600}"; // one pair: two UTF-16 code units

const splitsPairAt = (text: string, i: number) =>
  i > 0 && i < text.length && /[\uD800-\uDBFF]/.test(text[i - 1] ?? "") && /[\uDC00-\uDFFF]/.test(text[i] ?? "");

describe("formatCount", () => {
  it.each([
    [0, "0"],
    [999, "999"],
    [1000, "1,000"],
    [50_000, "50,000"],
    [1_234_567, "1,234,567"],
    [1_000_000_000, "1,000,000,000"],
  ])("%d → %s", (n, expected) => {
    expect(formatCount(n)).toBe(expected);
  });
});

describe("notices (exact frames of SPEC §3.1)", () => {
  it("pageable notice keeps offset= plain and separators elsewhere", () => {
    expect(pageNotice(50_000, 100_000, 1_234_567)).toBe(
      "[Result truncated: showing characters 50,001-100,000 of 1,234,567. Call again with offset=100000 to continue.]",
    );
  });

  it("non-pageable notice carries the advice", () => {
    expect(truncationNotice(50_000, 812_345, "pass a deeper path, or add excludePatterns")).toBe(
      "[Result truncated: showing characters 1-50,000 of 812,345. To see the rest, pass a deeper path, or add excludePatterns.]",
    );
  });

  it("read_multiple_files notice counts included files", () => {
    expect(
      truncationNotice(50_000, 1_234_567, "request fewer files, or read the others with read_text_file", {
        included: 12,
        requested: 40,
      }),
    ).toBe(
      "[Result truncated: showing characters 1-50,000 of 1,234,567; 12 of 40 requested files included in full. " +
        "To see the rest, request fewer files, or read the others with read_text_file.]",
    );
  });
});

describe("cutIndex and capText", () => {
  it("leaves text at the cap alone and cuts one over", () => {
    expect(capText("abcde", 5, "x")).toBe("abcde");
    expect(capText("abcdef", 5, "x")).toBe("abcde\n[Result truncated: showing characters 1-5 of 6. To see the rest, x.]");
  });

  it("returns empty text unchanged", () => {
    expect(capText("", 1, "x")).toBe("");
  });

  it("cuts one earlier rather than split a pair", () => {
    const text = `abcd${EMOJI}ef`;
    expect(cutIndex(text, 5)).toBe(4);
    expect(capText(text, 5, "x")).toBe("abcd\n[Result truncated: showing characters 1-4 of 8. To see the rest, x.]");
  });

  it("keeps a leading pair whole when a cap of 1 would keep nothing", () => {
    expect(cutIndex(`${EMOJI}abc`, 1)).toBe(2);
    expect(capText(`${EMOJI}abc`, 1, "x")).toBe(`${EMOJI}\n[Result truncated: showing characters 1-2 of 5. To see the rest, x.]`);
  });

  it("cap of 1 on plain text keeps one character", () => {
    expect(capText("ab", 1, "x")).toBe("a\n[Result truncated: showing characters 1-1 of 2. To see the rest, x.]");
  });

  it("never splits a surrogate pair and keeps an exact prefix (property)", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 60 }), fc.integer({ min: 1, max: 70 }), (text, max) => {
        const cut = cutIndex(text, max);
        expect(splitsPairAt(text, cut)).toBe(false);
        expect(cut).toBeLessThanOrEqual(Math.max(max, 2));
        const capped = capText(text, max, "x");
        if (text.length <= max) expect(capped).toBe(text);
        else {
          expect(capped.startsWith(`${text.slice(0, cut)}\n[Result truncated: showing characters 1-${formatCount(cut)} of `)).toBe(true);
          expect(capped.endsWith(`of ${formatCount(text.length)}. To see the rest, x.]`)).toBe(true);
        }
      }),
    );
  });
});

describe("TextSink", () => {
  it("renders like capText of the joined text, however it was chunked (property)", () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: "grapheme", maxLength: 12 }), { maxLength: 12 }), fc.integer({ min: 1, max: 40 }), (pieces, max) => {
        const sink = new TextSink(max);
        for (const piece of pieces) sink.append(piece);
        const joined = pieces.join("");
        expect(sink.total).toBe(joined.length);
        expect(sink.render("x")).toBe(capText(joined, max, "x"));
      }),
    );
  });

  it("a pair split across appends at the cut is still not split", () => {
    const sink = new TextSink(3);
    sink.append("ab\uD83D");
    sink.append("\uDE00cd");
    expect(sink.render("x")).toBe("ab\n[Result truncated: showing characters 1-2 of 6. To see the rest, x.]");
  });

  it("counts without keeping once full, and refuses appendCount before that", () => {
    const sink = new TextSink(4);
    expect(() => sink.appendCount(3)).toThrow(/before the sink was full/);
    sink.append("abcdefgh");
    expect(sink.full).toBe(true);
    sink.appendCount(1_000_000);
    expect(sink.total).toBe(1_000_008);
    expect(sink.render("x")).toBe("abcd\n[Result truncated: showing characters 1-4 of 1,000,008. To see the rest, x.]");
  });

  it("reports how many parts lie wholly before the cut", () => {
    const sink = new TextSink(10);
    sink.append("aaaa");
    sink.endPart();
    sink.append("\n---\n");
    sink.append("bbbbbbbbbb");
    sink.endPart();
    sink.append("\n---\n");
    sink.append("c");
    sink.endPart();
    expect(sink.render("adv")).toBe(
      "aaaa\n---\nb\n[Result truncated: showing characters 1-10 of 25; 1 of 3 requested files included in full. To see the rest, adv.]",
    );
  });

  it("a part ending exactly at the cut counts as included", () => {
    const sink = new TextSink(4);
    sink.append("abcd");
    sink.endPart();
    sink.append("e");
    sink.endPart();
    expect(sink.render("adv")).toContain("; 1 of 2 requested files included in full.");
  });
});

describe("boundResult and boundError", () => {
  it("caps every text block and leaves other blocks alone", async () => {
    const image = { type: "image" as const, data: "A".repeat(100), mimeType: "image/png" };
    const result = await runBounded(10, "narrow it", async () => ({ content: [{ type: "text", text: "x".repeat(20) }, image] }));
    expect(result.content[0]).toEqual({
      type: "text",
      text: `${"x".repeat(10)}\n[Result truncated: showing characters 1-10 of 20. To see the rest, narrow it.]`,
    });
    expect(result.content[1]).toEqual(image);
  });

  it("renders a window with a notice only when text follows", () => {
    expect(renderWindow({ text: "abc", start: 3, end: 6, total: 10 })).toBe(
      "abc\n[Result truncated: showing characters 4-6 of 10. Call again with offset=6 to continue.]",
    );
    expect(renderWindow({ text: "abc", start: 7, end: 10, total: 10 })).toBe("abc");
    expect(renderWindow({ text: "", start: 12, end: 12, total: 10 })).toBe("");
  });

  it("lends the handler a sink of the cap and lowers window limits to it", async () => {
    let limits: number[] = [];
    const result = await runBounded(10, "narrow it", async (bounds) => {
      limits = [bounds.windowLimit(), bounds.windowLimit(4), bounds.windowLimit(99)];
      bounds.sink.append("y".repeat(25));
      return { streamed: true };
    });
    expect(limits).toEqual([10, 4, 10]);
    expect(result.content[0]).toEqual({
      type: "text",
      text: `${"y".repeat(10)}\n[Result truncated: showing characters 1-10 of 25. To see the rest, narrow it.]`,
    });
  });

  it("shortens a window longer than the cap and continues it at the new end", async () => {
    const result = await runBounded(4, "narrow it", async () => ({ window: { text: "abcdefgh", start: 2, end: 10, total: 12 } }));
    expect(result.content[0]).toEqual({
      type: "text",
      text: "abcd\n[Result truncated: showing characters 3-6 of 12. Call again with offset=6 to continue.]",
    });
  });

  it("turns a thrown error into a capped isError result", async () => {
    const result = await runBounded(8, "narrow it", async () => {
      throw new Error("f".repeat(20));
    });
    expect(result.isError).toBe(true);
    expect(result.content[0]).toEqual({
      type: "text",
      text: `${"f".repeat(8)}\n[Result truncated: showing characters 1-8 of 20. To see the rest, ${ERROR_ADVICE}.]`,
    });
  });

  it("caps error texts as well", () => {
    const result = boundError("e".repeat(30), 8);
    expect(result.isError).toBe(true);
    expect(result.content[0]).toEqual({
      type: "text",
      text: `${"e".repeat(8)}\n[Result truncated: showing characters 1-8 of 30. To see the rest, ${ERROR_ADVICE}.]`,
    });
  });
});
