// Builds dist/ (tsc, then the bin made executable) and records a digest of what it was
// built from. The tree is compiled into a temporary folder beside dist/ and renamed into place
// whole, so a test or a second build running meanwhile sees the old tree or the new one, never
// one half written. `--if-stale` rebuilds only when that digest differs from the current inputs',
// which the tests' global setup relies on: one test file run alone never sees a stale build.
// `--check` only says whether dist/ is fresh (exit 1 when not).
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const DIST = path.join(ROOT, "dist");
/** The digest of the inputs, inside the tree so that deleting dist/ forgets it (kept out of the tarball). */
const STAMP_NAME = ".build-inputs";
/** Where dist/'s digest lives. */
export const STAMP = path.join(DIST, STAMP_NAME);

// Everything tsc's output depends on besides src/: the compiler options, the package's
// "type" (module format), this script, and the compiler's own version.
const EXTRA_INPUTS = ["tsconfig.json", "tsconfig.build.json", "package.json", "scripts/build.mjs"];

function filesUnder(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return filesUnder(full);
    return entry.isFile() ? [path.relative(ROOT, full)] : [];
  });
}

function typescriptPackage() {
  return createRequire(import.meta.url).resolve("typescript/package.json");
}

/** A digest of every input of the build: each file's relative path and bytes, in a fixed order. */
export function inputsDigest() {
  const hash = createHash("sha256");
  const files = [...filesUnder(path.join(ROOT, "src")), ...EXTRA_INPUTS].sort();
  for (const file of files) {
    // The path's length is hashed too, so a rename can never produce the same stream of bytes.
    hash.update(`${file.length}:${file}\0`);
    const bytes = readFileSync(path.join(ROOT, file));
    hash.update(`${bytes.length}\0`);
    hash.update(bytes);
  }
  hash.update(`typescript@${JSON.parse(readFileSync(typescriptPackage(), "utf8")).version}`);
  return hash.digest("hex");
}

/** True when dist/ was built from exactly the current inputs. */
export function isFresh(digest = inputsDigest()) {
  return existsSync(STAMP) && readFileSync(STAMP, "utf8").trim() === digest;
}

/** Compiles src/ into `outDir` with the build's compiler options. */
function compileInto(outDir) {
  const tsc = path.join(path.dirname(typescriptPackage()), "bin", "tsc");
  const compiled = spawnSync(process.execPath, [tsc, "-p", "tsconfig.build.json", "--outDir", outDir], { cwd: ROOT, stdio: "inherit" });
  if (compiled.status !== 0)
    throw new Error(`tsc -p tsconfig.build.json exited with ${compiled.status ?? compiled.signal}; dist/ was left as it was`);
}

/** Puts the finished tree `built` at `dist`, moving aside (then deleting) whatever tree is there, a concurrent build's included. */
function renameIntoPlace(built, dist) {
  const aside = [];
  try {
    for (let tries = 0; ; tries++) {
      try {
        renameSync(built, dist);
        return;
      } catch (error) {
        // A tree is already at dist (ours before, or another build's just now): move it aside and try again.
        if (!["ENOTEMPTY", "EEXIST"].includes(error.code) || tries >= 5) throw error;
      }
      const old = `${built}-old${tries}`;
      try {
        renameSync(dist, old);
        aside.push(old);
      } catch (error) {
        if (error.code !== "ENOENT") throw error;
      }
    }
  } finally {
    for (const old of aside) rmSync(old, { recursive: true, force: true });
  }
}

/**
 * Rebuilds dist/ (or `options.dist`) from scratch: compiled into a temporary folder beside it, stamped
 * last, then renamed into place whole, so a failed or interrupted build leaves the previous tree as it was.
 * `options.compile(outDir)` stands in for tsc in the build's own tests.
 */
export function build({ dist = DIST, compile = compileInto } = {}) {
  // Taken before compiling: a source edited during the build then no longer matches.
  const digest = inputsDigest();
  const built = mkdtempSync(path.join(path.dirname(dist), `.${path.basename(dist)}-build-`));
  try {
    compile(built);
    // mkdtemp made it private; the tree is read by whoever runs the server (a test runs it as nobody).
    chmodSync(built, 0o755);
    // npm and bunx run dist/index.js directly.
    chmodSync(path.join(built, "index.js"), 0o755);
    writeFileSync(path.join(built, STAMP_NAME), `${digest}\n`);
    renameIntoPlace(built, dist);
  } finally {
    rmSync(built, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const ifStale = process.argv.includes("--if-stale");
  try {
    if (process.argv.includes("--check")) {
      if (!isFresh()) {
        console.error("dist/ is stale: it was not built from the current src/ (run npm run build)");
        process.exit(1);
      }
    } else if (ifStale && isFresh()) console.error("dist/ is up to date with src/ (build skipped)");
    else {
      const started = Date.now();
      build();
      console.error(`dist/ built from src/ in ${Date.now() - started} ms`);
    }
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  }
}
