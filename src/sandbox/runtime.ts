/**
 * The sandbox's share of the process resources (the runtime value the
 * composition roots build): the platform strategy, chosen once, the table
 * of in-process file locks and the waits for server lock files. Every Sandbox of one runtime acts through them.
 */
import { FileLocks, LockWaits } from "./locks.js";
import { createStrategy } from "./platform/index.js";
import type { Strategy, StrategyName } from "./strategy.js";

/** What every Sandbox of a process shares. */
export interface SandboxRuntime {
  readonly strategy: Strategy;
  readonly locks: FileLocks;
  readonly lockWaits: LockWaits;
}

/** The sandbox's resources with strategy `name` (by default the one this platform runs). */
export function sandboxRuntime(name?: StrategyName): SandboxRuntime {
  return { strategy: createStrategy(name), locks: new FileLocks(), lockWaits: new LockWaits() };
}
