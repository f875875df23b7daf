/**
 * A faster expression to find candidate lines with (SPEC §10, §23): a regex that opens with a
 * repeated character (`[a-z]+ [0-9]{4}`, `\w+\s`) is tried by the engine at every position of
 * every run of that character, and each try runs to the run's end and back: 12 times slower than
 * the same expression opening with the character once. Every match of `C+S` (`C*S`, `C{n,m}S`)
 * holds a match of `CS` (`S`, `C{n}S`): the run's last characters and what follows, in the same
 * line. So the shorter expression finds every line the whole one matches, and each line it finds
 * is tested with the whole one.
 */
import { classEnd, quantifierOf } from "./regex-source.js";

// An escape that stands for one character or one class of them, with no operand after its letter.
const SIMPLE_ESCAPE = /^[dDwWsSntrfv]$|^[^A-Za-z0-9]$/;
const PLAIN = /^[\x20-\x7e]$/;

/** The end (exclusive) of the one-character atom `source` opens with, or -1 when it opens otherwise. */
function atomEnd(source: string): number {
  const c = source[0] ?? "";
  if (c === "[") return classEnd(source, 0);
  if (c === "\\") return SIMPLE_ESCAPE.test(source[1] ?? "") ? 2 : -1;
  if (c === "." || (PLAIN.test(c) && !"^$()|*+?{}]".includes(c))) return 1;
  return -1;
}

/** Whether `source` holds a `|` outside every group and class (the locator would then cover only the first branch). */
function alternatesAtTop(source: string): boolean {
  let depth = 0;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === "\\") i++;
    else if (c === "[") {
      const end = classEnd(source, i);
      if (end < 0) return true;
      i = end - 1;
    } else if (c === "(") depth++;
    else if (c === ")") depth--;
    else if (c === "|" && depth === 0) return true;
  }
  return false;
}

/**
 * The shorter expression that finds the lines `source` matches, when `source` opens with a repeated
 * one-character atom (see above); undefined when it does not, or when it alternates at the top.
 */
export function locatorSource(source: string): string | undefined {
  const atom = atomEnd(source);
  if (atom <= 0) return undefined;
  const q = quantifierOf(source, atom);
  // An exact count ({n}) opens with a fixed run already, and an optional atom (?) with no run: nothing to gain.
  if (q === undefined || q.max === q.min || q.max === 1) return undefined;
  const rest = source.slice(atom + q.length);
  if (rest === "" || "*+?{".includes(rest[0] as string) || alternatesAtTop(source)) return undefined;
  const { min } = q;
  const head = source.slice(0, atom);
  return `${min === 0 ? "" : min === 1 ? head : `${head}{${min}}`}${rest}`;
}

/**
 * For an expression anchored at line starts (`^[a-z]+$`): a line feed followed by the rest, which V8
 * finds by looking for the line feed, where it tried `^` at every position (twice the time). It
 * finds every line the expression may match but the first of the text it searches. Undefined for
 * another expression, or one that alternates at the top (`^a|b`).
 */
export function lineStartSource(source: string): string | undefined {
  if (source[0] !== "^") return undefined;
  const rest = source.slice(1);
  if (rest === "" || "*+?{".includes(rest[0] as string) || alternatesAtTop(source)) return undefined;
  return `\\n${rest}`;
}
