/**
 * Whitespace-tolerant matching, written once (lines equal after trim(), newText re-based on the
 * matched line's indentation): edits.ts applies it to a text in memory, the streaming engine over
 * a window of lines or over the whole file as it streams by. The KMP automaton over line ids keeps
 * every search linear (the naive window-by-window comparison was O(lines × oldLines)).
 */
import type { NormBlock } from "./source-index.js";

const LF = 0x0a;

function leadingWhitespace(line: string): string {
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
 * newText re-indented for a match whose first line is `firstLine`: its first line takes that line's
 * indentation; a later one is re-based only when both it and the old line at its place are indented
 * (upstream's rule), otherwise taken verbatim.
 */
export function rebase(firstLine: string, oldLines: readonly string[], newText: string): string {
  const baseIndent = leadingWhitespace(firstLine);
  return newText
    .split("\n")
    .map((line, j) => {
      if (j === 0) return baseIndent + line.trimStart();
      const oldIndent = leadingWhitespace(oldLines[j] ?? "");
      const newIndent = leadingWhitespace(line);
      if (oldIndent === "" || newIndent === "") return line;
      return baseIndent + " ".repeat(Math.max(0, newIndent.length - oldIndent.length)) + line.trimStart();
    })
    .join("\n");
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
