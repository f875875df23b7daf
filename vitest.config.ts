import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["__tests__/**/*.test.ts"],
    // Suites spawn dist/index.js and the regex worker runs from dist/: build it first, when stale.
    globalSetup: ["__tests__/support/global-setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
  },
});
