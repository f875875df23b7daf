/**
 * Facts of the machine the server runs on that do not depend on the strategy:
 * both strategies on one machine must agree on them (a procfd server and a
 * portable one share the same swap locks), so they are read here once, not
 * chosen with the strategy. With the two strategy files and the choice
 * (index.ts), the only code that branches on the platform.
 */
import { readFileSync } from "node:fs";

/** Windows: paths take either separator, links need a privilege, and rename never replaces a directory. */
export const WINDOWS = process.platform === "win32";

/** One or more path separators, as a path of this platform spells them. */
export const SEPARATORS = WINDOWS ? /[\\/]+/ : /\/+/;

/** A path that ends in a separator, or in a separator and `.` (`x/`, `x/.`): it names a directory. */
export const TRAILING_SEPARATOR = WINDOWS ? /[\\/]\.?$/ : /\/\.?$/;

// open(2) refuses a path this long with ENAMETOOLONG at once; realpath(3) may walk it first, and
// mkdir -p walks up one component per call, so without this bound a 66 KB path costs minutes.
/** The longest path (in bytes) this platform opens. */
export const PATH_MAX = process.platform === "linux" ? 4096 : WINDOWS ? 32_767 : 1024;

/** A process's start time (clock ticks since boot, /proc/<pid>/stat field 22), or "" where there is no /proc. */
export function startTimeOf(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces and parentheses: count from its closing one.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? "";
  } catch {
    return "";
  }
}

/** This boot's id, or "" where the kernel does not tell it. */
export function bootId(): string {
  try {
    return readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
  } catch {
    return "";
  }
}
