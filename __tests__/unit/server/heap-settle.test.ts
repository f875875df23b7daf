/**
 * The heap settling between tool calls (server/heap-settle.ts): a collection only when the heap grew past
 * the limit since the last one, never two at once, V8's own collections lowering the floor; a server
 * asking after each call, and a content search's walk at its turns.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { HeapSettle } from "../../../src/server/heap-settle.js";
import { createRuntime } from "../../../src/server/runtime.js";
import { type ToolContext, walkOptions as toolWalkOptions } from "../../../src/tools/context.js";
import { walkFiles } from "../../../src/walking/index.js";
import { describeEachStrategy, tempDir, walkOptions } from "../../support/fixtures.js";
import { call, inProcess } from "../../support/in-process.js";

const MB = 1024 * 1024;

/** A settle over a heap whose size the test sets, counting the collections it starts (each frees to `freesTo`). */
function fakeHeap(growth: number) {
  const heap = { used: 10 * MB, freesTo: 10 * MB, collections: 0 };
  const settle = new HeapSettle(
    async () => {
      heap.collections++;
      heap.used = heap.freesTo;
    },
    () => heap.used,
    growth,
  );
  return { heap, settle };
}

describe("HeapSettle", () => {
  it("collects only past the growth limit, and measures the next growth from what the collection left", async () => {
    const { heap, settle } = fakeHeap(32 * MB);
    heap.used = 42 * MB; // grown by exactly the limit
    expect(settle.settle()).toBeUndefined();
    heap.used = 42 * MB + 1;
    await settle.settle();
    expect(heap.collections).toBe(1);
    expect(heap.used).toBe(10 * MB);
    heap.used = 40 * MB; // 30 MB over what the collection left
    expect(settle.settle()).toBeUndefined();
    heap.used = 43 * MB;
    await settle.settle();
    expect(heap.collections).toBe(2);
  });

  it("starts no second collection while one runs", async () => {
    let release = (): void => undefined;
    let started = 0;
    let used = 5 * MB;
    const settle = new HeapSettle(
      () => {
        started++;
        return new Promise<void>((resolve) => {
          release = () => {
            used = 5 * MB;
            resolve();
          };
        });
      },
      () => used,
      MB,
    );
    used = 200 * MB;
    const first = settle.settle();
    const second = settle.settle();
    expect(started).toBe(1);
    expect(second).toBe(first);
    release();
    await first;
    used = 9 * MB; // 4 MB over what the collection left: within twice that
    expect(settle.settle()).toBeUndefined();
    expect(started).toBe(1);
  });

  it("takes a smaller heap left by V8's own collection as the new floor", async () => {
    const { heap, settle } = fakeHeap(32 * MB);
    heap.used = 4 * MB; // below the 10 MB it started at: V8 collected by itself
    expect(settle.settle()).toBeUndefined();
    heap.used = 37 * MB; // 33 MB over the new floor, 27 over the old one
    await settle.settle();
    expect(heap.collections).toBe(1);
  });

  it("waits for a large heap to double, not for the fixed step", async () => {
    const { heap, settle } = fakeHeap(32 * MB);
    heap.used = 100 * MB; // V8's own collections kept 100 MB live: the floor is now that
    heap.freesTo = 100 * MB;
    await settle.settle(); // 90 MB over the first floor of 10: collects, and leaves 100
    expect(heap.collections).toBe(1);
    heap.used = 199 * MB; // 99 MB over a floor of 100: past the step, not yet doubled
    expect(settle.settle()).toBeUndefined();
    heap.used = 201 * MB;
    await settle.settle();
    expect(heap.collections).toBe(2);
  });

  it("does nothing without a collector, however far the heap grew", () => {
    let used = 10 * MB;
    const settle = new HeapSettle(null, () => used, MB);
    used = 500 * MB;
    expect(settle.settle()).toBeUndefined();
  });
});

describe("a server and the settle", () => {
  it("asks after every call that reached its tool, failed ones too", async () => {
    const { dir, remove } = await tempDir();
    let asked = 0;
    const runtime = createRuntime();
    const settle = new HeapSettle(null);
    settle.settle = () => {
      asked++;
      return undefined;
    };
    const server = await inProcess([dir], { runtime: { ...runtime, heap: settle } });
    try {
      await call(server.client, "list_allowed_directories");
      await call(server.client, "read_text_file", { path: `${dir}/missing.txt` });
      expect(asked).toBe(2);
    } finally {
      await server.close();
      await remove();
    }
  });
});

describeEachStrategy("a content search's walk and the settle", (_, runtime) => {
  it("is told at each turn the walk gives the event loop, and a tool's walk asks the runtime's heap there", async () => {
    const { dir, remove } = await tempDir();
    try {
      mkdirSync(path.join(dir, "d"));
      for (let i = 0; i < 100; i++) writeFileSync(path.join(dir, "d", `f${i}`), "x\n");
      let turns = 0;
      let handed = 0;
      await walkFiles(
        dir,
        { excludePatterns: [], respectGitignore: false },
        (file) => {
          file.close();
          // Synchronous work the walk must give way after (4 ms by the 32nd file, and the 64th, and the 96th).
          if (++handed % 32 === 31) for (const until = performance.now() + 5; performance.now() < until; );
          return undefined;
        },
        () => undefined,
        { ...walkOptions(runtime, [dir]), onTurn: () => turns++ },
      );
      expect(handed).toBe(100);
      // At least those three (a slow machine may take 4 ms over fewer files).
      expect(turns).toBeGreaterThanOrEqual(3);
      let asked = 0;
      const ctx = { walks: undefined, runtime: { descriptors: undefined, heap: { settle: () => asked++ } } } as unknown as ToolContext;
      toolWalkOptions(ctx).onTurn?.();
      expect(asked).toBe(1);
    } finally {
      await remove();
    }
  });
});
