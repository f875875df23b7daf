/**
 * The text search_file_contents shows (SPEC §10): `12:` before a match line
 * and `12-` before a context line (as grep does), `--` between groups of one
 * file that are not adjacent, the file's path once before its groups, a blank
 * line between files, and long lines clipped around their first occurrence.
 */
import { formatCount, isHigh, isLow } from "../kernel/bounded.js";
import type { Shown } from "../kernel/escape.js";

/** Lines longer than this many characters are clipped. */
export const MAX_LINE_CHARS = 500;

/** Marks the side of a line where characters were left out. */
export const CLIP_MARK = "[…]";

/** Separates groups of one file that are not adjacent. */
const GROUP_SEPARATOR = "--";

/**
 * `text` if short, else about `max` characters around index `at`, each cut side marked; never splits a surrogate pair.
 * `cutBefore`: the text is a later piece of its line, so its start is marked as cut too.
 */
export function clipLine(text: string, at: number, max = MAX_LINE_CHARS, cutBefore = false): string {
  if (text.length <= max) return cutBefore ? `${CLIP_MARK}${text}` : text;
  let start = Math.max(0, Math.min(at - Math.floor(max / 4), text.length - max));
  let end = start + max;
  if (start > 0 && isLow(text.charCodeAt(start))) start++;
  if (end < text.length && isHigh(text.charCodeAt(end - 1))) end--;
  return `${start > 0 || cutBefore ? CLIP_MARK : ""}${text.slice(start, end)}${end < text.length ? CLIP_MARK : ""}`;
}

/** One shown match line. */
function matchLine(lineNo: number, text: string): string {
  return `${lineNo}:${text}`;
}

/** One shown context line. */
function contextLine(lineNo: number, text: string): string {
  return `${lineNo}-${text}`;
}

/** A files-mode entry: the file, its matching lines and their occurrences. */
export function fileEntry(displayPath: Shown, matchingLines: number, occurrences: number): string {
  const lines = `${formatCount(matchingLines)} matching line${matchingLines === 1 ? "" : "s"}`;
  return `${displayPath}: ${lines}, ${formatCount(occurrences)} occurrence${occurrences === 1 ? "" : "s"}`;
}

/** The name a file's lines are shown under by a scan that does not know where they will fall: its text then opens with an empty line. */
export const UNNAMED = "" as Shown;

/** The text a lines scan made under UNNAMED, as a scan under `displayPath` (after a blank line when `blankFirst`) makes it. */
export function named(text: string, displayPath: Shown, blankFirst: boolean): string {
  return `${blankFirst ? "\n" : ""}${displayPath}${text}`;
}

/** A context line ready to show, with its number. */
export interface ContextEntry {
  lineNo: number;
  text: string;
}

/**
 * The lines-mode text of one file, kept within `room` characters: a match is
 * added whole with its header and leading context, or not at all (then
 * `exhausted` turns true and nothing more is added).
 */
export class LinesOutput {
  private readonly parts: string[] = [];
  private used = 0;
  private lastShown = 0;
  /** True once something did not fit; nothing is added after that. */
  exhausted = false;
  /** Match lines added. */
  shown = 0;

  /**
   * @param room characters this file may add
   * @param blankFirst whether a blank line separates this file from text before it
   * @param forceFirst add the first match even past `room`, so a result is never empty of matches
   */
  constructor(
    private readonly displayPath: Shown,
    private readonly room: number,
    private readonly blankFirst: boolean,
    private forceFirst: boolean,
  ) {}

  /** Last line number shown in this file, 0 before any. */
  get lastLine(): number {
    return this.lastShown;
  }

  /** Adds a match line after its leading context; false (and exhausted) when it does not fit. */
  match(lineNo: number, text: string, before: readonly ContextEntry[]): boolean {
    const lines: string[] = [];
    const first = before[0]?.lineNo ?? lineNo;
    if (this.lastShown === 0) {
      if (this.blankFirst) lines.push("");
      lines.push(this.displayPath);
    } else if (first > this.lastShown + 1) lines.push(GROUP_SEPARATOR);
    for (const c of before) lines.push(contextLine(c.lineNo, c.text));
    lines.push(matchLine(lineNo, text));
    if (!this.add(lines, this.forceFirst)) return false;
    this.forceFirst = false;
    this.shown++;
    this.lastShown = lineNo;
    return true;
  }

  /** Adds a trailing context line; false (and exhausted) when it does not fit. */
  context(lineNo: number, text: string): boolean {
    if (!this.add([contextLine(lineNo, text)], false)) return false;
    this.lastShown = lineNo;
    return true;
  }

  /** The text added, each line ending in `\n`. */
  text(): string {
    return this.parts.join("");
  }

  private add(lines: string[], force: boolean): boolean {
    if (this.exhausted) return false;
    const piece = `${lines.join("\n")}\n`;
    if (this.used + piece.length > this.room && !force) {
      this.exhausted = true;
      return false;
    }
    this.parts.push(piece);
    this.used += piece.length;
    return true;
  }
}
