/**
 * Whitespace-tolerant matching, written once (lines equal after trim(), newText re-indented by the
 * matched lines' indentation): edits.ts applies it to a text in memory, the streaming engine over
 * a window of lines or over the whole file as it streams by. The KMP automaton over line ids keeps
 * every search linear (the naive window-by-window comparison was O(lines × oldLines)).
 */
import type { NormBlock } from "./source-index.js";

const LF = 0x0a;

export function leadingWhitespace(line: string): string {
  return /^\s*/.exec(line)?.[0] ?? "";
}

/** The KMP automaton of one edit's trimmed old lines. */
export class LinePattern {
  readonly ids = new Map<string, number>();
  readonly pattern: Int32Array;
  readonly border: Int32Array;

  constructor(readonly oldLines: readonly string[]) {
    this.pattern = new Int32Array(oldLines.length);
    oldLines.forEach((line, j) => {
      const key = line.trim();
      let id = this.ids.get(key);
      if (id === undefined) {
        id = this.ids.size;
        this.ids.set(key, id);
      }
      this.pattern[j] = id;
    });
    this.border = new Int32Array(oldLines.length);
    for (let q = 1, k = 0; q < oldLines.length; q++) {
      while (k > 0 && this.pattern[q] !== this.pattern[k]) k = this.border[k - 1] ?? 0;
      if (this.pattern[q] === this.pattern[k]) k++;
      this.border[q] = k;
    }
  }

  /** Advances `matched` by one line of id `id` (-1: in no old line). */
  step(matched: number, id: number): number {
    while (matched > 0 && id !== this.pattern[matched]) matched = this.border[matched - 1] ?? 0;
    return id === this.pattern[matched] ? matched + 1 : matched;
  }

  /** Indexes of every window of `lines` matching (overlapping ones too), in order; `null` lines match nothing. */
  findAllIn(lines: readonly (string | null)[]): number[] {
    const out: number[] = [];
    let matched = 0;
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i];
      matched = this.step(matched, line == null ? -1 : (this.ids.get(line.trim()) ?? -1));
      if (matched < this.pattern.length) continue;
      out.push(i - matched + 1);
      matched = this.border[matched - 1] ?? 0;
    }
    return out;
  }

  /** Index of the first window of `lines` matching, or -1; `null` lines (too long) match nothing. */
  findIn(lines: readonly (string | null)[]): number {
    let matched = 0;
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i];
      matched = this.step(matched, line == null ? -1 : (this.ids.get(line.trim()) ?? -1));
      if (matched === this.pattern.length) return i - matched + 1;
    }
    return -1;
  }
}

/**
 * newText re-indented for a match whose lines have `fileIndents` (their leading whitespace): its first line takes the
 * first matched line's, as upstream's does. A later line written with an old line's indentation takes the indentation
 * of the line that one matched (the line at its place first): the old text may indent with spaces where the file has
 * tabs, or be off by a level, and each line keeps its depth. A depth the old text did not have extends the deepest one
 * it had that it starts with, the rest in tabs where the file indents with them; a line neither extends is verbatim.
 * (Upstream re-based every later line on the first line's indentation: a block whose first line is less indented than
 * the rest lost its nesting, Python's meaning with it.)
 */
export function rebase(fileIndents: readonly string[], oldLines: readonly string[], newText: string): string {
  const oldIndents = oldLines.map(leadingWhitespace);
  const toFile = new Map<string, string>();
  oldIndents.forEach((mine, k) => {
    if ((oldLines[k] ?? "").trim() !== "" && !toFile.has(mine)) toFile.set(mine, fileIndents[k] ?? "");
  });
  const newLines = newText.split("\n");
  const step = spaceStep([...oldIndents, ...newLines.map(leadingWhitespace)]);
  return newLines
    .map((line, j) => {
      const mine = leadingWhitespace(line);
      const body = line.slice(mine.length);
      if (j === 0) return (fileIndents[0] ?? "") + body;
      if (body === "") return line;
      const here = oldIndents[j] === mine && (oldLines[j] ?? "").trim() !== "" ? fileIndents[j] : undefined;
      const known = here ?? toFile.get(mine);
      if (known !== undefined) return known + body;
      let deepest: string | undefined;
      for (const indent of toFile.keys()) if (mine.startsWith(indent) && (deepest === undefined || indent.length > deepest.length)) deepest = indent;
      if (deepest === undefined) return line;
      const into = toFile.get(deepest) ?? "";
      const rest = mine.slice(deepest.length);
      const tabs = into.includes("\t") && /^ +$/.test(rest) ? "\t".repeat(Math.max(1, Math.round(rest.length / step))) : rest;
      return into + tabs + body;
    })
    .join("\n");
}

// The smallest difference between two indentations of spaces only (a level, in spaces), 4 when there are not two.
function spaceStep(indents: readonly string[]): number {
  const depths = [...new Set(indents.filter((i) => /^ *$/.test(i)).map((i) => i.length))].sort((a, b) => a - b);
  let step = 0;
  for (let i = 1; i < depths.length; i++) {
    const d = (depths[i] as number) - (depths[i - 1] as number);
    if (step === 0 || d < step) step = d;
  }
  return step === 0 ? 4 : step;
}

/** A whitespace-tolerant match in original offsets: lines [lineStart, lineEnd) (lineEnd before its LF). */
export interface LineMatch {
  lineStart: number;
  lineEnd: number;
}

/**
 * Finds, in one pass over the blocks, each pattern's first match starting at or after `from`
 * (a line start) that `accept` takes. Lines over `maxLineBytes` match nothing.
 */
export class TolerantFinder {
  readonly found: (LineMatch | undefined)[];
  private readonly matched: number[];
  private readonly lastLine: number[];
  private readonly byLine = new Map<string, [number, number][]>();
  private pending: number;
  private line = 0;
  private readonly starts: number[] = [];
  private partial: Buffer[] = [];
  private partialBytes = 0;
  private lineStart: number;
  private readonly ring: number;

  constructor(
    private readonly patterns: readonly (LinePattern | undefined)[],
    from: number,
    private readonly accept: (i: number, m: LineMatch) => boolean,
    private readonly maxLineBytes: number,
  ) {
    this.lineStart = from;
    this.ring = patterns.reduce((most, p) => Math.max(most, p?.pattern.length ?? 0), 1) + 1;
    this.found = patterns.map(() => undefined);
    this.matched = patterns.map(() => 0);
    this.lastLine = patterns.map(() => -2);
    this.pending = 0;
    patterns.forEach((p, i) => {
      if (p === undefined) return;
      this.pending++;
      for (const [key, id] of p.ids) {
        const list = this.byLine.get(key) ?? [];
        list.push([i, id]);
        this.byLine.set(key, list);
      }
    });
  }

  /** True when every pattern has its match. */
  get done(): boolean {
    return this.pending === 0;
  }

  /** Feeds a block; bytes before the starting offset are skipped. */
  feed(block: NormBlock): void {
    const text = block.norm;
    let from = Math.max(0, this.lineStart - block.normStart);
    for (let at = text.indexOf(LF, from); at !== -1 && !this.done; at = text.indexOf(LF, from)) {
      if (this.partialBytes === 0 && at - from <= this.maxLineBytes) {
        this.endLine(block.normStart + at, text.toString("utf8", from, at));
      } else {
        this.take(text.subarray(from, at));
        this.endLine(block.normStart + at);
      }
      from = at + 1;
    }
    if (from < text.length) this.take(text.subarray(from));
  }

  /** Ends the file's last line (possibly empty). */
  finish(end: number): void {
    if (!this.done) this.endLine(end);
  }

  private take(bytes: Buffer): void {
    if (this.partialBytes <= this.maxLineBytes) this.partial.push(Buffer.from(bytes));
    this.partialBytes += bytes.length;
  }

  private endLine(end: number, whole?: string): void {
    const text = whole ?? (this.partialBytes > this.maxLineBytes ? null : Buffer.concat(this.partial).toString("utf8"));
    const lineStart = this.lineStart;
    this.starts[this.line % this.ring] = lineStart;
    const entries = text === null ? undefined : this.byLine.get(text.trim());
    for (const [i, id] of entries ?? []) {
      const pattern = this.patterns[i];
      if (pattern === undefined || this.found[i] !== undefined) continue;
      const before = this.lastLine[i] === this.line - 1 ? (this.matched[i] ?? 0) : 0;
      const now = pattern.step(before, id);
      this.matched[i] = now;
      this.lastLine[i] = this.line;
      if (now < pattern.pattern.length) continue;
      const first = this.line - now + 1;
      const m: LineMatch = { lineStart: this.lineStartOf(first, lineStart), lineEnd: end };
      if (this.accept(i, m)) {
        this.found[i] = m;
        this.pending--;
      } else {
        this.matched[i] = pattern.border[now - 1] ?? 0;
      }
    }
    this.partial = [];
    this.partialBytes = 0;
    this.line++;
    this.lineStart = end + 1;
  }

  private lineStartOf(line: number, current: number): number {
    return line === this.line ? current : (this.starts[line % this.ring] ?? 0);
  }
}
