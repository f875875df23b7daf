/**
 * Facts of the machine the server runs on that do not depend on the strategy:
 * both strategies on one machine must agree on them (a procfd server and a
 * portable one read the same paths and share the same swap locks), so they
 * are read here once, not chosen with the strategy. With the two strategy files and the choice
 * (index.ts), the only code that branches on the platform. Also the two
 * helpers both strategies use to open entries of a walked directory.
 */
import syncFs, { openSync, type Dirent } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import type { EntryOpen } from "../strategy.js";

/** Windows: paths take either separator, links need a privilege, and rename never replaces a directory. */
export const WINDOWS = process.platform === "win32";

/** This platform's name as a message names it (a Windows path given here: tools/shared.ts's note). */
export const SYSTEM_NAME = ({ linux: "Linux", darwin: "macOS", freebsd: "FreeBSD" } as Record<string, string>)[process.platform] ?? process.platform;

/** One or more path separators, as a path of this platform spells them. */
export const SEPARATORS = WINDOWS ? /[\\/]+/ : /\/+/;

/** A path that ends in a separator, or in a separator and `.` (`x/`, `x/.`): it names a directory. */
export const TRAILING_SEPARATOR = WINDOWS ? /[\\/]\.?$/ : /\/\.?$/;

// open(2) refuses a path this long with ENAMETOOLONG at once; realpath(3) may walk it first, and
// mkdir -p walks up one component per call, so without this bound a 66 KB path costs minutes.
/** The longest path (in bytes) this platform opens. */
export const PATH_MAX = process.platform === "linux" ? 4096 : WINDOWS ? 32_767 : 1024;

const ROOT = path.parse(process.execPath).root;

/**
 * The working directory `inWorkingDir` goes back to: the process's own when it first ran (the root when that
 * was removed; nothing can use it then anyway). Kept, not asked again: every chdir clears Node's copy, so each
 * step asked the kernel (getcwd), a twentieth of a search's main thread over installed packages.
 */
let home: string | undefined;

function homeDir(): string {
  if (home === undefined) {
    try {
      home = process.cwd();
    } catch {
      home = ROOT;
    }
  }
  return home;
}

/**
 * Runs `op` with `dir` as the process's working directory and changes back, in one synchronous step: no
 * other code (another call, another runtime's strategy) ever runs with it changed, and the server resolves
 * every path absolutely anyway. Node has no openat(2): a bare name opened here is looked up in `dir` alone.
 * @throws when `dir` cannot be entered (and then nothing ran), or what `op` throws
 */
export function inWorkingDir<T>(dir: string, op: () => T): T {
  const back = homeDir();
  process.chdir(dir);
  try {
    return op();
  } finally {
    try {
      process.chdir(back);
    } catch {
      // Removed meanwhile: the root from now on, not a failed chdir every time.
      process.chdir((home = ROOT));
    }
  }
}

/** Opens each of `names` as `reach + name`, one open(2) each: what a strategy does where it has nothing cheaper. */
export function openEach(reach: string, names: readonly string[], flags: number): EntryOpen[] {
  return names.map((name) => {
    try {
      return { fd: openSync(reach + name, flags) };
    } catch (error) {
      return { error };
    }
  });
}

// A directory this small (st_size, in bytes; 0 says nothing) is read in one synchronous burst unless the
// walk lets it be read in the thread pool: down a chain thousands of levels deep, a thread-pool round trip
// per directory made a walk ten times slower than find. readdirSync keeps fs.readdir's order (libuv sorts
// by name), which listings promise.
const SMALL_DIR_BYTES = 16 * 1024;

/**
 * The entries of the directory at `at`, whose st_size is `size`: in the thread pool when `inPool` (a
 * directory the walk reads ahead, beside its own work: read synchronously, a wide tree's walk was its
 * readdirs one after another, 1.4-2x find alone) or when it is large (a synchronous read would hold the
 * event loop), else at once.
 */
export function readDirEntries(at: string, size: number, inPool: boolean): Dirent[] | Promise<Dirent[]> {
  // Through the module objects, as every directory read of the sandbox is, so tests can watch which are read.
  return !inPool && size > 0 && size <= SMALL_DIR_BYTES ? syncFs.readdirSync(at, { withFileTypes: true }) : fs.readdir(at, { withFileTypes: true });
}
