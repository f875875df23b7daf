import { defineConfig } from "vitest/config";

// Two projects (`npm test` runs both; `--project unit` or `--project e2e` runs one):
// - unit: __tests__/unit/, mirroring src/ folder by folder. Everything runs in process from the
//   sources, the MCP server over an in-memory transport (support/in-process.ts), the scan worker's
//   code on the calling thread: no build, so a test file reruns in about two seconds after an edit.
// - e2e: __tests__/e2e/, where the process boundary is the subject (kills, exit codes, raw stdio
//   bytes, the package, the Inspector, privilege, descriptor limits, a full disk, a spawned HTTP
//   server, the real scan worker thread). These run dist/, so their global setup rebuilds it first
//   when a build input changed.
export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // The portable strategy changes the working directory (process.chdir) as it walks: one process per file.
    pool: "forks",
    // Vitest's default is one fork fewer than the cores: one on a two-core machine, where most test
    // time waits on spawned servers and the file system. Two forks use both cores.
    maxWorkers: 2,
    projects: [
      { extends: true, test: { name: "unit", include: ["__tests__/unit/**/*.test.ts"] } },
      { extends: true, test: { name: "e2e", include: ["__tests__/e2e/**/*.test.ts"], globalSetup: ["__tests__/support/global-setup.ts"] } },
    ],
  },
});
