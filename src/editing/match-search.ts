/**
 * Where each edit applies in the document as edited so far. Speculation: the first occurrence in
 * the original file (found for all edits in one pass) is still the answer unless an earlier edit
 * touched it or created an earlier one; the second case can only happen near an edited range, so
 * only small windows around the edits are searched, and the file is scanned again (from that
 * occurrence on, for that edit alone) only when an earlier edit destroyed the occurrence.
 */
import { ExactFinder } from "./exact.js";
import type { Patch, PatchedDoc } from "./patched-doc.js";
import type { SourceIndex } from "./source-index.js";
import { type LineMatch, type LinePattern, TolerantFinder } from "./tolerant.js";

const LF = 0x0a;

/** A whitespace-tolerant match in document offsets, with its first line (for the indentation). */
export interface DocLineMatch {
  start: number;
  end: number;
  firstLine: string;
}

interface WindowLine {
  start: number;
  end: number;
  text: string | null;
}

/** Text around a patch, kept while no edit touches it; offsets are relative to the patch's start. */
interface ExactWindow {
  from: number;
  to: number;
  text: Buffer;
}

interface LineWindow {
  from: number;
  to: number;
  lines: WindowLine[];
  texts: (string | null)[];
}

/** Finds edits' matches in a PatchedDoc, reusing what the first pass over the file found. */
export class EditSearch {
  // Every edit looks around every patch before its candidate; the text there changes only when an
  // edit touches it, so each patch's windows are read once and reused by the edits after.
  private readonly exactWindows = new WeakMap<Patch, ExactWindow>();
  private readonly lineWindows = new WeakMap<Patch, LineWindow>();

  constructor(
    private readonly doc: PatchedDoc,
    private readonly index: SourceIndex,
    /** First original exact occurrence per edit (undefined: none; null: not looked for). */
    readonly exactHints: (number | undefined | null)[],
    /** First original tolerant match per edit (undefined: none; null: not looked for). */
    readonly lineHints: (LineMatch | undefined | null)[],
    /** Lines longer than this take part only in exact matches. */
    readonly maxLineBytes: number,
    private readonly pause: () => Promise<void>,
    /** Longest old text in bytes: the reach of the exact windows. */
    private readonly radius: number,
    /** Most lines in an old text, plus one: the reach of the line windows. */
    private readonly around: number,
  ) {}

  /** Replaces document bytes [x, y) and forgets the windows that saw them. */
  replace(x: number, y: number, text: Buffer): void {
    const { doc } = this;
    const starts = doc.docStarts();
    doc.patches.forEach((p, i) => {
      const ds = starts[i] ?? 0;
      const seen = (w: { from: number; to: number } | undefined): boolean => w !== undefined && ds + w.from - 1 <= y && ds + w.to >= x;
      if (seen(this.exactWindows.get(p))) this.exactWindows.delete(p);
      if (seen(this.lineWindows.get(p))) this.lineWindows.delete(p);
    });
    doc.replace(x, y, text);
  }

  private async exactWindow(p: Patch, ds: number, length: number): Promise<ExactWindow> {
    let w = this.exactWindows.get(p);
    if (w === undefined) {
      const from = Math.max(0, ds - this.radius);
      const to = Math.min(length, ds + p.text.length + this.radius);
      w = { from: from - ds, to: to - ds, text: await this.doc.slice(from, to) };
      this.exactWindows.set(p, w);
    }
    return w;
  }

  private async lineWindowOf(p: Patch, ds: number): Promise<LineWindow> {
    let w = this.lineWindows.get(p);
    if (w === undefined) {
      const lines = await this.lineWindow(ds - 1, ds + p.text.length + 1, this.around);
      for (const line of lines) {
        line.start -= ds;
        line.end -= ds;
      }
      const from = lines[0]?.start ?? 0;
      w = { from, to: lines[lines.length - 1]?.end ?? from, lines, texts: lines.map((l) => l.text) };
      this.lineWindows.set(p, w);
    }
    return w;
  }

  /** Document offset of the first exact occurrence of `pattern` (edit `k`), or undefined. */
  async exact(k: number, pattern: Buffer): Promise<number | undefined> {
    const { doc } = this;
    const size = pattern.length;
    let p = this.exactHints[k] ?? undefined;
    if (this.exactHints[k] === null) p = await this.rescanExact(pattern, 0);
    while (p !== undefined && !doc.exactIntact(p, size)) p = await this.rescanExact(pattern, p + 1);
    this.exactHints[k] = p;
    let best = p === undefined ? undefined : doc.toDoc(p);
    const starts = doc.docStarts();
    const length = doc.length;
    for (let i = 0; i < doc.patches.length; i++) {
      const ds = starts[i] ?? 0;
      const w = await this.exactWindow(doc.patches[i] as Patch, ds, length);
      if (best !== undefined && ds + w.from >= best) break;
      const at = w.text.indexOf(pattern);
      if (at !== -1 && (best === undefined || ds + w.from + at < best)) best = ds + w.from + at;
      await this.pause();
    }
    return best;
  }

  private async rescanExact(pattern: Buffer, from: number): Promise<number | undefined> {
    const finder = new ExactFinder([pattern], from, (_, at) => this.doc.exactIntact(at, pattern.length));
    for await (const block of this.index.blocksFrom(from)) {
      finder.feed(block);
      if (finder.done) break;
      await this.pause();
    }
    return finder.found[0];
  }

  /** The first whitespace-tolerant match of `pattern` (edit `k`), or undefined. */
  async tolerant(k: number, pattern: LinePattern): Promise<DocLineMatch | undefined> {
    const { doc } = this;
    let m = this.lineHints[k] ?? undefined;
    if (this.lineHints[k] === null) m = await this.rescanLines(pattern, 0, -1);
    while (m !== undefined && !doc.linesIntact(m.lineStart, m.lineEnd)) m = await this.rescanLines(pattern, m.lineStart, m.lineStart);
    this.lineHints[k] = m;
    let best: DocLineMatch | undefined;
    if (m !== undefined) {
      const lines = await this.index.range(m.lineStart, m.lineEnd);
      const firstEnd = lines.indexOf(LF);
      const firstLine = lines.toString("utf8", 0, firstEnd === -1 ? lines.length : firstEnd);
      best = { start: doc.toDoc(m.lineStart), end: doc.toDoc(m.lineEnd), firstLine };
    }
    const starts = doc.docStarts();
    for (let i = 0; i < doc.patches.length; i++) {
      const ds = starts[i] ?? 0;
      const w = await this.lineWindowOf(doc.patches[i] as Patch, ds);
      if (best !== undefined && ds + w.from >= best.start) break;
      const at = pattern.findIn(w.texts);
      const first = w.lines[at];
      const last = w.lines[at + pattern.pattern.length - 1];
      if (first !== undefined && last !== undefined && (best === undefined || ds + first.start < best.start)) {
        best = { start: ds + first.start, end: ds + last.end, firstLine: first.text ?? "" };
      }
      await this.pause();
    }
    return best;
  }

  private async rescanLines(pattern: LinePattern, from: number, after: number): Promise<LineMatch | undefined> {
    const accept = (_: number, m: LineMatch): boolean => m.lineStart > after && this.doc.linesIntact(m.lineStart, m.lineEnd);
    const finder = new TolerantFinder([pattern], from, accept, this.maxLineBytes);
    for await (const block of this.index.blocksFrom(from)) {
      finder.feed(block);
      if (finder.done) break;
      await this.pause();
    }
    finder.finish(this.index.normSize);
    return finder.found[0];
  }

  /**
   * Whole document lines from `around` lines before the line holding `x` to `around` lines after
   * the one holding `y`; a line cut off by the length limit is null (it matches nothing).
   */
  private async lineWindow(x: number, y: number, around: number): Promise<WindowLine[]> {
    const { doc } = this;
    const length = doc.length;
    const cap = (around + 1) * this.maxLineBytes;
    x = Math.max(0, Math.min(length, x));
    y = Math.max(x, Math.min(length, y));
    let start = x;
    let seen = 0;
    for (let step = 4096; start > 0 && seen <= around && x - start < cap; step *= 2) {
      const from = Math.max(0, start - step, x - cap);
      const chunk = await doc.slice(from, start);
      let at = chunk.length;
      while (seen <= around && at > 0) {
        const found = chunk.lastIndexOf(LF, at - 1);
        if (found === -1) break;
        at = found;
        seen++;
      }
      start = seen > around ? from + at + 1 : from;
    }
    let end = y;
    seen = 0;
    for (let step = 4096; end < length && seen <= around && end - y < cap; step *= 2) {
      const to = Math.min(length, end + step, y + cap);
      const chunk = await doc.slice(end, to);
      let at = -1;
      while (seen <= around && (at = chunk.indexOf(LF, at + 1)) !== -1) seen++;
      end = seen > around ? end + at + 1 : to;
    }
    const text = await doc.slice(start, end);
    const cutStart = start > 0 && (await doc.slice(start - 1, start))[0] !== LF;
    const cutEnd = end < length && text[text.length - 1] !== LF;
    const lines: WindowLine[] = [];
    let from = 0;
    for (let at = text.indexOf(LF); ; at = text.indexOf(LF, from)) {
      const stop = at === -1 ? text.length : at;
      const long = stop - from > this.maxLineBytes;
      lines.push({ start: start + from, end: start + stop, text: long ? null : text.toString("utf8", from, stop) });
      if (at === -1) break;
      from = at + 1;
      if (from === text.length && end < length) break;
    }
    if (cutStart && lines[0] !== undefined) lines[0].text = null;
    const last = lines[lines.length - 1];
    if (cutEnd && last !== undefined) last.text = null;
    return lines;
  }
}
