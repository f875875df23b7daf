/**
 * The docs stay true to the tree. Every `SPEC §n` the code and the docs cite resolves:
 * docs/SPEC.md, the contract kept in the repository, has a heading numbered n (`## n.` or
 * `### n.m`); a citation may list more sections (`SPEC §3.3, §4, §6`), each is checked.
 * And the tests' layout carries the map docs/ARCHITECTURE.md used to keep by hand: every test file
 * is in __tests__/unit/ or __tests__/e2e/, each folder of unit/ names a folder of src/, each unit
 * test file at unit/'s top names a module at src/'s top (the §7 shelf) or the repository (docs),
 * and every e2e file is named in ARCHITECTURE.md with the process boundary it needs.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
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

describe("the tests' layout", () => {
  const tests = filesUnder("__tests__", /\.test\.ts$/).map((file) => path.relative("__tests__", file).split(path.sep).join("/"));
  const unit = tests.filter((file) => file.startsWith("unit/")).map((file) => file.slice("unit/".length));
  const e2e = tests.filter((file) => file.startsWith("e2e/")).map((file) => file.slice("e2e/".length));

  it("puts every test file in unit/ or e2e/, and e2e/ has no folders", () => {
    expect(unit.length).toBeGreaterThan(30);
    expect(e2e.length).toBeGreaterThan(5);
    expect(tests.filter((file) => !file.startsWith("unit/") && !file.startsWith("e2e/"))).toEqual([]);
    expect(e2e.filter((file) => file.includes("/"))).toEqual([]);
  });

  it("mirrors src/ in unit/: each folder names a folder of src/", () => {
    const folders = [...new Set(unit.filter((file) => file.includes("/")).map((file) => path.posix.dirname(file)))];
    expect(folders.length).toBeGreaterThan(8);
    expect(folders.filter((folder) => !statSync(path.join(ROOT, "src", folder), { throwIfNoEntry: false })?.isDirectory())).toEqual([]);
  });

  it("keeps at unit/'s top only tests of src/'s top-level modules, and of the docs", () => {
    const top = unit.filter((file) => !file.includes("/")).map((file) => file.replace(/(-mocked)?\.test\.ts$/, ""));
    expect(top).toContain("lib");
    expect(top.filter((name) => name !== "docs" && !existsSync(path.join(ROOT, "src", `${name}.ts`)))).toEqual([]);
  });

  it("names every e2e file in docs/ARCHITECTURE.md with the boundary it needs, and no file that does not exist", () => {
    const architecture = readFileSync(path.join(ROOT, "docs", "ARCHITECTURE.md"), "utf8");
    const named = [...architecture.matchAll(/`e2e\/([^`]+\.test\.ts)`/g)].map((m) => m[1]);
    expect(e2e.filter((file) => !named.includes(file))).toEqual([]);
    expect(named.filter((file) => file !== undefined && !e2e.includes(file))).toEqual([]);
  });
});
