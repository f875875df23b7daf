/**
 * Names cannot forge lines (SPEC §13): the one escaping of control characters
 * for every text result that quotes a file name or path. Backslashes are left
 * alone, so Windows paths read as they are; the price is that a name holding a
 * literal backslash-n looks like one holding a line break, which forges nothing.
 */

// C0 and C1 controls and DEL (\p{Cc}), plus the two Unicode line and paragraph separators.
const CONTROL = /[\p{Cc}\u2028\u2029]/u;
const CONTROLS = /[\p{Cc}\u2028\u2029]/gu;
// What JSON.stringify leaves raw although a renderer may break the line on it.
const JSON_RAW = /[\u007f-\u009f\u2028\u2029]/g;

const NAMED: Readonly<Record<string, string>> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

function hex(ch: string, width: number): string {
  return ch.charCodeAt(0).toString(16).padStart(width, "0");
}

/** `text` with each control character shown as `\n`, `\r`, `\t`, `\xHH` or `\uHHHH`; unchanged when it has none. */
export function escapeControls(text: string): string {
  if (!CONTROL.test(text)) return text;
  return text.replace(CONTROLS, (ch) => NAMED[ch] ?? (ch.charCodeAt(0) < 0x100 ? `\\x${hex(ch, 2)}` : `\\u${hex(ch, 4)}`));
}

/** `JSON.stringify(name)`, with the controls JSON leaves raw (DEL, C1, U+2028/9) also written as `\uHHHH`. */
export function jsonName(name: string): string {
  return JSON.stringify(name).replace(JSON_RAW, (ch) => `\\u${hex(ch, 4)}`);
}
