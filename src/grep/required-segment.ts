/**
 * A run of ASCII classes every match of a regex source must contain (SPEC §10, §23), for an
 * expression that may match characters past ASCII and holds no required literal: in
 * `[A-Z]\w+\s[0-9]{4,5}` every match holds four digits in a row. Such a run matches a line's
 * Latin-1 view wherever it matches its text (its characters are ASCII, one byte each), so a
 * search for it over the view finds every line to test, lines past ASCII included, without
 * telling those lines apart first. Conservative as required-literal.ts: anything not understood
 * ends a run, and an alternation at the top level gives none.
 */
import { classEnd, escapeEnd, quantifierOf, skipNested } from "./regex-source.js";

/** A required run: its source, and how rare a match of it is in text (the sum of its atoms' ranks). */
export interface Segment {
  source: string;
  rarity: number;
}

// Repetitions of an atom written out one by one in a run's source, at most.
const SPELT_OUT = 16;

interface Atom {
  text: string;
  min: number;
}

// Escapes of one ASCII character or an ASCII class (\s, \S, \W, \D may match past ASCII; \b is no character).
const ASCII_ESCAPE = /^[dwntrfv]$|^[^A-Za-z0-9_]$/;

/** The end (exclusive) of an ASCII-only class opening at `start`, or -1 for another class (negated, or naming a character past ASCII). */
function asciiClassEnd(source: string, start: number): number {
  if (source[start + 1] === "^") return -1;
  for (let i = start + 1; i < source.length; i++) {
    const c = source[i] as string;
    if (c > "\x7f") return -1;
    if (c === "\\") {
      if (!ASCII_ESCAPE.test(source[i + 1] ?? "") && source[i + 1] !== "b") return -1;
      i++;
    } else if (c === "]") return i + 1;
  }
  return -1;
}

/** The runs of ASCII atoms every match of `source` holds, each atom at its least count. */
function segments(source: string): Atom[][] {
  const runs: Atom[][] = [];
  let run: Atom[] = [];
  const end = (): void => {
    if (run.length > 0) runs.push(run);
    run = [];
  };
  for (let i = 0; i < source.length; ) {
    const c = source[i] as string;
    if (c === "|") return [];
    let next = i + 1;
    let atom: string | undefined;
    if (c === "[") {
      const close = asciiClassEnd(source, i);
      if (close > 0) atom = source.slice(i, close);
      const whole = classEnd(source, i);
      next = whole > 0 ? whole : source.length;
    } else if (c === "\\") {
      next = escapeEnd(source, i);
      if (ASCII_ESCAPE.test(source[i + 1] ?? "") && next === i + 2) atom = source.slice(i, next);
    } else if (c === "(") {
      next = skipNested(source, i);
    } else if (c < "\x80" && !"^$.*+?{}[]()".includes(c)) {
      atom = c;
    }
    const q = quantifierOf(source, next);
    i = next + (q?.length ?? 0);
    const min = q?.min ?? 1;
    const variable = q !== undefined && q.max !== q.min;
    if (atom === undefined || min === 0) {
      end();
      continue;
    }
    run.push({ text: atom, min });
    // What follows a repeated atom follows its last repetition only: the run ends, and the next one starts with it.
    if (variable) {
      end();
      run.push({ text: atom, min });
    }
  }
  end();
  return runs;
}

/**
 * The rarest run of ASCII classes every match of `source` holds, rated by `rank` (how common the
 * commonest character an atom matches is, higher for rarer); undefined when there is none.
 */
export function requiredSegment(source: string, flags: string, rank: (atom: RegExp) => number): Segment | undefined {
  let best: Segment | undefined;
  for (const run of segments(source)) {
    let rarity = 0;
    let text = "";
    for (const { text: atom, min } of run) {
      rarity += rank(new RegExp(`^(?:${atom})$`, flags)) * min;
      // Spelt out: V8 skips ahead through text by a run of classes written out (`[0-9][0-9][0-9][0-9]`),
      // not through a counted one (`[0-9]{4}`), which took three times as long over text without it.
      text += min <= SPELT_OUT ? atom.repeat(min) : `(?:${atom}){${min}}`;
    }
    if (best === undefined || rarity > best.rarity) best = { source: text, rarity };
  }
  return best;
}
