/**
 * The runs of plain characters every match of a regex source must contain (SPEC §16): a search
 * looks for one with a byte scan first and runs the expression only on the lines holding it.
 * Conservative by construction: anything it does not understand ends a run (so does any character
 * past ASCII), and an alternation at the top level (where no run is required) gives none.
 */
import { classEnd, escapeEnd, skipNested } from "./regex-source.js";

// A character after `\` that stands for itself (an identity escape of punctuation).
const IDENTITY_ESCAPE = /[^A-Za-z0-9_]/;
const QUANTIFIER_OPTIONAL = new Set(["?", "*", "{"]);

/** The runs of plain characters every match of `source` contains, in order ([] when none is sure). */
export function requiredLiterals(source: string): string[] {
  const runs: string[] = [];
  let run = "";
  const end = (): void => {
    if (run.length > 0) runs.push(run);
    run = "";
  };
  for (let i = 0; i < source.length; ) {
    const c = source[i] as string;
    if (c === "|") return [];
    let lit: string | undefined;
    let next = i + 1;
    if (c === "\\") {
      const e = source[i + 1];
      if (e !== undefined && e < "\x80" && IDENTITY_ESCAPE.test(e)) lit = e;
      next = escapeEnd(source, i);
    } else if (c === "(") {
      // A group's content is not looked into (it may alternate); a top-level `|` after it still counts.
      next = skipNested(source, i);
    } else if (c === "{") {
      // A quantifier's braces (or a literal brace, which dropping only makes the run shorter).
      const close = source.indexOf("}", i);
      next = close < 0 ? i + 1 : close + 1;
    } else if (c === "[") {
      const close = classEnd(source, i);
      next = close < 0 ? source.length : close;
    } else if (!"^$.*+?}])".includes(c) && c < "\x80") lit = c;
    const after = source[next];
    if (lit === undefined) {
      end();
      i = next;
      continue;
    }
    if (after !== undefined && QUANTIFIER_OPTIONAL.has(after)) {
      // The character may be absent: the run ends before it.
      end();
    } else {
      run += lit;
      // `+` keeps it (at least once) but what follows is no longer next to it.
      if (after === "+") end();
    }
    i = next;
  }
  end();
  return runs;
}
