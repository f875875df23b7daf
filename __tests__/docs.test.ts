/**
 * The docs stay true to the tree. Every `SPEC §n` the code and the docs cite resolves:
 * docs/SPEC.md, the contract kept in the repository, has a heading numbered n (`## n.` or
 * `### n.m`); a citation may list more sections (`SPEC §3.3, §4, §6`), each is checked.
 * And docs/ARCHITECTURE.md's tests map names every test file once, and only test files that exist.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const CITATION = /SPEC §\d+(?:\.\d+)*(?:(?:,\s*|\s+and\s+)§\d+(?:\.\d+)*)*/g;
const SECTION = /§(\d+(?:\.\d+)*)/g;
const HEADING = /^#{2,3} (\d+(?:\.\d+)*)\.?\s/gm;

function filesUnder(dir: string, ext: RegExp): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = path.join(dir, entry.name);
    if (entry.isDirectory()) return filesUnder(rel, ext);
    return ext.test(entry.name) ? [rel] : [];
  });
}

/** Each cited section with where it is cited (`file:line`). */
function citations(files: string[]): { section: string; at: string }[] {
  return files.flatMap((file) =>
    readFileSync(path.join(ROOT, file), "utf8")
      .split("\n")
      .flatMap((line, i) =>
        [...line.matchAll(CITATION)].flatMap((m) => [...m[0].matchAll(SECTION)].map((s) => ({ section: s[1] ?? "", at: `${file}:${i + 1}` }))),
      ),
  );
}

const headings = new Set([...readFileSync(path.join(ROOT, "docs", "SPEC.md"), "utf8").matchAll(HEADING)].map((m) => m[1]));
const sources = filesUnder("src", /\.ts$/);
const elsewhere = [...filesUnder("__tests__", /\.ts$/), ...filesUnder("bench", /\.mjs$/), "README.md", ...filesUnder("docs", /\.md$/)].filter(
  (file) => file !== path.join("docs", "SPEC.md"),
);

describe("SPEC § references", () => {
  it("docs/SPEC.md numbers its sections", () => {
    for (const n of ["1", "2", "3.1", "3.4", "7", "13", "19"]) expect(headings, `§${n}`).toContain(n);
  });

  it("src/ cites the contract, and every section it cites is a heading of docs/SPEC.md", () => {
    const cited = citations(sources);
    expect(cited.length).toBeGreaterThan(50);
    expect(cited.filter((c) => !headings.has(c.section)).map((c) => `§${c.section} at ${c.at}`)).toEqual([]);
  });

  it("so does every section cited by the tests, the benchmark and the docs", () => {
    expect(
      citations(elsewhere)
        .filter((c) => !headings.has(c.section))
        .map((c) => `§${c.section} at ${c.at}`),
    ).toEqual([]);
  });
});

describe("docs/ARCHITECTURE.md's tests map", () => {
  const architecture = readFileSync(path.join(ROOT, "docs", "ARCHITECTURE.md"), "utf8");
  const mapped = [...architecture.matchAll(/^\| [^|]+ \| `([^`]+\.test\.ts)` \|/gm)].map((m) => m[1]);
  const testFiles = filesUnder("__tests__", /\.test\.ts$/).map((file) => path.relative("__tests__", file).split(path.sep).join("/"));

  it("names every test file exactly once", () => {
    expect(mapped.filter((file, i) => mapped.indexOf(file) !== i)).toEqual([]);
    expect(testFiles.filter((file) => !mapped.includes(file))).toEqual([]);
  });

  it("names no test file that does not exist", () => {
    expect(mapped.filter((file) => file !== undefined && !testFiles.includes(file))).toEqual([]);
  });
});
