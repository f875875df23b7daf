/**
 * Facts of the machine the server runs on that do not depend on the strategy:
 * both strategies on one machine must agree on them (a procfd server and a
 * portable one read the same paths and share the same swap locks), so they
 * are read here once, not chosen with the strategy. With the two strategy files and the choice
 * (index.ts), the only code that branches on the platform.
 */
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
