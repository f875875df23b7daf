/** collectGarbage and the collector's `later`: a full collection on demand frees what nothing holds any more. */
import vm from "node:vm";
import { expect, it } from "vitest";
import { collectGarbage, garbageCollector } from "../../../src/kernel/collect.js";

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

it("collects in a task of its own, leaving no gc global in this context or a new one", async () => {
  const before = typeof (globalThis as { gc?: unknown }).gc;
  const gc = garbageCollector();
  expect(gc).toBeDefined();
  expect(typeof (globalThis as { gc?: unknown }).gc).toBe(before);
  expect(vm.runInNewContext("typeof gc")).toBe(before);
  let held: object | undefined = { payload: new Array(1000).fill(0) };
  const ref = new WeakRef(held);
  held = undefined;
  await gc?.later();
  expect(held).toBeUndefined();
  expect(ref.deref()).toBeUndefined();
});
