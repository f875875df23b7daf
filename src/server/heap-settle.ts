/**
 * Gives the main thread's garbage back between tool calls (SPEC §23, memory). A search of a large tree
 * leaves tens of megabytes of per-file garbage that survived a scavenge or two in V8's old space, and
 * V8 may not collect it for several calls: one server running the bench's fifteen searches in turn
 * peaked at 155-215 MB by that timing alone, with 23 MB live between calls. After a call, when the
 * heap has grown by more than GROWTH_BYTES since the last collection, the old space is collected
 * in a task of its own: off the call's path, and at most once per that much garbage.
 */
import v8 from "node:v8";
import vm from "node:vm";

/** A full collection, run in a task of its own; resolves when it is done. */
export type Collector = () => Promise<void>;

// About what one search of the bench's 100,000-file tree leaves behind; calls that allocate little never reach it.
const GROWTH_BYTES = 32 * 1024 * 1024;

/**
 * V8's collector, where the runtime lets it be had: Node's --expose-gc, set for a moment to make one
 * context with it, and unset again (nothing else sees a `gc` global); undefined elsewhere (then no settling).
 */
export function v8Collector(): Collector | undefined {
  try {
    const given = (globalThis as { gc?: unknown }).gc;
    let gc = typeof given === "function" ? given : undefined;
    if (gc === undefined) {
      v8.setFlagsFromString("--expose-gc");
      try {
        const made: unknown = vm.runInNewContext("gc");
        if (typeof made === "function") gc = made;
      } finally {
        v8.setFlagsFromString("--no-expose-gc");
      }
    }
    if (gc === undefined) return undefined;
    const collect = gc as (options: { type: "major"; execution: "async" }) => Promise<void> | undefined;
    return async () => {
      await collect({ type: "major", execution: "async" });
    };
  } catch {
    return undefined;
  }
}

const usedHeap = (): number => v8.getHeapStatistics().used_heap_size;

/** The policy: collect when the heap has grown by `growth` since the last collection seen. */
export class HeapSettle {
  // The heap's size after the last collection seen (this one's, or V8's own when it left less).
  private floor: number;
  private running: Promise<void> | undefined;

  constructor(
    private readonly collect: Collector | undefined = v8Collector(),
    private readonly used: () => number = usedHeap,
    private readonly growth = GROWTH_BYTES,
  ) {
    this.floor = used();
  }

  /** Called when a tool call has ended: starts a collection when one is due; the promise is for tests. */
  afterCall(): Promise<void> | undefined {
    if (this.collect === undefined || this.running !== undefined) return this.running;
    const now = this.used();
    if (now < this.floor) this.floor = now;
    if (now - this.floor <= this.growth) return undefined;
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
