/**
 * The platform strategy in use, chosen once at startup: `procfd` where
 * /proc/self/fd exists, `portable` elsewhere. Callers ask `strategy()` and
 * never branch on the platform.
 */
import { existsSync } from "node:fs";
import { portable } from "./portable.js";
import { procfd } from "./procfd.js";
import type { Strategy, StrategyName } from "./strategy.js";

// Node has no openat/linkat/renameat bindings, so /proc/self/fd paths are the only way to act
// relative to an opened directory. BOUNDED_FS_STRATEGY=portable runs the portable path on Linux
// (tests run every confinement and walk suite under both).
const PROC_FD_AVAILABLE = process.platform === "linux" && existsSync("/proc/self/fd");
let active: Strategy = PROC_FD_AVAILABLE && process.env.BOUNDED_FS_STRATEGY !== "portable" ? procfd : portable;

/** The strategy in use. */
export function strategy(): Strategy {
  return active;
}

/** The strategies this platform can run (both on Linux, portable elsewhere). */
export function availableStrategies(): StrategyName[] {
  return PROC_FD_AVAILABLE ? ["procfd", "portable"] : ["portable"];
}

/**
 * Switches the strategy (tests run the same suites under each).
 * @throws when `name` cannot run on this platform
 */
export function useStrategy(name: StrategyName): void {
  if (!availableStrategies().includes(name)) throw new Error(`Strategy ${name} is not available on ${process.platform}`);
  active = name === "procfd" ? procfd : portable;
}
