/**
 * Where each edit applies in the document as edited so far (SPEC §15: exactly one place, or the edit
 * is refused). The first pass over the original counted every edit's occurrences and kept the first
 * few; an occurrence in the edited text is either one of those, still intact, or overlaps a range an
 * earlier edit changed, so only small windows around the edits are searched. The whole document is
 * scanned again only when that does not settle it (many kept ones edited away), for a replaceAll,
 * and to name the lines of an ambiguous edit.
 */
import type { Patch, PatchedDoc } from "./patched-doc.js";
import type { SourceIndex } from "./source-index.js";
import { leadingWhitespace, type LineMatch, type LinePattern, TolerantFinder } from "./tolerant.js";

const LF = 0x0a;
// Every edit looks into the window of every patch before it: a kept window costs an indexOf, and a pause (a clock
// read and an await) after each one was most of a call of thousands of edits.
const PAUSE_EVERY = 256;

/** Where an edit's old text is in the document: none, exactly one (`at`), or several. */
export type Placement<T> = { kind: "none" } | { kind: "one"; at: T } | { kind: "many" };

function placement<T>(found: readonly T[]): Placement<T> {
  if (found.length === 0) return { kind: "none" };
  return found.length === 1 ? { kind: "one", at: found[0] as T } : { kind: "many" };
}

/** A scan of the whole document: the number of matches and the first few. */
export interface Scanned<T> {
  found: T[];
  count: number;
}

/** What the first pass over the original found of one edit's old text: how many, and the first few. */
export interface FirstPass<T> {
  count: number;
  kept: readonly T[];
}

/** A whitespace-tolerant match in document offsets, with each of its lines' indentation (for newText's). */
export interface DocLineMatch {
  start: number;
  end: number;
  indents: string[];
}

// The leading whitespace of each line of `lines`, whole lines joined by line feeds.
const indentsOf = (lines: Buffer): string[] => lines.toString("utf8").split("\n").map(leadingWhitespace);

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
    /** Original exact occurrences per edit (undefined: empty old text). */
    readonly exactHints: readonly (FirstPass<number> | undefined)[],
    /** Original tolerant matches per edit (null: not looked for, because it had an exact occurrence). */
    readonly lineHints: readonly (FirstPass<LineMatch> | null | undefined)[],
    /** Lines longer than this take part only in exact matches. */
    readonly maxLineBytes: number,
    private readonly pause: () => Promise<void>,
    /** Longest old text in bytes: the reach of the exact windows. */
    private readonly radius: number,
    /** Most lines in an old text, plus one: the reach of the line windows. */
    private readonly around: number,
  ) {}

  /** Replaces each document range [at, at + length) of the sorted, disjoint `starts` (every window is rebuilt). */
  replaceEach(starts: readonly number[], length: number, text: Buffer): void {
    this.doc.replaceEach(starts, length, text);
  }

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

  /**
   * Where the exact old text of edit `k` is in the document now: none, one (its offset) or several.
   * Every occurrence is either an original one still intact (the first pass kept the first few and
   * counted all) or one that overlaps an edited range (found in that range's window); when the kept
   * ones do not settle it, the document is scanned.
   */
  async exact(k: number, pattern: Buffer): Promise<Placement<number>> {
    const { doc } = this;
    const size = pattern.length;
    const hint = this.exactHints[k];
    const seen = new Set<number>();
    for (const p of hint?.kept ?? []) if (doc.exactIntact(p, size)) seen.add(doc.toDoc(p));
    const starts = doc.docStarts();
    const length = doc.length;
    for (let i = 0; i < doc.patches.length && seen.size < 2; i++) {
      const ds = starts[i] ?? 0;
      const p = doc.patches[i] as Patch;
      const w = this.exactWindows.get(p) ?? (await this.exactWindow(p, ds, length));
      for (let at = w.text.indexOf(pattern); at !== -1; at = w.text.indexOf(pattern, at + 1)) seen.add(ds + w.from + at);
      if (i % PAUSE_EVERY === PAUSE_EVERY - 1) await this.pause();
    }
    if (seen.size < 2 && (hint === undefined || hint.count > hint.kept.length)) {
      return placement((await this.scanExact(pattern, false, 2, 2)).found);
    }
    return placement([...seen].sort((a, b) => a - b));
  }

  /**
   * For replaceAll: the document offsets of edit `k`'s occurrences, left to right and disjoint, from every
   * original one still intact (when the first pass kept them all) and those in the windows of the edited
   * ranges; undefined when the first pass did not keep them all (the caller scans the document).
   */
  async allExact(k: number, pattern: Buffer): Promise<number[] | undefined> {
    const hint = this.exactHints[k];
    if (hint === undefined || hint.count > hint.kept.length) return undefined;
    const { doc } = this;
    const size = pattern.length;
    const seen = new Set<number>();
    // One sweep of the sorted originals against the sorted patches: intact ones, and where they are now.
    let j = 0;
    let shift = 0;
    for (const p of hint.kept) {
      for (let q = doc.patches[j]; q !== undefined && q.end <= p; q = doc.patches[++j]) shift += q.text.length - (q.end - q.start);
      const next = doc.patches[j];
      if (next === undefined || next.start >= p + size) seen.add(p + shift);
    }
    const starts = doc.docStarts();
    const length = doc.length;
    for (let i = 0; i < doc.patches.length; i++) {
      const ds = starts[i] ?? 0;
      const p = doc.patches[i] as Patch;
      const w = this.exactWindows.get(p) ?? (await this.exactWindow(p, ds, length));
      for (let at = w.text.indexOf(pattern); at !== -1; at = w.text.indexOf(pattern, at + 1)) seen.add(ds + w.from + at);
      if (i % PAUSE_EVERY === PAUSE_EVERY - 1) await this.pause();
    }
    const out: number[] = [];
    for (const at of [...seen].sort((a, b) => a - b)) if (out.length === 0 || at >= (out[out.length - 1] as number) + size) out.push(at);
    return out;
  }

  /**
   * `pattern`'s occurrences in the document, left to right (`disjoint`: each after the end of the one
   * before, as replaceAll takes them): their number, counted up to `stop`, and the first `keep` offsets.
   */
  async scanExact(pattern: Buffer, disjoint: boolean, keep: number, stop = Number.POSITIVE_INFINITY): Promise<Scanned<number>> {
    const found: number[] = [];
    const overlap = pattern.length - 1;
    let count = 0;
    let next = 0;
    // Searches `buf` (document bytes from `base`) for occurrences starting before `until`.
    const search = (buf: Buffer, base: number, until: number): void => {
      for (
        let at = buf.indexOf(pattern, Math.max(0, next - base));
        at !== -1 && base + at < until && count < stop;
        at = buf.indexOf(pattern, next - base)
      ) {
        count++;
        if (found.length < keep) found.push(base + at);
        next = base + at + (disjoint ? pattern.length : 1);
      }
    };
    // The last bytes before the current piece, for occurrences that straddle two pieces; the pieces
    // themselves are searched where they lie (a copy of each cost a second 600 MiB of garbage).
    let tail = Buffer.alloc(0);
    let tailAt = 0;
    for await (const { at, bytes } of this.doc.pieces()) {
      if (tail.length > 0) {
        const joint = Buffer.concat([tail, bytes.subarray(0, overlap)]);
        search(joint, tailAt, at);
      }
      search(bytes, at, Number.POSITIVE_INFINITY);
      if (count >= stop) break;
      const joined = bytes.length >= overlap ? bytes : Buffer.concat([tail, bytes]);
      tail = Buffer.from(joined.subarray(Math.max(0, joined.length - overlap)));
      tailAt = at + bytes.length - tail.length;
      await this.pause();
    }
    return { found, count };
  }

  /** Like `exact`, for the whitespace-tolerant matches of edit `k`'s old lines. */
  async tolerant(k: number, pattern: LinePattern): Promise<Placement<DocLineMatch>> {
    const { doc } = this;
    const hint = this.lineHints[k];
    if (hint === null || hint === undefined) return placement((await this.scanLines(pattern, 2, 2)).found);
    const seen = new Map<number, DocLineMatch>();
    for (const m of hint.kept) {
      if (!doc.linesIntact(m.lineStart, m.lineEnd)) continue;
      const indents = indentsOf(await this.index.range(m.lineStart, m.lineEnd));
      const start = doc.toDoc(m.lineStart);
      seen.set(start, { start, end: doc.toDoc(m.lineEnd), indents });
    }
    const starts = doc.docStarts();
    for (let i = 0; i < doc.patches.length && seen.size < 2; i++) {
      const ds = starts[i] ?? 0;
      const w = await this.lineWindowOf(doc.patches[i] as Patch, ds);
      for (const at of pattern.findAllIn(w.texts)) {
        const first = w.lines[at];
        const last = w.lines[at + pattern.pattern.length - 1];
        if (first === undefined || last === undefined) continue;
        const indents = w.lines.slice(at, at + pattern.pattern.length).map((line) => leadingWhitespace(line.text ?? ""));
        seen.set(ds + first.start, { start: ds + first.start, end: ds + last.end, indents });
      }
      await this.pause();
    }
    if (seen.size < 2 && hint.count > hint.kept.length) return placement((await this.scanLines(pattern, 2, 2)).found);
    return placement([...seen.values()].sort((a, b) => a.start - b.start));
  }

  /** The document's whitespace-tolerant matches of `pattern`, left to right (overlapping ones too): counted up to `stop`, the first `keep` kept. */
  async scanLines(pattern: LinePattern, keep: number, stop = Number.POSITIVE_INFINITY): Promise<Scanned<DocLineMatch>> {
    const { doc } = this;
    const length = doc.length;
    const kept: LineMatch[] = [];
    let count = 0;
    const finder = new TolerantFinder(
      [pattern],
      0,
      (_, m) => {
        count++;
        if (kept.length < keep) kept.push(m);
        return count >= stop;
      },
      this.maxLineBytes,
    );
    for await (const { at, bytes } of doc.pieces()) {
      finder.feed({ index: 0, rawStart: at, normStart: at, lineStart: 0, norm: bytes, crlf: [] });
      if (finder.done) break;
      await this.pause();
    }
    finder.finish(length);
    const found: DocLineMatch[] = [];
    for (const m of kept) found.push({ start: m.lineStart, end: m.lineEnd, indents: indentsOf(await doc.slice(m.lineStart, m.lineEnd)) });
    return { found, count };
  }

  /** The 1-based line numbers of the sorted document offsets `offsets`, in one pass up to the last. */
  async lineNumbers(offsets: readonly number[]): Promise<number[]> {
    const out: number[] = [];
    let line = 1;
    let k = 0;
    for await (const { at, bytes } of this.doc.pieces()) {
      if (k >= offsets.length) break;
      let from = 0;
      while (k < offsets.length && (offsets[k] as number) < at + bytes.length) {
        const stop = (offsets[k] as number) - at;
        for (let lf = bytes.indexOf(LF, from); lf !== -1 && lf < stop; lf = bytes.indexOf(LF, lf + 1)) line++;
        from = Math.max(from, stop);
        out.push(line);
        k++;
      }
      for (let lf = bytes.indexOf(LF, from); lf !== -1; lf = bytes.indexOf(LF, lf + 1)) line++;
      await this.pause();
    }
    while (out.length < offsets.length) out.push(line);
    return out;
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
