/**
 * The two implementations of strategy.ts's interface, and the choice between
 * them, made once per runtime: `procfd` where /proc/self/fd exists, `portable`
 * elsewhere. Callers use the runtime's strategy and never branch on the platform.
 */
import syncFs, {
  closeSync,
  existsSync,
  fstatSync,
  lstatSync,
  openSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  statSync,
  type Dirent,
} from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { errnoError, SafeFsError } from "./errors.js";
import { DIR_FLAGS, DIR_NOFOLLOW_FLAGS } from "./flags.js";
import { copyByChunks, copyByKernel, holdByCwd, holdThroughFd } from "./held.js";
import { type FileObjectId, sameFile } from "./identity.js";
import { visible } from "./names.js";
import type { OpenedDir, Reach, Read, Strategy, StrategyName } from "./strategy.js";

/*
 * procfd (Linux): a directory is opened once and every child is reached
 * through `/proc/self/fd/<fd>/<name>`, which the kernel resolves to the very
 * directory that was opened and verified, whatever happens to its path
 * afterwards. Walks open each directory O_DIRECTORY|O_NOFOLLOW through its
 * opened parent, so a directory swapped for a symlink is refused (ENOTDIR),
 * never followed out of the allowed directories.
 */

const FD_DIR = "/proc/self/fd/";

/** The /proc path that reaches the object behind `fd` whatever happens to its name. */
function fdLink(fd: number): string {
  return `${FD_DIR}${fd}`;
}

/** The device and inode of what `fd` holds: numbers when exact, else bigints (the same form for the same object). */
function objectIdOf(fd: number): FileObjectId & { size: number } {
  const st = fstatSync(fd);
  if (st.ino <= Number.MAX_SAFE_INTEGER && st.dev <= Number.MAX_SAFE_INTEGER) return { dev: st.dev, ino: st.ino, size: st.size };
  const exact = fstatSync(fd, { bigint: true });
  return { dev: exact.dev, ino: exact.ino, size: st.size };
}

// A directory this small (st_size, in bytes; 0 says nothing) is read in one synchronous burst: down a
// chain thousands of levels deep, a thread-pool round trip per directory made a walk ten times slower
// than find. readdirSync keeps fs.readdir's order (libuv sorts by name), which listings promise.
const SMALL_DIR_BYTES = 16 * 1024;

async function readChildThroughFd(parent: Reach, name: string): Promise<Read> {
  let fd: number;
  let id: FileObjectId;
  try {
    // Opened synchronously: one lookup in a directory already open, where a thread-pool round
    // trip per directory doubled the walk time over 10,000 small directories (SPEC §6).
    fd = openSync(parent.reach + name, DIR_NOFOLLOW_FLAGS);
  } catch (error) {
    return { error };
  }
  let entries: Dirent[];
  try {
    const { dev, ino, size } = objectIdOf(fd);
    id = { dev, ino };
    const small = size > 0 && size <= SMALL_DIR_BYTES;
    entries = visible(small ? syncFs.readdirSync(fdLink(fd), { withFileTypes: true }) : await fs.readdir(fdLink(fd), { withFileTypes: true }));
  } catch (error) {
    closeSync(fd);
    return { error };
  }
  // Held while the walk is in the directory, also for leaves: a content search opens each file
  // through it, which the kernel resolves in this very directory, so no readlink per file is
  // needed (that check and the path checks after it were a sixth of a 100,000-file search). The
  // walk may release it to bound its descriptors; `id` then checks the directory it reopens.
  return { entries, reach: `${fdLink(fd)}/`, fd, id };
}

function reopenThroughFd(parent: Reach, name: string, shown: string, id: FileObjectId | undefined): Reach {
  const fd = openSync(parent.reach + name, DIR_NOFOLLOW_FLAGS);
  try {
    const now = objectIdOf(fd);
    if (id === undefined || now.dev !== id.dev || now.ino !== id.ino) {
      throw new SafeFsError(`Directory replaced during the walk: ${shown}`, { code: "ESTALE" });
    }
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  return { reach: `${fdLink(fd)}/`, fd };
}

/** The soft RLIMIT_NOFILE as the kernel reports it (Node raises it to the hard limit at start). */
function softOpenFileLimit(): number {
  try {
    const row = /^Max open files\s+(\S+)/m.exec(readFileSync("/proc/self/limits", "latin1"));
    const soft = Number(row?.[1]);
    return row?.[1] === "unlimited" ? Infinity : Number.isFinite(soft) && soft > 0 ? soft : 1024;
  } catch {
    return 1024;
  }
}

/** A procfd strategy; it reads the open-file limit once, when a walk first asks. */
const procfd = (): Strategy => {
  let openFileLimit: number | undefined;
  return {
    name: "procfd",
    linksSymlinks: true,
    async openDir(target, noFollow) {
      const handle = await fs.open(target, noFollow ? DIR_NOFOLLOW_FLAGS : DIR_FLAGS);
      try {
        const real = await fs.readlink(fdLink(handle.fd));
        const reach = `${fdLink(handle.fd)}/`;
        const dir: OpenedDir = {
          real,
          reach,
          child: (name) => reach + name,
          hold: (name, expected) => holdThroughFd(dir, name, expected),
          close: () => handle.close(),
        };
        return dir;
      } catch (err) {
        await handle.close();
        throw err;
      }
    },
    realPathOf: (handle) => fs.readlink(fdLink(handle.fd)),
    realPathOfFdSync(fd, reach, name) {
      // `reach` is then a verified directory's fd (walks open each one O_NOFOLLOW through its parent's,
      // and no validated real path starts with /proc/self/): one plain name opened O_NOFOLLOW in it
      // cannot leave it. Leaf directories are reached by path, so their files are checked by readlink.
      const oneName = name !== "" && name !== "." && name !== ".." && !name.includes("/");
      return oneName && reach.startsWith(FD_DIR) ? undefined : readlinkSync(fdLink(fd));
    },
    readChild: readChildThroughFd,
    reopenChild: reopenThroughFd,
    descriptorLimit: () => (openFileLimit ??= softOpenFileLimit()),
    copyContent: copyByKernel,
  };
};

/*
 * portable (macOS, BSD, Windows — where most desktop users run this server):
 * Node exposes no openat/linkat/renameat, so a directory is checked by its real
 * path and then used by path.
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
 * Tree operations (delete_file, copy_file's trees) have no such window: they
 * hold each directory by entering it and checking its identity (held.ts), at
 * the cost of paths longer than PATH_MAX, which cannot be entered.
 */

// open(2) refuses a path this long with ENAMETOOLONG at once; realpath(3) may walk it first, and
// mkdir -p walks up one component per call, so without this bound a 66 KB path costs minutes.
const PATH_MAX = process.platform === "linux" ? 4096 : process.platform === "win32" ? 32_767 : 1024;

const lstatId = (p: string): { dev: bigint; ino: bigint } => lstatSync(p, { bigint: true });

function changedWhileOpening(shown: string): SafeFsError {
  return new SafeFsError(`File changed while opening it: ${shown}`, { code: "EAGAIN" });
}

const portable: Strategy = {
  name: "portable",
  linksSymlinks: false,
  async openDir(target, noFollow) {
    if (Buffer.byteLength(target) >= PATH_MAX) throw errnoError("ENAMETOOLONG", target);
    if (noFollow && (await fs.lstat(target)).isSymbolicLink()) throw errnoError("ELOOP", target);
    const real = await fs.realpath(target);
    if (!(await fs.stat(real)).isDirectory()) throw errnoError("ENOTDIR", target);
    const reach = real.endsWith(path.sep) ? real : real + path.sep;
    const dir: OpenedDir = {
      real,
      reach,
      child: (name) => reach + name,
      hold: (name, expected) => holdByCwd(dir, name, expected),
      close: async () => {},
    };
    return dir;
  },
  async realPathOf(handle, childPath, shown) {
    const [real, byHandle] = await Promise.all([fs.realpath(childPath), handle.stat({ bigint: true })]);
    if (!sameFile(await fs.stat(real, { bigint: true }), byHandle)) throw changedWhileOpening(shown);
    return real;
  },
  realPathOfFdSync(_fd, reach, name, shown, byHandle, dir) {
    const opened = { dev: BigInt(byHandle.dev), ino: BigInt(byHandle.ino) };
    if (dir !== undefined) {
      // A directory the walk read from its verified parent (readChild): its path is its real path as
      // long as it still leads to that directory, and the name in it to the file opened. A realpath
      // would cost a lookup per component for each component: quadratic in the depth, per file.
      if (!sameFile(lstatId(reach.slice(0, -path.sep.length)), { dev: BigInt(dir.dev), ino: BigInt(dir.ino) })) throw changedWhileOpening(shown);
      if (!sameFile(lstatId(reach + name), opened)) throw changedWhileOpening(shown);
      return reach + name;
    }
    const real = realpathSync.native(reach + name);
    if (!sameFile(statSync(real, { bigint: true }), opened)) throw changedWhileOpening(shown);
    return real;
  },
  async readChild(parent, _name, shown) {
    // Refused before any lookup: past the limit no path reaches it, and the walk says so (SPEC §5).
    if (Buffer.byteLength(shown) >= PATH_MAX) return { error: errnoError("ENAMETOOLONG", shown) };
    let id: FileObjectId;
    try {
      // The parent still the directory read, and the entry a directory, not a symlink swapped in: then the
      // child's path is its real path (a swap between this look and the read stays possible; see above).
      if (
        parent.id !== undefined &&
        !sameFile(lstatId(parent.reach.slice(0, -path.sep.length)), { dev: BigInt(parent.id.dev), ino: BigInt(parent.id.ino) })
      ) {
        // The directory read is no longer at its path (what is there now is another): ENOENT, as for one removed.
        throw new SafeFsError(`Directory gone from its path during the walk: ${parent.reach.slice(0, -path.sep.length)}`, { code: "ENOENT" });
      }
      const st = lstatSync(shown, { bigint: true });
      if (!st.isDirectory()) throw errnoError("ENOTDIR", shown);
      id = { dev: st.dev, ino: st.ino };
    } catch (error) {
      return { error };
    }
    return fs.readdir(shown, { withFileTypes: true }).then(
      (entries) => ({ entries: visible(entries), reach: shown + path.sep, fd: -1, id }),
      (error: unknown) => ({ error }),
    );
  },
  // Its reach is a path and holds no fd, so a walk never releases it and nothing needs reopening.
  reopenChild: (_parent, _name, shown) => ({ reach: shown + path.sep, fd: -1 }),
  descriptorLimit: () => Infinity,
  copyContent: copyByChunks,
};

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
