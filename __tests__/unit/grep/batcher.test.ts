/**
 * The batcher owns every file handed to it (grep/batcher.ts): each is closed exactly once — when its
 * batch is merged, or by closeAll — and a batch whose count failed stays open until closeAll, as a
 * worker may still be reading it.
 */
import { describe, expect, it } from "vitest";
import { Batcher, type BatchFile } from "../../../src/grep/batcher.js";
import { escapeControls } from "../../../src/kernel/escape.js";

function files(n: number) {
  const closes = new Array<number>(n).fill(0);
  const opened = closes.map((_, i) => ({ fd: 100 + i, size: 10, close: () => void (closes[i] = (closes[i] ?? 0) + 1) }));
  return { opened, closes };
}

describe("Batcher", () => {
  it("closes each file once, after its batch is merged, and closeAll closes nothing twice", async () => {
    const { opened, closes } = files(7);
    const merged: number[][] = [];
    const batcher = new Batcher<number>(
      {
        count: async (batch) => batch.length,
        merge: async (batch: readonly BatchFile[]) => {
          // Still open while merged: the merge may scan a file again.
          expect(batch.map((f) => closes[f.opened.fd - 100])).toEqual(batch.map(() => 0));
          merged.push(batch.map((f) => f.opened.fd));
        },
      },
      3,
    );
    for (const f of opened) await batcher.add(f, escapeControls(`/d/${f.fd}`));
    batcher.flush();
    await batcher.settled();
    expect(merged).toEqual([[100, 101, 102], [103, 104, 105], [106]]);
    expect(closes).toEqual([1, 1, 1, 1, 1, 1, 1]);
    batcher.closeAll();
    expect(closes).toEqual([1, 1, 1, 1, 1, 1, 1]);
  });

  it("keeps a batch whose count failed open until closeAll, and closeAll also closes the files not yet sent", async () => {
    const { opened, closes } = files(5);
    const batcher = new Batcher<number>(
      {
        count: async (batch) => {
          if (batch[0]?.opened.fd === 100) throw new Error("worker failed");
          return batch.length;
        },
        merge: async () => undefined,
      },
      2,
    );
    for (const f of opened) batcher.add(f, escapeControls(`/d/${f.fd}`));
    await expect(batcher.settled()).rejects.toThrow("worker failed");
    expect(batcher.failure).toBeDefined();
    // Nothing merged after the failed batch: every file is still open, the fifth one not even sent.
    expect(closes).toEqual([0, 0, 0, 0, 0]);
    batcher.closeAll();
    expect(closes).toEqual([1, 1, 1, 1, 1]);
    batcher.closeAll();
    expect(closes).toEqual([1, 1, 1, 1, 1]);
  });

  it("does not close again a batch closeAll closed while its merge was still running", async () => {
    const { opened, closes } = files(2);
    let release = (): void => undefined;
    const merging = new Promise<void>((resolve) => {
      release = resolve;
    });
    let started = (): void => undefined;
    const mergeStarted = new Promise<void>((resolve) => {
      started = resolve;
    });
    const batcher = new Batcher<number>(
      {
        count: async (batch) => batch.length,
        merge: async () => {
          started();
          await merging;
        },
      },
      2,
    );
    for (const f of opened) batcher.add(f, escapeControls(`/d/${f.fd}`));
    await mergeStarted;
    batcher.closeAll();
    expect(closes).toEqual([1, 1]);
    release();
    await batcher.settled();
    expect(closes).toEqual([1, 1]);
  });
});
