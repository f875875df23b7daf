/**
 * Git's wildmatch pattern language, matched in time bounded by the text and
 * pattern lengths (never by backtracking over choices): `*`, `?`, `[...]`
 * classes (ranges, `!`/`^`, POSIX `[:name:]`), `\` escapes, and with
 * `pathname` the `**` of whole path components. Patterns and texts are UTF-8
 * bytes, as git compares them. A `*` stands for any run of items and every
 * other token for exactly one, so the classic greedy algorithm (retry only
 * from the last star) is exact, once per component and once over components.
 */

const LITERAL = 0;
const ANY = 1;
const SET = 2;
const STAR = 3;
const SLASH = 47;

/** One path component's pattern: tokens (kind, and a byte or a set index), and sets of 256 flags. */
interface Segment {
  readonly kinds: Uint8Array;
  readonly values: Uint16Array;
  readonly sets: Uint8Array[];
}

/** What stands for components: one component's pattern, any run of components (`**`), or exactly one component. */
type Part = Segment | "starstar" | "one";

/** A compiled pattern. */
export interface Glob {
  /** With `pathname`: the literal bytes before the first wildcard, compared on their own, as git's match_pathname does. */
  readonly prefix: Uint8Array;
  /** The rest's parts: per component of the text after the prefix. */
  readonly parts: readonly Part[];
  /** Wildcard tokens, the figure costly patterns are refused by. */
  readonly wildcards: number;
  /** Components a text must have at least; exactly this many when `fixed`. */
  readonly minParts: number;
  readonly fixed: boolean;
}

type Token =
  | { kind: typeof LITERAL; byte: number }
  | { kind: typeof ANY }
  | { kind: typeof SET; set: Uint8Array }
  | { kind: typeof STAR; run: number }
  | { kind: "slash" };

// git's own character classes (ctype.c): ASCII only, and "space" without \v and \f.
const between = (lo: number, hi: number) => (c: number) => c >= lo && c <= hi;
const isAlpha = (c: number) => between(65, 90)(c) || between(97, 122)(c);
const isDigit = between(48, 57);
const CLASSES: Record<string, (c: number) => boolean> = {
  alnum: (c) => isAlpha(c) || isDigit(c),
  alpha: isAlpha,
  blank: (c) => c === 32 || c === 9,
  cntrl: (c) => c < 32 || c === 127,
  digit: isDigit,
  graph: between(33, 126),
  lower: between(97, 122),
  print: between(32, 126),
  punct: (c) => between(33, 126)(c) && !isAlpha(c) && !isDigit(c),
  space: (c) => c === 32 || c === 9 || c === 10 || c === 13,
  upper: between(65, 90),
  xdigit: (c) => isDigit(c) || between(65, 70)(c) || between(97, 102)(c),
};

/** The class starting at `p[at]` (just after its `[`): its set and the index after its `]`, or undefined when malformed (git then matches nothing). */
function parseSet(p: Uint8Array, at: number): { set: Uint8Array; next: number } | undefined {
  const set = new Uint8Array(256);
  let i = at;
  const negated = p[i] === 0x21 || p[i] === 0x5e;
  if (negated) i++;
  let prev = 0;
  // As wildmatch.c reads it: the first character is a member even when it is "]".
  for (let first = true; first || p[i] !== 0x5d; first = false) {
    let c = p[i];
    if (c === undefined) return undefined;
    if (c === 0x5c) {
      c = p[++i];
      if (c === undefined) return undefined;
      set[c] = 1;
    } else if (c === 0x2d && prev !== 0 && p[i + 1] !== undefined && p[i + 1] !== 0x5d) {
      let hi = p[++i]!;
      if (hi === 0x5c) {
        const escaped = p[++i];
        if (escaped === undefined) return undefined;
        hi = escaped;
      }
      for (let b = prev; b <= hi; b++) set[b] = 1;
      c = 0;
    } else if (c === 0x5b && p[i + 1] === 0x3a) {
      let end = i + 2;
      while (p[end] !== undefined && p[end] !== 0x5d) end++;
      if (p[end] === undefined) return undefined;
      if (end - (i + 2) < 1 || p[end - 1] !== 0x3a) {
        // No ":]": the "[" is an ordinary member and reading goes on from the ":".
        set[0x5b] = 1;
        prev = 0x5b;
        i++;
        continue;
      }
      const test = CLASSES[Buffer.from(p.subarray(i + 2, end - 1)).toString("latin1")];
      if (test === undefined) return undefined;
      for (let b = 0; b < 128; b++) if (test(b)) set[b] = 1;
      i = end;
      c = 0;
    } else {
      set[c] = 1;
    }
    prev = c;
    i++;
  }
  if (negated) for (let b = 0; b < 256; b++) set[b] = set[b] === 1 ? 0 : 1;
  // With WM_PATHNAME a class never matches "/", and basenames hold none.
  set[SLASH] = 0;
  return { set, next: i + 1 };
}

function tokenize(p: Uint8Array): Token[] | undefined {
  const tokens: Token[] = [];
  for (let i = 0; i < p.length; ) {
    const c = p[i]!;
    if (c === 0x5c) {
      const escaped = p[i + 1];
      // A trailing backslash makes wildmatch give up: the pattern matches nothing.
      if (escaped === undefined) return undefined;
      tokens.push(escaped === SLASH ? { kind: "slash" } : { kind: LITERAL, byte: escaped });
      i += 2;
    } else if (c === 0x2a) {
      let run = 0;
      while (p[i] === 0x2a) {
        run++;
        i++;
      }
      tokens.push({ kind: STAR, run });
    } else if (c === 0x3f) {
      tokens.push({ kind: ANY });
      i++;
    } else if (c === 0x5b) {
      const parsed = parseSet(p, i + 1);
      if (parsed === undefined) return undefined;
      tokens.push({ kind: SET, set: parsed.set });
      i = parsed.next;
    } else {
      tokens.push(c === SLASH ? { kind: "slash" } : { kind: LITERAL, byte: c });
      i++;
    }
  }
  return tokens;
}

function segmentOf(tokens: readonly Token[]): Segment {
  const kinds = new Uint8Array(tokens.length);
  const values = new Uint16Array(tokens.length);
  const sets: Uint8Array[] = [];
  tokens.forEach((t, i) => {
    if (t.kind === "slash") throw new Error("a segment holds no slash");
    kinds[i] = t.kind;
    if (t.kind === LITERAL) values[i] = t.byte;
    else if (t.kind === SET) values[i] = sets.push(t.set) - 1;
  });
  return { kinds, values, sets };
}

/**
 * Compiles `pattern` (git's syntax, already stripped of `!`, a trailing `/` and a leading `/`);
 * with `pathname`, `*` stops at "/" and a `**` component spans components. Undefined when the
 * pattern can match nothing at all (a trailing backslash, an unclosed or unknown class).
 */
export function compileGlob(pattern: string, pathname: boolean): Glob | undefined {
  const bytes = Buffer.from(pattern, "utf8");
  // git compares the part before the first wildcard as a string and wildmatches the rest on its own, so
  // a "**" right after that part counts as at the start ("a**" matches "a/b"): the rest is compiled apart.
  let cut = pathname ? bytes.findIndex((b) => b === 0x2a || b === 0x3f || b === 0x5b || b === 0x5c) : 0;
  if (cut < 0) cut = bytes.length;
  const tokens = tokenize(bytes.subarray(cut));
  if (tokens === undefined) return undefined;
  const wildcards = tokens.filter((t) => t.kind === STAR || t.kind === ANY || t.kind === SET).length;
  const prefix = Uint8Array.from(bytes.subarray(0, cut));
  if (!pathname) return { prefix, parts: [segmentOf(tokens)], wildcards, minParts: 1, fixed: true };
  const runs: Token[][] = [[]];
  for (const t of tokens) {
    if (t.kind === "slash") runs.push([]);
    else runs[runs.length - 1]!.push(t);
  }
  const parts: Part[] = [];
  runs.forEach((run, i) => {
    const only = run[0];
    // Two or more stars alone between slashes (or the ends) span components; anywhere else they are one star.
    if (run.length === 1 && only?.kind === STAR && only.run >= 2) {
      // A trailing "/**" matches everything inside, so at least one component.
      if (i === runs.length - 1) parts.push("one");
      if (parts[parts.length - 1] !== "starstar") parts.push("starstar");
    } else {
      parts.push(segmentOf(run));
    }
  });
  const minParts = parts.filter((p) => p !== "starstar").length;
  return { prefix, parts, wildcards, minParts, fixed: !parts.includes("starstar") };
}

/** True when `seg` matches the bytes `t[start, end)`, one component or a basename. */
function matchSegment(seg: Segment, t: Uint8Array, start: number, end: number): boolean {
  const { kinds, values, sets } = seg;
  const n = kinds.length;
  let i = start;
  let j = 0;
  let star = -1;
  let mark = start;
  while (i < end) {
    if (j < n) {
      const kind = kinds[j];
      if (kind === STAR) {
        star = j++;
        mark = i;
        continue;
      }
      const c = t[i]!;
      if (kind === ANY || (kind === LITERAL ? values[j] === c : sets[values[j]!]![c] === 1)) {
        i++;
        j++;
        continue;
      }
    }
    if (star < 0) return false;
    j = star + 1;
    i = ++mark;
  }
  while (j < n && kinds[j] === STAR) j++;
  return j === n;
}

/** True when `g` (compiled without `pathname`) matches the whole of `name`. */
export function matchBasename(g: Glob, name: Uint8Array): boolean {
  return matchSegment(g.parts[0] as Segment, name, 0, name.length);
}

/**
 * True when `g` matches the path `t` from its component `first` on, where component k starts at
 * `starts[k]` and ends before the next start's "/" (the last at the end of `t`).
 */
export function matchPath(g: Glob, t: Uint8Array, starts: Int32Array, first: number): boolean {
  const base = starts[first]!;
  const { prefix, parts } = g;
  const at = base + prefix.length;
  if (at > t.length) return false;
  for (let i = 0; i < prefix.length; i++) if (t[base + i] !== prefix[i]) return false;
  // The text after the prefix, cut at its slashes: its first component starts at `at`, maybe inside one.
  let next = first + 1;
  while (next < starts.length && starts[next]! <= at) next++;
  const count = 1 + starts.length - next;
  if (count < g.minParts || (g.fixed && count !== g.minParts)) return false;
  const startOf = (k: number): number => (k === 0 ? at : starts[next + k - 1]!);
  const endOf = (k: number): number => (k + 1 < count ? startOf(k + 1) - 1 : t.length);
  const n = parts.length;
  let k = 0;
  let j = 0;
  let star = -1;
  let mark = 0;
  while (k < count) {
    if (j < n) {
      const part = parts[j]!;
      if (part === "starstar") {
        star = j++;
        mark = k;
        continue;
      }
      if (part === "one" || matchSegment(part, t, startOf(k), endOf(k))) {
        k++;
        j++;
        continue;
      }
    }
    if (star < 0) return false;
    j = star + 1;
    k = ++mark;
  }
  while (j < n && parts[j] === "starstar") j++;
  return j === n;
}
