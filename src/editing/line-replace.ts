/**
 * replace_in_files' engine (SPEC §22): every occurrence of a query in each line of a file replaced, streaming,
 * for the sandbox's rewrite seam. A line is the text between line feeds without a `\r` before its `\n` (as
 * search_file_contents sees it), so an occurrence never spans lines and every line keeps its ending; lines
 * without an occurrence are copied byte for byte.
 */
import { formatCount } from "../kernel/bounded.js";
import { shortened } from "../kernel/escape.js";
import { compileQuery, type Query } from "../grep/index.js";
import { BINARY_PROBE_BYTES, looksBinary } from "../kernel/binary.js";
import type { ByteSource } from "./source-index.js";

/** What to replace, as the tool takes it. */
export interface ReplaceSpec {
  query: string;
  replacement: string;
  /** `query` is a JavaScript regex and `replacement` may use `$1`, `$<name>`, `$&`, `$$`. @default false */
  regex?: boolean;
  /** @default true */
  caseSensitive?: boolean;
  /** Only occurrences not inside a longer word (ASCII letters, digits and `_`). @default false */
  wholeWord?: boolean;
}

/** A compiled replacement: the query search_file_contents' counting runs, and how one line is rewritten. */
export interface Replacer {
  /** The query as the content search counts it (its occurrences are this engine's replacements). */
  readonly query: Query;
  /** `line` with every occurrence replaced and how many there were (0: `line` itself). */
  replaceLine(line: string, crlf: boolean): { text: string; count: number };
  /** False when no line of `region` (whole lines joined by line feeds) can hold an occurrence. */
  mayOccurIn(region: Buffer): boolean;
}

const WORD = "A-Za-z0-9_";
const isWordChar = (c: string | undefined): boolean => c !== undefined && /[A-Za-z0-9_]/.test(c);
const LOOKAROUND = /\(\?<?[=!]/;
const SPECIAL = /[\\^$.*+?()[\]{}|/]/g;

/** The regex source of `spec`: the query itself or escaped, bounded by word edges for wholeWord. */
function sourceOf(spec: ReplaceSpec): string {
  const core = spec.regex === true ? spec.query : spec.query.replace(SPECIAL, "\\$&");
  if (spec.wholeWord !== true) return core;
  // \b is cheapest and allows a whole-block prefilter, but means "word edge" only next to a word character.
  const literalEdges = spec.regex !== true;
  const before = literalEdges && isWordChar(spec.query[0]) ? "\\b" : `(?<![${WORD}])`;
  const after = literalEdges && isWordChar(spec.query[spec.query.length - 1]) ? "\\b" : `(?![${WORD}])`;
  return `${before}(?:${core})${after}`;
}

const DIGIT = /^[0-9]$/;

/**
 * Why a regex replacement would not insert what it seems to, or undefined. JavaScript writes a reference to a group the
 * query lacks as its text (`$3` with one group, `$0`, `$<name>` with no named group) and `\1` (sed's) as a backslash and
 * a digit, so each wrote that text into every file in silence; and `$<name>` naming no group of a query that has named
 * groups inserts nothing. `empty` is the query's match of nothing: its groups.
 */
function replacementProblem(replacement: string, empty: RegExpExecArray): string | undefined {
  const groups = empty.length - 1;
  const names = Object.keys(empty.groups ?? {});
  const has = groups === 0 ? "the query has no group" : `the query has ${groups === 1 ? "1 group, $1" : `${groups} groups, $1 to $${groups}`}`;
  const dollar = "nothing was written. Write $$ for a $ of the text.";
  for (let i = 0; i < replacement.length; i++) {
    const next = replacement[i + 1] ?? "";
    if (replacement[i] === "\\" && DIGIT.test(next)) {
      return (
        `replacement: \\${next} is sed's way to insert a group, and here it would be written as it stands; nothing was written. ` +
        `Write $${next} for the group; for a backslash before a digit, use edit_file or regex: false.`
      );
    }
    if (replacement[i] !== "$") continue;
    if (next !== "" && "$&`'".includes(next)) {
      i++;
    } else if (DIGIT.test(next)) {
      // As JavaScript reads them: two digits when they name a group, else one.
      const two = Number(replacement.slice(i + 1, i + 3));
      if (DIGIT.test(replacement[i + 2] ?? "") && two >= 1 && two <= groups) i += 2;
      else if (Number(next) >= 1 && Number(next) <= groups) i++;
      else if (next === "0")
        return "replacement: $0 would be written as it stands; nothing was written. Write $& for the whole match, or $$0 for the text $0.";
      else return `replacement: $${next} names no group (${has}) and would be written as it stands; ${dollar}`;
    } else if (next === "<") {
      const close = replacement.indexOf(">", i + 2);
      const name = close === -1 ? undefined : replacement.slice(i + 2, close);
      if (name !== undefined && !names.includes(name)) {
        const shown = `$<${shortened(name, 40)}>`;
        return names.length === 0
          ? `replacement: ${shown} names no group (the query names none) and would be written as it stands; ${dollar}`
          : `replacement: ${shown} names no group (the query's are ${names.map((n) => `$<${n}>`).join(", ")}) and would insert nothing; ${dollar}`;
      }
      if (close !== -1) i = close;
    }
  }
  return undefined;
}

/**
 * Compiles `spec`.
 * @throws when the query is empty or holds a line break, or is an invalid regex (quoting the engine's message), or a
 * regex replacement refers to a group the query lacks or is written as sed's (replacementProblem)
 */
export function compileReplacer(spec: ReplaceSpec): Replacer {
  if (spec.query.length === 0) throw new Error("query must not be empty");
  if (/[\r\n]/.test(spec.query))
    throw new Error("query holds a line break: replace_in_files replaces within lines; use edit_file for text across lines");
  const caseSensitive = spec.caseSensitive !== false;
  const plainLiteral = spec.regex !== true && spec.wholeWord !== true;
  const source = sourceOf(spec);
  const query = compileQuery(plainLiteral ? { query: spec.query, caseSensitive } : { query: source, regex: true, caseSensitive });
  const flags = caseSensitive ? "" : "i";
  const all = new RegExp(source, `g${flags}`);
  if (spec.regex === true) {
    const problem = replacementProblem(spec.replacement, new RegExp(`${source}|`, flags).exec("") as RegExpExecArray);
    if (problem !== undefined) throw new Error(problem);
  }
  if (caseSensitive && (spec.regex === true ? spec.replacement === "$&" : spec.replacement === spec.query)) {
    throw new Error(
      `replacement ${spec.regex === true ? "$& puts back each match as it is" : "equals query"}, so no occurrence would change; nothing was written. Put the new text in replacement.`,
    );
  }
  // A literal's replacement is literal: `$` is not special without regex: true.
  const replacement = spec.regex === true ? spec.replacement : spec.replacement.replaceAll("$", "$$$$");
  const literalBytes = plainLiteral && caseSensitive ? Buffer.from(spec.query, "utf8") : undefined;
  // Without lookarounds, a line's match is a match of the region its lines are joined in (m: ^ and $ at each line).
  const regionRe = LOOKAROUND.test(source) ? undefined : new RegExp(source, `m${flags}`);
  return {
    query,
    replaceLine(line, crlf) {
      let count = 0;
      all.lastIndex = 0;
      for (let m = all.exec(line); m !== null; m = all.exec(line)) {
        count++;
        if (m[0].length === 0) all.lastIndex = m.index + 1;
      }
      if (count === 0) return { text: line, count };
      all.lastIndex = 0;
      const text = line.replace(all, replacement);
      // The replacement's line breaks take the line's ending.
      return { text: crlf ? text.replace(/\r?\n/g, "\r\n") : text, count };
    },
    mayOccurIn(region) {
      if (literalBytes !== undefined) return region.includes(literalBytes);
      if (regionRe === undefined) return true;
      const text = region.toString("utf8");
      return regionRe.test(text.includes("\r") ? text.replace(/\r\n/g, "\n") : text);
    },
  };
}

/** Input of replaceStream. */
export interface ReplaceStreamOptions {
  source: ByteSource;
  replacer: Replacer;
  /** Names the file in errors, as shown. */
  shown: string;
  /** Receives the new file in order; omitted to count only. */
  write?: (chunk: Buffer) => Promise<void>;
  /** Asked before each line's `n` replacements are made; false refuses the file (the call's limit). */
  take: (n: number) => boolean;
  /** Lines longer than this are refused. @default 16 MiB */
  maxLineBytes?: number;
  signal?: AbortSignal;
}

const BLOCK = 256 * 1024;
const LF = 0x0a;
const CR = 0x0d;

/**
 * Streams `source` through the replacer, writing the result when `write` is given; returns the replacements.
 * @throws when the file looks binary, holds a line over maxLineBytes, a changed line is not UTF-8, the limit
 * would be passed, or the signal's reason
 */
export async function replaceStream(o: ReplaceStreamOptions): Promise<number> {
  const { source, replacer, shown, write } = o;
  const maxLine = o.maxLineBytes ?? 16 * 1024 * 1024;
  let count = 0;
  let carry = Buffer.alloc(0);
  let line = 0;
  for (let at = 0; at < source.size || carry.length > 0; ) {
    o.signal?.throwIfAborted();
    const read = at < source.size ? await source.read(at, Math.min(BLOCK, source.size - at)) : Buffer.alloc(0);
    if (read.length === 0 && at < source.size) throw new Error(`${shown} became shorter while it was read; not changed`);
    if (at === 0 && looksBinary(read.subarray(0, BINARY_PROBE_BYTES)))
      throw new Error(`${shown} looks binary (a NUL byte or a UTF-16 mark); not changed`);
    at += read.length;
    const end = at >= source.size;
    const bytes = carry.length === 0 ? read : Buffer.concat([carry, read]);
    const last = end ? bytes.length : bytes.lastIndexOf(LF) + 1;
    if (last === 0) {
      if (bytes.length > maxLine)
        throw new Error(
          `${shown} has a line over ${formatCount(maxLine)} bytes (line ${formatCount(line + 1)}); not changed ` +
            "(edit_file with replaceAll replaces an exact text in lines of any length)",
        );
      carry = Buffer.from(bytes);
      continue;
    }
    const region = bytes.subarray(0, last);
    carry = Buffer.from(bytes.subarray(last));
    if (!replacer.mayOccurIn(region)) {
      line += countLf(region);
      if (write !== undefined) await write(Buffer.from(region));
      continue;
    }
    const out: Buffer[] = [];
    let copied = 0;
    for (let ls = 0; ls < region.length; ) {
      const nl = region.indexOf(LF, ls);
      const le = nl === -1 ? region.length : nl;
      const te = le > ls && region[le - 1] === CR && nl !== -1 ? le - 1 : le;
      line++;
      const raw = region.subarray(ls, te);
      const text = raw.toString("utf8");
      const { text: changed, count: n } = replacer.replaceLine(text, te < le);
      if (n > 0) {
        if (!Buffer.from(text, "utf8").equals(raw)) throw new Error(`${shown} is not valid UTF-8 at line ${formatCount(line)}; not changed`);
        if (!o.take(n)) throw new ReplacementLimit();
        count += n;
        out.push(region.subarray(copied, ls), Buffer.from(changed, "utf8"));
        copied = te;
      }
      ls = nl === -1 ? region.length : nl + 1;
    }
    out.push(region.subarray(copied));
    if (write !== undefined) await write(Buffer.concat(out));
    // Other work gets a turn between blocks.
    await new Promise((resolve) => setImmediate(resolve));
  }
  return count;
}

function countLf(bytes: Buffer): number {
  let n = 0;
  for (let at = bytes.indexOf(LF); at !== -1; at = bytes.indexOf(LF, at + 1)) n++;
  return n;
}

/** A file that would take the call past its replacement limit. */
export class ReplacementLimit extends Error {
  constructor() {
    super("the call would pass its replacement limit");
  }
}
