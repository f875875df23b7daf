/**
 * Vitest global setup: before any suite runs, dist/ is rebuilt unless it was built from
 * exactly the current sources (scripts/build.mjs compares a digest of every input), so
 * `npx vitest run __tests__/one.test.ts` never spawns a stale server or regex worker.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { TestProject } from "vitest/node";

const BUILD = fileURLToPath(new URL("../../scripts/build.mjs", import.meta.url));

/**
 * Brings dist/ up to date with src/.
 * @throws when the build fails, naming the command and its exit status
 */
export function ensureFreshBuild(): void {
  const ran = spawnSync(process.execPath, [BUILD, "--if-stale"], { stdio: ["ignore", "inherit", "inherit"] });
  if (ran.status !== 0) {
    throw new Error(`node scripts/build.mjs --if-stale exited with ${ran.status ?? ran.signal}: fix the build before testing`);
  }
}

/** Builds once per run, and again before each rerun in watch mode. */
export default function setup(project: TestProject): void {
  ensureFreshBuild();
  project.onTestsRerun(() => ensureFreshBuild());
}
