/**
 * A tree shaped like a repository with its installed dependencies (SPEC §16), generated
 * deterministically from a seed: directories nested up to 8 levels, source-like files whose
 * sizes follow a log-normal curve (median ~1.5 KB, a long tail to 4 MiB), 1% minified (one long
 * line), 1% binary. Kept in its own cache directory, apart from the other fixtures.
 */
import fs from "node:fs";
import path from "node:path";
import { prng } from "./fixtures.mjs";

/** Bumped whenever the output changes, so a stale cache is rebuilt. */
const REPO_TREE_VERSION = 1;

const KiB = 1024;
const MiB = 1024 * KiB;

/** Shapes of the full run and of `--quick`. */
export const REPO_SPECS = {
  full: { files: 40_000, dirs: 3_000, maxDepth: 8, seed: 19 },
  quick: { files: 8_000, dirs: 600, maxDepth: 8, seed: 19 },
};

const MEDIAN_BYTES = 1536;
const SIGMA = 2.2;
const MIN_BYTES = 8;
const MAX_BYTES = 4 * MiB;

const VERBS = ["normalize", "resolve", "join", "read", "write", "parse", "format", "get", "set", "make", "load", "check", "walk", "split"];
const NOUNS = ["Path", "File", "Dir", "Name", "Value", "Options", "Error", "Buffer", "Line", "Text", "Node", "Tree", "Config", "Entry"];
const WORDS = ["the", "file", "is", "read", "once", "when", "a", "path", "leads", "outside", "every", "call", "returns", "so", "we", "keep", "it"];
const DIR_NAMES = ["src", "lib", "dist", "test", "node_modules", "utils", "core", "esm", "cjs", "types", "internal", "helpers", "vendor", "build"];
const EXTENSIONS = [".js", ".ts", ".json", ".md", ".mjs", ".d.ts", ".js", ".ts", ".py", ".txt"];

/** A standard normal deviate (Box-Muller) from two uniform draws. */
function gaussian(rnd) {
  const u = (rnd.next() + 1) / 4294967297;
  const v = rnd.next() / 4294967296;
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

/** 4,096 source-like lines (with their `\n`), a few with non-ASCII text, picked from by every file. */
function sourceLines(rnd) {
  const pick = (list) => list[rnd.below(list.length)];
  const ident = () => pick(VERBS) + pick(NOUNS);
  const args = () => Array.from({ length: rnd.below(4) }, ident).join(", ");
  const comment = () => Array.from({ length: 3 + rnd.below(10) }, () => pick(WORDS)).join(" ");
  const indent = () => "  ".repeat(rnd.below(4));
  const forms = [
    () => `function ${ident()}(${args()}) {`,
    () => `${indent()}const ${ident()} = ${ident()}(${args()});`,
    () => `import { ${ident()}, ${ident()} } from "./${pick(VERBS)}.js";`,
    () => `${indent()}return ${ident()}.${ident()}(${args()});`,
    () => `${indent()}if (${ident()} === undefined) throw new Error("${comment()}");`,
    () => `${indent()}// ${comment()}`,
    () => `${indent()}}`,
    () => `export async function ${ident()}(${args()}) {`,
    () => `${indent()}"${ident()}": "${comment()}",`,
    () => `${indent()}// ${comment()} — café, naïve, 日本語`,
    () => "",
  ];
  return Array.from({ length: 4096 }, () => Buffer.from(`${forms[rnd.below(forms.length)]()}\n`, "utf8"));
}

/** Directories as paths relative to the root: each new one under a random earlier one short of the depth limit. */
function directories(rnd, count, maxDepth) {
  const dirs = [{ rel: "", depth: 0 }];
  while (dirs.length < count) {
    const parent = dirs[rnd.below(dirs.length)];
    if (parent.depth >= maxDepth) continue;
    const rel = path.join(parent.rel, `${DIR_NAMES[rnd.below(DIR_NAMES.length)]}${dirs.length}`);
    dirs.push({ rel, depth: parent.depth + 1 });
  }
  return dirs;
}

/** Fills `out` (its full length) with whole source lines and a last cut one; `minified` joins them on one line. */
function fillSource(rnd, lines, out, minified) {
  let used = 0;
  while (used < out.length) {
    const line = lines[rnd.below(lines.length)];
    const n = Math.min(line.length, out.length - used);
    line.copy(out, used, 0, n);
    if (minified && n === line.length) out[used + n - 1] = 0x3b;
    used += n;
  }
  if (out.length > 0) out[out.length - 1] = 0x0a;
}

/** Random bytes with NULs throughout (so the first 8 KiB hold one). */
function fillBinary(rnd, out) {
  for (let i = 0; i < out.length; i++) out[i] = i % 97 === 0 ? 0 : rnd.next() & 0xff;
}

function generate(dir, spec) {
  const rnd = prng(spec.seed);
  const lines = sourceLines(rnd);
  const dirs = directories(rnd, spec.dirs, spec.maxDepth);
  for (const d of dirs) fs.mkdirSync(path.join(dir, d.rel), { recursive: true });
  const buf = Buffer.allocUnsafe(MAX_BYTES);
  const totals = { files: 0, bytes: 0, minified: 0, binary: 0, largest: 0 };
  for (let i = 0; i < spec.files; i++) {
    const size = Math.round(Math.min(MAX_BYTES, Math.max(MIN_BYTES, MEDIAN_BYTES * Math.exp(SIGMA * gaussian(rnd)))));
    const kind = rnd.below(100);
    const out = buf.subarray(0, size);
    if (kind === 0) fillBinary(rnd, out);
    else fillSource(rnd, lines, out, kind === 1);
    const d = dirs[rnd.below(dirs.length)];
    const ext = kind === 0 ? ".bin" : kind === 1 ? ".min.js" : EXTENSIONS[rnd.below(EXTENSIONS.length)];
    fs.writeFileSync(path.join(dir, d.rel, `f${i}${ext}`), out);
    totals.files++;
    totals.bytes += size;
    totals.largest = Math.max(totals.largest, size);
    if (kind === 0) totals.binary++;
    if (kind === 1) totals.minified++;
  }
  return { ...totals, dirs: dirs.length };
}

/**
 * Ensures the repository-shaped tree of `spec` exists at `<root>/repo`, generating it when its
 * marker is missing or differs; returns its path, its figures, and whether it was generated.
 */
export function ensureRepoTree(root, spec, log) {
  const dir = path.join(root, "repo");
  const marker = path.join(root, "repo-tree.json");
  const wanted = { version: REPO_TREE_VERSION, spec };
  try {
    const meta = JSON.parse(fs.readFileSync(marker, "utf8"));
    if (JSON.stringify(meta.wanted) === JSON.stringify(wanted)) return { dir, ...meta.totals, generated: false };
  } catch {
    // No marker yet: generate below.
  }
  const started = performance.now();
  log(`generating the repository-shaped tree in ${dir} …`);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.rmSync(marker, { force: true });
  const totals = generate(dir, spec);
  // Written last: an interrupted generation leaves no marker and is redone.
  fs.writeFileSync(marker, JSON.stringify({ wanted, totals }, null, 2));
  log(`generated in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return { dir, ...totals, generated: true };
}
