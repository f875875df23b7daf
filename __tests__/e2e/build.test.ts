/**
 * Tests build what they spawn: the global setup (support/global-setup.ts) has brought dist/
 * up to date before any suite ran, so the server the suites spawn and the regex worker the
 * in-process suites start (src/grep/scan-pool.ts takes it from dist/) are today's sources.
 * And a build never shows a half-built tree: it compiles into a temporary folder beside
 * dist/ and renames it into place whole (here with a stand-in compiler, into a temp dir).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { build, inputsDigest } from "../../scripts/build.mjs";
import { tempDir } from "../support/fixtures.js";

const BUILD = fileURLToPath(new URL("../../scripts/build.mjs", import.meta.url));
const DIST = new URL("../../dist/", import.meta.url);

describe("dist/ during a test run", () => {
  it("was built from exactly the current build inputs", () => {
    const ran = spawnSync(process.execPath, [BUILD, "--check"], { encoding: "utf8" });
    expect(ran.stderr).toBe("");
    expect(ran.status).toBe(0);
  });

  it("holds the server and the regex worker", () => {
    for (const file of ["index.js", "grep/scan-worker.js"]) expect(existsSync(new URL(file, DIST)), file).toBe(true);
  });

  it.skipIf(process.platform === "win32")("has an executable bin (npx and bunx run it directly; POSIX modes only)", () => {
    expect(statSync(new URL("index.js", DIST)).mode & 0o111).toBe(0o111);
  });
});

describe("build() through a temporary folder", () => {
  let root: string;
  let remove: () => Promise<void>;
  let dist: string;
  beforeEach(async () => {
    ({ dir: root, remove } = await tempDir("bfs-build-"));
    dist = path.join(root, "dist");
  });
  afterEach(() => remove());

  const oldTree = (): void => {
    mkdirSync(path.join(dist, "grep"), { recursive: true });
    writeFileSync(path.join(dist, "index.js"), "old");
    writeFileSync(path.join(dist, "grep", "scan-worker.js"), "old worker");
    writeFileSync(path.join(dist, ".build-inputs"), "old digest\n");
  };

  it("compiles beside dist/ while the old tree stays whole, then renames the new tree into place", () => {
    oldTree();
    const seen: { outDir: string; index: string; worker: string }[] = [];
    build({
      dist,
      compile: (outDir) => {
        seen.push({
          outDir,
          index: readFileSync(path.join(dist, "index.js"), "utf8"),
          worker: readFileSync(path.join(dist, "grep", "scan-worker.js"), "utf8"),
        });
        writeFileSync(path.join(outDir, "index.js"), "new");
      },
    });
    expect(seen).toHaveLength(1);
    expect(path.dirname(seen[0]!.outDir)).toBe(root);
    expect(seen[0]!.outDir).not.toBe(dist);
    expect(seen[0]).toMatchObject({ index: "old", worker: "old worker" });
    expect(readFileSync(path.join(dist, "index.js"), "utf8")).toBe("new");
    // The old tree went whole: nothing of it is left beside the new one.
    expect(existsSync(path.join(dist, "grep"))).toBe(false);
    expect(readFileSync(path.join(dist, ".build-inputs"), "utf8")).toBe(`${inputsDigest()}\n`);
    expect(statSync(dist).mode & 0o755).toBe(0o755);
    expect(readdirSync(root)).toEqual(["dist"]);
  });

  it.skipIf(process.platform === "win32")("makes the bin executable before the tree is in place (POSIX modes only)", () => {
    build({ dist, compile: (outDir) => writeFileSync(path.join(outDir, "index.js"), "new", { mode: 0o644 }) });
    expect(statSync(path.join(dist, "index.js")).mode & 0o111).toBe(0o111);
  });

  it("builds the first tree when there is no dist/ yet", () => {
    build({ dist, compile: (outDir) => writeFileSync(path.join(outDir, "index.js"), "first") });
    expect(readFileSync(path.join(dist, "index.js"), "utf8")).toBe("first");
    expect(readdirSync(root)).toEqual(["dist"]);
  });

  it("leaves the old tree as it was, and no temporary folder, when the compiler fails half way", () => {
    oldTree();
    expect(() =>
      build({
        dist,
        compile: (outDir) => {
          writeFileSync(path.join(outDir, "index.js"), "half");
          throw new Error("tsc exited with 2");
        },
      }),
    ).toThrow("tsc exited with 2");
    expect(readFileSync(path.join(dist, "index.js"), "utf8")).toBe("old");
    expect(readFileSync(path.join(dist, ".build-inputs"), "utf8")).toBe("old digest\n");
    expect(readdirSync(root)).toEqual(["dist"]);
  });
});
