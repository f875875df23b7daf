/**
 * The initialize instructions describe the notices with the frames that write them
 * (bounded.ts), so the two can never drift: what a model is told to expect is exactly
 * the shape it gets, with letters for the figures.
 */
import { describe, expect, it } from "vitest";
import { cutFrame, endsWithNotice, pageFrame, pageNotice, truncationNotice } from "../src/bounded.js";
import { instructions } from "../src/tools/instructions.js";

const text = instructions({ maxResultChars: 12_345, maxMediaBytes: 1_000 });
/** Every notice form quoted in the instructions, in order. */
const quoted = [...text.matchAll(/'(\[Result truncated: [^'\n]*\])'/g)].map((m) => m[1]);

describe("the notice forms in the instructions", () => {
  it("are exactly the two frames, filled with placeholders", () => {
    expect(quoted).toEqual([pageFrame("A", "B", "T", "B"), cutFrame("B", "T", "", "<advice>")]);
  });

  it("are the shapes of real notices: figures put for the letters give what the layer writes", () => {
    const [paged, cut] = quoted;
    const fill = (form: string | undefined, figures: Record<string, string>) =>
      (form ?? "").replace(/\b[ABT]\b|<advice>/g, (slot) => figures[slot] ?? slot);
    // The pageable form's first B is a formatted count and its offset= B a plain integer.
    const filledPage = fill(paged, { A: "50,001", B: "100,000", T: "1,234,567" }).replace("offset=100,000", "offset=100000");
    expect(filledPage).toBe(pageNotice(50_000, 100_000, 1_234_567));
    const advice = "pass a deeper path, or add excludePatterns";
    expect(fill(cut, { B: "50,000", T: "812,345", "<advice>": advice })).toBe(truncationNotice(50_000, 812_345, advice));
    for (const form of quoted) expect(endsWithNotice(fill(form, { A: "1", B: "2", T: "3", "<advice>": "x" }))).toBe(true);
  });

  it("state the cap in effect", () => {
    expect(text).toContain("over 12,345 characters");
  });
});
