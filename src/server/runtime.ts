/**
 * The runtime value (STYLE 25): every process resource in one value, built by
 * the composition roots (src/index.ts; tests build their own) and passed down —
 * to each server, into each tool call's context and to each Sandbox. Nothing of
 * it lives in a module, so two runtimes (a test's two strategies) run side by
 * side in one process.
 */
import { ScanWorkers } from "../grep/index.js";
import { CheckpointCache, MediaSlots } from "../reading/index.js";
import { sandboxRuntime, type SandboxRuntime, type StrategyName } from "../sandbox/index.js";
import type { ToolRuntime } from "../tools/context.js";
import { DescriptorBudget } from "../walking/index.js";
import type { Catalogs } from "./catalog.js";
import { HeapSettle } from "./heap-settle.js";

/**
 * The process resources: the sandbox's strategy and file locks, the cache, descriptors and scan workers the
 * tools share, the server's catalogs, and the settling of the heap between calls.
 */
export interface Runtime extends SandboxRuntime, ToolRuntime {
  readonly catalogs: Catalogs;
  readonly heap: HeapSettle;
}

/** A runtime with platform strategy `strategy` (by default the one this platform runs; tests pick each). */
export function createRuntime(strategy?: StrategyName): Runtime {
  return {
    ...sandboxRuntime(strategy),
    cache: new CheckpointCache(),
    descriptors: new DescriptorBudget(),
    scanWorkers: new ScanWorkers(),
    media: new MediaSlots(),
    catalogs: new WeakMap(),
    heap: new HeapSettle(),
  };
}
