/**
 * Tests build what they spawn: the global setup (support/global-setup.ts) has brought dist/
 * up to date before any suite ran, so the server the suites spawn and the regex worker the
 * in-process suites start (src/grep/scan-pool.ts takes it from dist/) are today's sources.
 */
import { spawnSync } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const BUILD = fileURLToPath(new URL("../scripts/build.mjs", import.meta.url));
const DIST = new URL("../dist/", import.meta.url);

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
