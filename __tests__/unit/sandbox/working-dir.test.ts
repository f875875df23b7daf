/**
 * inWorkingDir (sandbox/platform/host.ts), the one step in which both strategies open names relative to a
 * directory: it runs its operation there and goes back to the process's own working directory, which it asks
 * of the kernel once, not at every step; once that directory is removed, it goes back to the root.
 */
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, it, vi } from "vitest";
import { tempDir } from "../../support/fixtures.js";

let tmp: string;
let remove: () => Promise<void>;
const start = process.cwd();

beforeEach(async () => {
  ({ dir: tmp, remove } = await tempDir("working-dir-"));
  for (const name of ["a", "b", "home"]) fs.mkdirSync(path.join(tmp, name));
  fs.writeFileSync(path.join(tmp, "a", "in-a"), "");
  fs.writeFileSync(path.join(tmp, "b", "in-b"), "");
  vi.resetModules();
});

afterEach(async () => {
  vi.restoreAllMocks();
  process.chdir(start);
  await remove();
});

// The module fresh: what it keeps starts over.
const fresh = async (): Promise<typeof import("../../../src/sandbox/platform/host.js")> => import("../../../src/sandbox/platform/host.js");

it("runs each step in its directory and goes back to the process's own, asking the kernel for it once", async () => {
  process.chdir(path.join(tmp, "home"));
  const home = process.cwd();
  const { inWorkingDir } = await fresh();
  const cwd = vi.spyOn(process, "cwd");
  const seen = ["a", "b", "a", "b"].map((d) => inWorkingDir(path.join(tmp, d), () => fs.readdirSync(".").join(",")));
  const asked = cwd.mock.calls.length;
  expect(seen).toEqual(["in-a", "in-b", "in-a", "in-b"]);
  expect(asked).toBeLessThanOrEqual(1);
  expect(process.cwd()).toBe(home);
});

it("goes back to the root once the process's working directory is removed, and keeps doing so without failing", async () => {
  process.chdir(path.join(tmp, "home"));
  const { inWorkingDir } = await fresh();
  expect(inWorkingDir(path.join(tmp, "a"), () => fs.existsSync("in-a"))).toBe(true);
  fs.rmdirSync(path.join(tmp, "home"));
  const chdir = vi.spyOn(process, "chdir");
  expect(inWorkingDir(path.join(tmp, "b"), () => fs.existsSync("in-b"))).toBe(true);
  expect(process.cwd()).toBe(path.parse(process.cwd()).root);
  chdir.mockClear();
  expect(inWorkingDir(path.join(tmp, "a"), () => fs.existsSync("in-a"))).toBe(true);
  // In and back out: no failed attempt at the removed directory first.
  expect(chdir.mock.calls.map(([d]) => d)).toEqual([path.join(tmp, "a"), path.parse(process.cwd()).root]);
});
