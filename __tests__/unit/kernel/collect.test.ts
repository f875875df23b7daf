/** collectGarbage: a full collection on demand frees what nothing holds any more. */
import { expect, it } from "vitest";
import { collectGarbage } from "../../../src/kernel/collect.js";

it("frees tens of MB of arrays nothing refers to", () => {
  collectGarbage();
  const before = process.memoryUsage().heapUsed;
  let garbage: number[][] | undefined = Array.from({ length: 64 }, () => Array.from({ length: 100_000 }, (_, i) => i + 0.5));
  const held = process.memoryUsage().heapUsed;
  expect(held - before).toBeGreaterThan(40 * 1024 * 1024);
  expect(garbage.length).toBe(64);
  garbage = undefined;
  collectGarbage();
  expect(process.memoryUsage().heapUsed - before).toBeLessThan(10 * 1024 * 1024);
});
