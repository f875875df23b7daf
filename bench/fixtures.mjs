/**
 * Deterministic benchmark fixtures (seeded PRNG), generated once into a cache
 * directory and reused while the marker file still describes the same spec.
 */
import fs from "node:fs";
import path from "node:path";

/** Bumped whenever the generator's output changes, so stale caches are rebuilt. */
const GENERATOR_VERSION = 1;

const MiB = 1024 * 1024;

/** Fixture sizes of the full run and of `--quick`. */
export const SPECS = {
  full: {
    textBytes: 600 * MiB,
    manyFiles: 200,
    manyBytes: 1024 * MiB,
    // 10 × 10 × 10 leaf directories of 100 files, plus 2 files in every inner directory.
    tree: { branching: [10, 10, 10], leafFiles: 100, innerFiles: 2 },
    wideEntries: 50_000,
  },
  quick: {
    textBytes: 60 * MiB,
    manyFiles: 200,
    manyBytes: 100 * MiB,
    tree: { branching: [5, 5, 8], leafFiles: 100, innerFiles: 2 },
    wideEntries: 10_000,
  },
};

/** mulberry32: a tiny seeded generator; `next()` is a uint32, `below(n)` an integer in [0, n). */
export function prng(seed) {
  let s = seed >>> 0;
  const next = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
  return { next, below: (n) => next() % n };
}

// Mostly ASCII words; about one word in 64 carries a 2-, 3- or 4-byte character,
// so every read chunk has multi-byte text and takes the full decoding path.
const ASCII_WORDS = (() => {
  const rnd = prng(7);
  const words = [];
  for (let i = 0; i < 256; i++) {
    let w = "";
    const len = 1 + rnd.below(10);
    for (let j = 0; j < len; j++) w += String.fromCharCode(97 + rnd.below(26));
    words.push(Buffer.from(w, "latin1"));
  }
  return words;
})();
const WIDE_WORDS = ["café", "naïve", "Ωmega", "€uro", "日本語", "señor", "😀", "𝄞clef", "Ünïcödé", "✓ok", "🚀go", "字"].map((w) =>
  Buffer.from(w, "utf8"),
);

/** Writes one line of words into `out` at `used` (≤ ~200 bytes); returns the new end. */
function writeLine(rnd, out, used) {
  const words = 4 + rnd.below(16);
  for (let w = 0; w < words; w++) {
    const r = rnd.next();
    const word = (r & 63) === 0 ? WIDE_WORDS[(r >>> 6) % WIDE_WORDS.length] : ASCII_WORDS[(r >>> 6) & 255];
    if (w > 0) out[used++] = 0x20;
    for (let i = 0; i < word.length; i++) out[used++] = word[i];
  }
  if ((rnd.next() & 3) === 0) out[used++] = 0x0d;
  out[used++] = 0x0a;
  return used;
}

/**
 * Writes `bytes` bytes of line-structured text to `file`: words separated by
 * spaces, lines ending in LF or (one in four) CRLF, valid UTF-8 throughout.
 */
export function writeText(file, bytes, seed) {
  const rnd = prng(seed);
  const out = Buffer.allocUnsafe(4 * MiB);
  const fd = fs.openSync(file, "w");
  try {
    let written = 0;
    let used = 0;
    const flush = () => {
      fs.writeSync(fd, out, 0, used);
      written += used;
      used = 0;
    };
    // Lines are at most ~20 words of ≤ 10 bytes; leave that much room before each.
    while (written + used + 512 < bytes) {
      if (used > out.length - 512) flush();
      used = writeLine(rnd, out, used);
    }
    flush();
    const rest = bytes - written;
    if (rest > 0) {
      const tail = Buffer.alloc(rest, 0x78);
      tail[rest - 1] = 0x0a;
      fs.writeSync(fd, tail);
    }
  } finally {
    fs.closeSync(fd);
  }
}

/** Sizes of `count` files summing exactly to `total`, varying ±40% around the mean. */
function fileSizes(count, total, seed) {
  const rnd = prng(seed);
  const base = Math.floor(total / count);
  const sizes = Array.from({ length: count }, (_, i) => base + (i < total % count ? 1 : 0));
  for (let i = 0; i + 1 < count; i += 2) {
    const d = rnd.below(Math.floor(base * 0.4));
    sizes[i] += d;
    sizes[i + 1] -= d;
  }
  return sizes;
}

const EXTENSIONS = [".txt", ".md", ".js", ".txt", ".json", ".txt"];

function touch(file) {
  fs.closeSync(fs.openSync(file, "w"));
}

/** A tree of empty files (ensureTreeText fills them): returns the number of entries (files and directories) below `root`. */
function writeTree(root, { branching, leafFiles, innerFiles }, seed) {
  const rnd = prng(seed);
  let entries = 0;
  const fill = (dir, level) => {
    fs.mkdirSync(dir, { recursive: true });
    const leaf = level === branching.length;
    const files = leaf ? leafFiles : innerFiles;
    for (let i = 0; i < files; i++) {
      touch(path.join(dir, `f${String(i).padStart(4, "0")}${EXTENSIONS[rnd.below(EXTENSIONS.length)]}`));
      entries++;
    }
    if (leaf) return;
    for (let i = 0; i < branching[level]; i++) {
      entries++;
      fill(path.join(dir, `d${level}-${String(i).padStart(3, "0")}`), level + 1);
    }
  };
  fill(root, 0);
  return entries;
}

/**
 * Bumped when the tree files' text changes. Kept apart from GENERATOR_VERSION so a
 * cached set of fixtures (1.6 GiB) is not regenerated just to fill the tree.
 */
const TREE_TEXT_VERSION = 1;

/** Fills every file below `dir` (sorted order) with 64-1,023 bytes of the big file's words. */
function fillTree(dir, seed) {
  const rnd = prng(seed);
  const out = Buffer.allocUnsafe(2048);
  const totals = { files: 0, bytes: 0 };
  const visit = (d) => {
    const names = fs.readdirSync(d, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of names) {
      const full = path.join(d, e.name);
      if (e.isDirectory()) {
        visit(full);
        continue;
      }
      const want = 64 + rnd.below(960);
      let used = 0;
      while (used < want) used = writeLine(rnd, out, used);
      fs.writeFileSync(full, out.subarray(0, used));
      totals.files++;
      totals.bytes += used;
    }
  };
  visit(dir);
  return totals;
}

/** Gives the tree's files text once (the content search rows need some); returns { files, bytes }. */
function ensureTreeText(root, tree, log) {
  const marker = path.join(root, "tree-text.json");
  try {
    const meta = JSON.parse(fs.readFileSync(marker, "utf8"));
    if (meta.version === TREE_TEXT_VERSION) return meta;
  } catch {
    // No marker yet: fill below.
  }
  const started = performance.now();
  log(`filling the tree's files with text …`);
  const meta = { version: TREE_TEXT_VERSION, ...fillTree(tree, 5) };
  fs.writeFileSync(marker, JSON.stringify(meta));
  log(`filled in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return meta;
}

/** One directory of `count` entries: every 25th a subdirectory, the rest small files. */
function writeWide(dir, count, seed) {
  const rnd = prng(seed);
  fs.mkdirSync(dir, { recursive: true });
  for (let i = 0; i < count; i++) {
    const name = path.join(dir, `entry-${String(i).padStart(6, "0")}`);
    if (i % 25 === 0) fs.mkdirSync(name);
    else fs.writeFileSync(`${name}.txt`, Buffer.alloc(rnd.below(512), 0x61));
  }
}

/** Paths of the fixtures of one spec under `root` (the directory the server is allowed). */
export function fixturePaths(root) {
  return {
    root,
    text: path.join(root, "big.txt"),
    manyDir: path.join(root, "many"),
    tree: path.join(root, "tree"),
    wide: path.join(root, "wide"),
  };
}

/**
 * Ensures the fixtures of `spec` exist under `root`, generating them when the
 * marker is missing or differs. Returns the paths, the file list and whether
 * generation ran.
 */
export function ensureFixtures(root, spec, log) {
  const marker = path.join(root, "fixture.json");
  const wanted = JSON.stringify({ generator: GENERATOR_VERSION, ...spec });
  const p = fixturePaths(root);
  let meta;
  try {
    meta = JSON.parse(fs.readFileSync(marker, "utf8"));
  } catch {
    meta = undefined;
  }
  const reuse = meta !== undefined && JSON.stringify(meta.spec) === wanted;
  if (!reuse) {
    const started = performance.now();
    fs.rmSync(root, { recursive: true, force: true });
    fs.mkdirSync(root, { recursive: true });
    log(`generating fixtures in ${root} …`);
    writeText(p.text, spec.textBytes, 1);
    fs.mkdirSync(p.manyDir);
    fileSizes(spec.manyFiles, spec.manyBytes, 2).forEach((size, i) => {
      writeText(path.join(p.manyDir, `file-${String(i).padStart(3, "0")}.txt`), size, 100 + i);
    });
    const treeEntries = writeTree(p.tree, spec.tree, 3);
    writeWide(p.wide, spec.wideEntries, 4);
    meta = { spec: JSON.parse(wanted), treeEntries };
    // Written last: an interrupted generation leaves no marker and is redone.
    fs.writeFileSync(marker, JSON.stringify(meta, null, 2));
    log(`generated in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }
  const treeText = ensureTreeText(root, p.tree, log);
  const manyFiles = fs
    .readdirSync(p.manyDir)
    .sort()
    .map((name) => path.join(p.manyDir, name));
  return { ...p, manyFiles, treeEntries: meta.treeEntries, treeText, generated: !reuse };
}
