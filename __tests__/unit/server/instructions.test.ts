/**
 * The initialize instructions quote the notices' endings cut from the frames that write
 * them (bounded.ts), so the two can never drift: what a model is told to look for is
 * exactly how the notices it gets end. They say a tool's facts only when it is offered.
 */
import { describe, expect, it } from "vitest";
import { cutFrame, pageFrame, pageNotice, truncationNotice } from "../../../src/kernel/bounded.js";
import { toolsFor } from "../../../src/server/catalog.js";
import { instructions } from "../../../src/server/instructions.js";

const limits = { maxResultChars: 12_345, maxMediaBytes: 1_000 };
const text = instructions(limits, toolsFor(false));
/** Every notice ending quoted in the instructions, in order. */
const quoted = [...text.matchAll(/'((?:Call again|To see the rest)[^'\n]*\])'/g)].map((m) => m[1] ?? "");

describe("the notice forms in the instructions", () => {
  it("are the endings of the two frames, one each", () => {
    expect(quoted).toHaveLength(2);
    expect(pageFrame("A", "B", "T", "N").endsWith(quoted[0] ?? "-")).toBe(true);
    expect(cutFrame("B", "T", "", "<advice>").endsWith(quoted[1] ?? "-")).toBe(true);
  });

  it("are how real notices end: figures put for the letters give the end of what the layer writes", () => {
    const [paged, cut] = quoted;
    expect(pageNotice(50_000, 100_000, 1_234_567).endsWith((paged ?? "-").replace("=N", "=100000"))).toBe(true);
    const advice = "pass a deeper path, or add excludePatterns";
    expect(truncationNotice(50_000, 812_345, advice).endsWith((cut ?? "-").replace("<advice>", advice))).toBe(true);
    const files = truncationNotice(50_000, 812_345, advice, { included: 1, requested: 3 });
    expect(files.endsWith((cut ?? "-").replace("<advice>", advice))).toBe(true);
  });

  it("state the cap in effect", () => {
    expect(text).toContain("over 12,345 characters");
  });
});

describe("the facts said once", () => {
  it("give one glob rule for every walk, and the path rules and change results every tool shares", () => {
    expect(text).toMatch(/Globs \(pattern, excludePatterns\) match the path relative to the directory given, case-sensitive, dotfiles included/);
    expect(text).toMatch(/relative to the first allowed directory in which the path exists \(for a new path, its parent\)/);
    expect(text).toContain("A change returns 'Successfully");
    expect(text).toContain("(list_allowed_directories)");
  });

  it("leave out what concerns tools that are not offered", () => {
    const reading = instructions(limits, toolsFor(true));
    expect(reading).not.toContain("A change returns");
    expect(reading).toContain("Globs");
    const one = instructions(
      limits,
      toolsFor(false).filter((tool) => tool.name === "read_text_file"),
    );
    for (const absent of ["Globs", "read_multiple_files", "list_allowed_directories", "A change returns"]) expect(one).not.toContain(absent);
    expect(one).toContain("over 12,345 characters");
    expect(one).toContain("Symlinks leading outside are refused.");
    for (const name of ["search_files", "directory_tree", "search_file_contents", "replace_in_files"]) {
      expect(
        instructions(
          limits,
          toolsFor(false).filter((tool) => tool.name === name),
        ),
      ).toContain("Globs");
    }
  });
});
