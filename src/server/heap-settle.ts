/**
 * Gives the main thread's garbage back between tool calls and during long walks (SPEC §23, memory). A
 * search of a large tree leaves tens of megabytes of per-file garbage that survived a scavenge or two in
 * V8's old space, and V8 may not collect it for several calls: one server running the bench's fifteen
 * searches in turn peaked at 155-215 MB by that timing alone, with 23 MB live between calls; one search
 * of the 100,000-file tree on a fresh server peaked at 136 MB or at 154-178 MB by the same timing. After a
 * call, and at the turns a content search's walk gives the event loop, when the heap has grown by more than
 * GROWTH_BYTES (or than what the last collection left, when that is more) since the last collection, the
 * old space is collected in a task of its own (kernel/collect.ts): off the call's path, and at most once per
 * that much garbage.
 */
import v8 from "node:v8";
import { garbageCollector } from "../kernel/collect.js";

/** A full collection, run in a task of its own; resolves when it is done. */
export type Collector = () => Promise<void>;

// About what one search of the bench's 100,000-file tree leaves behind; calls that allocate little never reach it.
const GROWTH_BYTES = 32 * 1024 * 1024;

const usedHeap = (): number => v8.getHeapStatistics().used_heap_size;

// V8's collection in a task of its own, the collector looked up when the first one is due (not at start-up:
// that makes a context); where the runtime gives none, it settles at once and nothing is collected.
const collectLater: Collector = () => garbageCollector()?.later() ?? Promise.resolve();

/** The policy: collect when the heap has grown by `growth`, or has doubled if that is more, since the last collection seen. */
export class HeapSettle {
  // The heap's size after the last collection seen (this one's, or V8's own when it left less).
  private floor: number;
  private running: Promise<void> | undefined;

  constructor(
    /** null: never collect. */
    private readonly collect: Collector | null = collectLater,
    private readonly used: () => number = usedHeap,
    private readonly growth = GROWTH_BYTES,
  ) {
    this.floor = used();
  }

  /** Called when a tool call has ended, and at a long walk's turns: starts a collection when one is due; the promise is for tests. */
  settle(): Promise<void> | undefined {
    if (this.collect === null || this.running !== undefined) return this.running;
    const now = this.used();
    if (now < this.floor) this.floor = now;
    // Past twice what was left, not a fixed step, once that is larger: a forced collection stops the thread for
    // time that grows with what is live, so on a large heap it comes no more often than V8's own would.
    if (now - this.floor <= Math.max(this.growth, this.floor)) return undefined;
    const run = this.collect()
      .catch(() => undefined)
      .then(() => {
        this.floor = this.used();
        this.running = undefined;
      });
    this.running = run;
    return run;
  }
}
