/**
 * Reading a regex's source text (SPEC §10, §16): where a class, group or escape ends and what a
 * quantifier allows, shared by the scanners that derive a faster search from it (required-literal.ts,
 * required-segment.ts, locator.ts). Each reads the source as JavaScript does without the `v` flag.
 */

/** What a quantifier allows: its length in the source (a lazy `?` included) and its least and most counts (max undefined: unbounded). */
export interface Quantifier {
  length: number;
  min: number;
  max: number | undefined;
}

// Sticky, so that it reads at an offset without slicing the source; set lastIndex before each use.
const QUANTIFIER = /(?:([+*?])|\{(\d+)(?:(,)(\d*))?\})\??/y;

/** The quantifier at `at` in `text` (`+ * ? {n} {n,} {n,m}`, lazy or not), or undefined when none opens there (`{`, `{a}`, `{,3}` are characters). */
export function quantifierOf(text: string, at = 0): Quantifier | undefined {
  QUANTIFIER.lastIndex = at;
  const q = QUANTIFIER.exec(text);
  if (q === null) return undefined;
  const length = q[0].length;
  if (q[1] === "+") return { length, min: 1, max: undefined };
  if (q[1] === "*") return { length, min: 0, max: undefined };
  if (q[1] === "?") return { length, min: 0, max: 1 };
  const min = Number(q[2]);
  if (q[3] === undefined) return { length, min, max: min };
  return { length, min, max: q[4] === "" ? undefined : Number(q[4]) };
}

/** The end (exclusive) of the class opening at `start`: the first unescaped `]` after it (JavaScript's `[]` is an empty class), or -1 when none. */
export function classEnd(source: string, start: number): number {
  for (let i = start + 1; i < source.length; i++) {
    if (source[i] === "\\") i++;
    else if (source[i] === "]") return i + 1;
  }
  return -1;
}

/** The end (exclusive) of the group opening at `start`, its escapes and nested groups and classes skipped (the source's length when it does not close). */
export function skipNested(source: string, start: number): number {
  let depth = 0;
  let inClass = false;
  for (let i = start; i < source.length; i++) {
    const c = source[i];
    if (c === "\\") i++;
    else if (inClass) inClass = c !== "]";
    else if (c === "[") inClass = true;
    else if (c === "(") depth++;
    else if (c === ")" && --depth === 0) return i + 1;
  }
  return source.length;
}

// What follows an escape's letter as its operand: \xHH, \uHHHH or \u{…}, \cX, \k<name>, and a
// backreference's or legacy octal escape's further digits.
const OPERAND: Record<string, RegExp> = { x: /^[0-9A-Fa-f]{0,2}/, u: /^(?:\{[0-9A-Fa-f]*\}|[0-9A-Fa-f]{0,4})/, c: /^[A-Za-z]?/, k: /^(?:<[^>]*>)?/ };

/** The end (exclusive) of the escape at `start`: its letter and the operand the letter takes, never read as plain characters. */
export function escapeEnd(source: string, start: number): number {
  const e = source[start + 1] ?? "";
  const operand = e >= "0" && e <= "9" ? /^[0-9]*/ : OPERAND[e];
  const after = start + 2;
  return operand === undefined ? after : after + (operand.exec(source.slice(after))?.[0].length ?? 0);
}
