/**
 * Garbage collection on demand, after work that left a large heap of garbage behind it. V8 grows its heap
 * until it decides to collect, so a second large edit started before that stacks its garbage on the first's
 * (the server's peak grew by 16 MB an edit, past SPEC §23's 150 MB on the third), and a large search's
 * per-file garbage can stay in the old space for several calls (server/heap-settle.ts). The collector is
 * V8's, reached once through `--expose-gc` set at run time for one new context and unset again (nothing
 * else sees a `gc` global); where that is refused (not Node), nothing happens.
 */
import v8 from "node:v8";
import vm from "node:vm";

/** A full collection now, or in a task of its own (after what runs now, e.g. a result being sent). */
export interface GarbageCollector {
  now(): void;
  later(): Promise<void>;
}

type Gc = (options?: { type: "major"; execution: "async" }) => Promise<void> | undefined;

// The collector, once looked up: null where it cannot be had. A pure cache of a process fact.
let collector: GarbageCollector | null | undefined;

function lookUp(): GarbageCollector | null {
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
    if (gc === undefined) return null;
    const run = gc as Gc;
    return {
      now: () => void run(),
      later: async () => {
        await run({ type: "major", execution: "async" });
      },
    };
  } catch {
    return null;
  }
}

/** V8's collector, or undefined where the runtime does not give it. */
export function garbageCollector(): GarbageCollector | undefined {
  collector ??= lookUp();
  return collector ?? undefined;
}

/** Runs a full garbage collection when the runtime allows it; a no-op otherwise. */
export function collectGarbage(): void {
  garbageCollector()?.now();
}
