// The pager of a content search (SPEC §10), without workers or files: fed the matching lines of
// each file in walk order, and told the room left, it skips what earlier pages showed, shows what
// fits, and its next offset continues exactly where the page stopped.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Pager } from "../../../src/grep/pager.js";
import { nextOffset } from "../../../src/grep/totals.js";

/** A scanner stand-in: a file of `matches` matching lines, each taking one unit of room, searched as `req` asks. */
function fakeScan(matches: number, req: { skip: number; room: number; forceFirst: boolean }) {
  const skipped = Math.min(req.skip, matches);
  const left = matches - skipped;
  let shown = Math.min(left, req.room);
  if (shown === 0 && left > 0 && req.forceFirst) shown = 1;
  return { skipped, shown, exhausted: shown < left };
}

/** One lines-mode page over `files` (matching lines per file) with `cap` units of room: the global indices of the lines shown, and the next offset. */
function linesPage(files: number[], offset: number, cap: number): { shown: number[]; next: number | undefined } {
  const pager = new Pager("lines", offset);
  const shown: number[] = [];
  let before = 0;
  let used = 0;
  for (const m of files) {
    if (pager.wantsLines(m)) {
      const req = pager.request(Math.max(0, cap - used));
      expect(req.mode).toBe("lines");
      const scan = fakeScan(m, req);
      for (let i = 0; i < scan.shown; i++) shown.push(before + scan.skipped + i);
      used += scan.shown;
      pager.tookLines(scan);
    } else pager.passedLines(m);
    before += m;
  }
  return { shown, next: nextOffset(pager.page(before)) };
}

describe("Pager", () => {
  it("lines mode: skips whole files the offset covers, shows from inside the next, and continues after the cut", () => {
    const pager = new Pager("lines", 4);
    expect(pager.wantsLines(3)).toBe(false);
    pager.passedLines(3);
    expect(pager.wantsLines(0)).toBe(false);
    expect(pager.wantsLines(5)).toBe(true);
    expect(pager.request(100)).toEqual({ mode: "lines", skip: 1, room: 100, forceFirst: true });
    pager.tookLines({ skipped: 1, shown: 2, exhausted: true });
    // After the cut nothing more is shown: files are counted only.
    expect(pager.showing).toBe(false);
    expect(pager.wantsLines(7)).toBe(false);
    expect(pager.request(100)).toMatchObject({ mode: "count", forceFirst: false });
    const page = pager.page(3 + 5 + 7);
    expect(page).toEqual({ mode: "lines", offset: 4, shown: 2, cut: true });
    expect(nextOffset(page)).toBe(6);
  });

  it("lines mode: a cut that lost only trailing context leaves nothing to continue", () => {
    const pager = new Pager("lines", 0);
    pager.tookLines({ skipped: 0, shown: 3, exhausted: true });
    expect(pager.page(3)).toEqual({ mode: "lines", offset: 0, shown: 3, cut: false });
    expect(nextOffset(pager.page(3))).toBeUndefined();
  });

  it("files mode: skips `offset` matching files, then takes entries while they fit, the first regardless", () => {
    const pager = new Pager("files", 1);
    expect(pager.takesFile(10, 100)).toBe(false);
    expect(pager.takesFile(500, 100)).toBe(true);
    expect(pager.takesFile(10, 5)).toBe(false);
    expect(pager.takesFile(1, 100)).toBe(false);
    expect(pager.page(4)).toEqual({ mode: "files", offset: 1, shown: 1, cut: true });
  });

  it("refuses an offset that is not a whole number ≥ 0, naming it", () => {
    expect(() => new Pager("lines", -1)).toThrow(/offset/);
    expect(() => new Pager("files", 1.5)).toThrow(/offset/);
  });

  it("following the next offset from 0 shows every matching line once, in order, for any files and room", () => {
    fc.assert(
      fc.property(fc.array(fc.nat(6), { maxLength: 12 }), fc.integer({ min: 0, max: 7 }), (files, cap) => {
        const total = files.reduce((a, b) => a + b, 0);
        const seen: number[] = [];
        let offset: number | undefined = 0;
        for (let pages = 0; offset !== undefined; pages++) {
          expect(pages).toBeLessThanOrEqual(total);
          const page = linesPage(files, offset, cap);
          seen.push(...page.shown);
          if (page.next !== undefined) expect(page.next).toBe(offset + page.shown.length);
          offset = page.next;
        }
        expect(seen).toEqual(Array.from({ length: total }, (_, i) => i));
      }),
      { numRuns: 400 },
    );
  });
});
