/**
 * The line-by-line definition the grep tests hold the scanner to: a file's bytes split on \n, one \r
 * dropped before each \n, decoded, each line tested alone; a reader over bytes in memory; a file request.
 */
import type { QuerySpec } from "../../src/grep/query.js";
import type { FileRequest } from "../../src/grep/region-search.js";
import { escapeControls } from "../../src/kernel/escape.js";

export { memoryReader } from "../../src/grep/file-scan.js";

/** A matching line of the definition. */
export interface RefLine {
  lineNo: number;
  text: string;
  at: number;
  occ: number;
}

/** The matching lines as the definition has them: line number, text, first occurrence, occurrences as grep -o counts them. */
export function reference(bytes: Buffer, spec: QuerySpec): RefLine[] {
  const parts = bytes.toString("utf8").split("\n");
  const flags = spec.caseSensitive ? "" : "i";
  const one = new RegExp(spec.query, flags);
  const all = new RegExp(spec.query, `g${flags}`);
  return parts.flatMap((raw, i) => {
    const last = i === parts.length - 1;
    if (last && raw === "") return [];
    const text = !last && raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    const first = one.exec(text);
    if (first === null) return [];
    let occ = 0;
    all.lastIndex = 0;
    for (let m = all.exec(text); m !== null; m = all.exec(text)) {
      occ++;
      if (m[0].length === 0) all.lastIndex = m.index + 1;
    }
    return [{ lineNo: i + 1, text, at: first.index, occ }];
  });
}

/** A request of `mode` with no context, no skip and room for everything. */
export const request = (mode: FileRequest["mode"]): FileRequest => ({
  mode,
  contextLines: 0,
  skip: 0,
  room: 1e9,
  displayPath: escapeControls("/f"),
  blankFirst: false,
  forceFirst: false,
  occurrences: mode !== "lines",
});
