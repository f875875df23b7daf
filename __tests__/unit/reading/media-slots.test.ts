/**
 * MediaSlots (issue 28 row 4): at most N media reads run at once, the others in order, and a call cancelled
 * while it waits leaves the queue without ever running.
 */
import { describe, expect, it } from "vitest";
import { MediaSlots } from "../../../src/reading/media-slots.js";

/** A read that runs until released, recording when it started. */
function gate() {
  let release!: () => void;
  const done = new Promise<void>((resolve) => (release = resolve));
  return { done, release };
}

describe("MediaSlots", () => {
  it("runs at most its slots at once, the rest in the order they came", async () => {
    const slots = new MediaSlots(2);
    const gates = Array.from({ length: 5 }, () => gate());
    const started: number[] = [];
    let most = 0;
    const runs = gates.map((g, i) =>
      slots.run(undefined, async () => {
        started.push(i);
        most = Math.max(most, slots.running);
        await g.done;
        return i;
      }),
    );
    await expect.poll(() => started.length).toBe(2);
    for (const g of gates) {
      g.release();
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(await Promise.all(runs)).toEqual([0, 1, 2, 3, 4]);
    expect(started).toEqual([0, 1, 2, 3, 4]);
    expect(most).toBe(2);
    expect(slots.running).toBe(0);
  });

  it("a call cancelled while it waits rejects with the reason and never runs; a failed read frees its slot", async () => {
    const slots = new MediaSlots(1);
    const first = gate();
    const running = slots.run(undefined, () => first.done);
    const controller = new AbortController();
    let ran = false;
    const waiting = slots.run(controller.signal, async () => {
      ran = true;
    });
    controller.abort(new Error("the client went away"));
    await expect(waiting).rejects.toThrow("the client went away");
    first.release();
    await running;
    await expect(slots.run(undefined, () => Promise.reject(new Error("unreadable")))).rejects.toThrow("unreadable");
    expect(await slots.run(undefined, async () => "next")).toBe("next");
    expect(ran).toBe(false);
    expect(slots.running).toBe(0);
  });
});
