/**
 * Names cannot forge lines (SPEC §13): the one escaping of control characters
 * for every text result that quotes a file name or path. Its results carry a
 * brand that nothing else can make, and every formatter that puts a name or a
 * path into a result takes only branded text, so a call site that forgot to
 * escape does not compile. Backslashes are left alone, so Windows paths read as
 * they are; the price is that a name holding a literal backslash-n looks like
 * one holding a line break, which forges nothing.
 */
import { isHigh } from "./bounded.js";

declare const SHOWN: unique symbol;
declare const SHOWN_JSON: unique symbol;

/** Text safe to show in a result: no control character, line or paragraph separator, bidi control or zero-width character. Made only by `escapeControls`. */
export type Shown = string & { readonly [SHOWN]: true };

/** A JSON string literal safe to show in a result. Made only by `jsonName`. */
export type ShownJson = string & { readonly [SHOWN_JSON]: true };

// C0 and C1 controls and DEL (\p{Cc}), the two Unicode line and paragraph separators, and the
// invisible characters that make a name read as another: bidi embeddings, overrides and isolates
// (U+202A-U+202E, U+2066-U+2069) and the marks U+200E/U+200F, which reorder what follows
// (`rlo\u202etxt.exe` shows as `rloexe.txt`), and the zero-width characters U+200B-U+200D,
// U+2060 and U+FEFF (BOM), which make two different names look the same.
const CONTROL = /[\p{Cc}\u2028\u2029\u200b-\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff]/u;
const CONTROLS = /[\p{Cc}\u2028\u2029\u200b-\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff]/gu;
// What JSON.stringify leaves raw although a renderer may break the line on it, or reorder or hide text with it.
const JSON_RAW = /[\u007f-\u009f\u2028\u2029\u200b-\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff]/g;
// What makes JSON.stringify or JSON_RAW change a string: controls, quote, backslash, DEL, C1, separators,
// bidi controls, zero-width characters, surrogates.
const JSON_SPECIAL = /[\u0000-\u001f"\\\u007f-\u009f\u2028\u2029\u200b-\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff\ud800-\udfff]/;

/**
 * `pattern.test(text)`, for CONTROL (`quotes` false) or JSON_SPECIAL (`quotes` true): both match every C0 control, and
 * of the printable ASCII characters JSON_SPECIAL matches only the quote and the backslash. Names are mostly plain
 * ASCII: a loop checks them, giving way to the pattern at the first character past ASCII.
 */
function holds(text: string, pattern: RegExp, quotes: boolean): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || (quotes && (code === 0x22 || code === 0x5c))) return true;
    if (code >= 0x7f) return pattern.test(text);
  }
  return false;
}

const NAMED: Readonly<Record<string, string>> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

function hex(ch: string, width: number): string {
  return ch.charCodeAt(0).toString(16).padStart(width, "0");
}

/**
 * `text` with each control character (and each bidi control and zero-width character) shown as `\n`, `\r`,
 * `\t`, `\xHH` or `\uHHHH`; unchanged when it has none. Idempotent, and applied piecewise it equals applied whole.
 */
export function escapeControls(text: string): Shown {
  if (!holds(text, CONTROL, false)) return text as Shown;
  return text.replace(CONTROLS, (ch) => NAMED[ch] ?? (ch.charCodeAt(0) < 0x100 ? `\\x${hex(ch, 2)}` : unitEscape(ch))) as Shown;
}

/**
 * `text` as a message quotes what a caller sent: escaped, and cut to its first `max` characters with "…" after
 * (never between the two halves of a surrogate pair).
 */
export function shortened(text: string, max: number): Shown {
  if (text.length <= max) return escapeControls(text);
  const end = isHigh(text.charCodeAt(max - 1)) ? max - 1 : max;
  return `${escapeControls(text.slice(0, end))}…` as Shown;
}

/** The length of `jsonName(name)`, without making it for a name with nothing to escape (a capped tree counts every entry's). */
export function jsonNameLength(name: string): number {
  return holds(name, JSON_SPECIAL, true) ? jsonName(name).length : name.length + 2;
}

/** UTF-16 code unit `ch` as a JSON escape: `\uHHHH`. */
export function unitEscape(ch: string): string {
  return `\\u${hex(ch, 4)}`;
}

/** `JSON.stringify(text)` with every character past ASCII written as `\uHHHH`: what a model can type back exactly. */
export function asciiJson(text: string): string {
  return JSON.stringify(text).replace(/[^\x20-\x7e]/g, unitEscape);
}

/** `JSON.stringify(name)`, with what JSON leaves raw (DEL, C1, U+2028/9, bidi controls, zero-width characters) also written as `\uHHHH`. */
export function jsonName(name: string): ShownJson {
  // Most names have nothing to escape: quoted as they are (a tree walk asks once per entry).
  if (!holds(name, JSON_SPECIAL, true)) return `"${name}"` as ShownJson;
  return JSON.stringify(name).replace(JSON_RAW, unitEscape) as ShownJson;
}
