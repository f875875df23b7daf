/**
 * The portable strategy (macOS, BSD, Windows — where most desktop users run
 * this server): Node exposes no openat/linkat/renameat, so a directory is
 * checked by its real path and then used by path.
 *
 * The remaining race windows, all of this one kind — a path component swapped
 * for a symlink between the check and the use:
 * - a directory verified by `openDir` and then written, listed or created in;
 * - a directory met in a walk between its parent's readdir and its own read;
 * - a file opened O_NOFOLLOW: its parent directories are resolved again by the
 *   open (the handle is then checked by real path and inode, see `realPathOf`);
 * - move_file's check-then-rename for symlinks (link(2) may follow them here)
 *   and for directories on Windows, whose rename never replaces a directory.
 * Each is the best these platforms allow from Node; docs/SECURITY.md lists them.
 */
import { realpathSync, statSync } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { errnoError, SafeFsError } from "./errors.js";
import type { Strategy } from "./strategy.js";

// open(2) refuses a path this long with ENAMETOOLONG at once; realpath(3) may walk it first, and
// mkdir -p walks up one component per call, so without this bound a 66 KB path costs minutes.
const PATH_MAX = process.platform === "linux" ? 4096 : process.platform === "win32" ? 32_767 : 1024;

/** The path-based strategy. */
export const portable: Strategy = {
  name: "portable",
  linksSymlinks: false,
  async openDir(target, noFollow) {
    if (Buffer.byteLength(target) >= PATH_MAX) throw errnoError("ENAMETOOLONG", target);
    if (noFollow && (await fs.lstat(target)).isSymbolicLink()) throw errnoError("ELOOP", target);
    const real = await fs.realpath(target);
    if (!(await fs.stat(real)).isDirectory()) throw errnoError("ENOTDIR", target);
    const reach = real.endsWith(path.sep) ? real : real + path.sep;
    return { real, reach, child: (name) => reach + name, close: async () => {} };
  },
  async realPathOf(handle, childPath, shown) {
    const [real, byHandle] = await Promise.all([fs.realpath(childPath), handle.stat()]);
    const byPath = await fs.stat(real);
    if (byPath.ino !== byHandle.ino || byPath.dev !== byHandle.dev) {
      throw new SafeFsError(`File changed while opening it: ${shown}`, { code: "EAGAIN" });
    }
    return real;
  },
  realPathOfFdSync(_fd, reach, name, shown, byHandle) {
    const real = realpathSync.native(reach + name);
    const byPath = statSync(real, { bigint: true });
    if (byPath.ino !== BigInt(byHandle.ino) || byPath.dev !== BigInt(byHandle.dev)) {
      throw new SafeFsError(`File changed while opening it: ${shown}`, { code: "EAGAIN" });
    }
    return real;
  },
  readChild(_parent, _name, shown) {
    return fs.readdir(shown, { withFileTypes: true }).then(
      (entries) => ({ entries, reach: shown + path.sep, fd: -1 }),
      (error: unknown) => ({ error }),
    );
  },
};
