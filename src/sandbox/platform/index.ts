/**
 * The choice of the platform strategy, made once per runtime: `procfd`
 * (procfd.ts) where /proc/self/fd exists, `portable` (portable.ts) elsewhere.
 * Each strategy is one file implementing the whole of strategy.ts's
 * interface; callers use the runtime's and never branch on the platform (the
 * lint rule in biome.jsonc keeps `process.platform` and /proc paths in this
 * folder).
 */
import { existsSync } from "node:fs";
import type { Strategy, StrategyName } from "../strategy.js";
import { portable } from "./portable.js";
import { procfd } from "./procfd.js";

export { SEPARATORS, SYSTEM_NAME, TRAILING_SEPARATOR, WINDOWS } from "./host.js";

// Node has no openat/linkat/renameat bindings, so /proc/self/fd paths are the only way to act
// relative to an opened directory. BOUNDED_FS_STRATEGY=portable runs the portable path on Linux
// (tests run every confinement and walk suite under both, side by side: each runtime has its own).
const PROC_FD_AVAILABLE = process.platform === "linux" && existsSync("/proc/self/fd");

/** The strategies this platform can run (both on Linux, portable elsewhere). */
export function availableStrategies(): StrategyName[] {
  return PROC_FD_AVAILABLE ? ["procfd", "portable"] : ["portable"];
}

/**
 * The strategy `name`, or the one this platform runs (procfd where /proc/self/fd exists, unless
 * BOUNDED_FS_STRATEGY=portable); chosen once, by the composition root that builds the runtime.
 * @throws when `name` cannot run on this platform
 */
export function createStrategy(
  name: StrategyName = PROC_FD_AVAILABLE && process.env.BOUNDED_FS_STRATEGY !== "portable" ? "procfd" : "portable",
): Strategy {
  if (!availableStrategies().includes(name)) throw new Error(`Strategy ${name} is not available on ${process.platform}`);
  return name === "procfd" ? procfd() : portable;
}
