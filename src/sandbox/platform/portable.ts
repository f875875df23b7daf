/**
 * The portable strategy (macOS, BSD, Windows — where most desktop users run
 * this server), whole: Node exposes no openat/linkat/renameat, so a directory
 * is checked by its real path and then used by path.
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
 * hold each directory by entering it and checking its identity (`CwdDir`), at
 * the cost of paths longer than PATH_MAX, which cannot be entered.
 */
import fsSync, { lstatSync, realpathSync, statSync, type BigIntStats, type Dirent } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { errnoError, SafeFsError } from "../errors.js";
import { DIR_NOFOLLOW_FLAGS } from "../flags.js";
import { changed, idOf, now, SMALL_COPY } from "../held.js";
import { type FileObjectId, sameFile } from "../identity.js";
import { visible } from "../names.js";
import type { DirId, HeldDir, OpenedDir, Strategy } from "../strategy.js";
import { inWorkingDir, openEach, PATH_MAX, readDirEntries } from "./host.js";

const readFd = promisify(fsSync.read);
const writeFd = promisify(fsSync.write);

const CHUNK = 1024 * 1024;

const lstatId = (p: string): { dev: bigint; ino: bigint } => lstatSync(p, { bigint: true });

function changedWhileOpening(shown: string): SafeFsError {
  return new SafeFsError(`File changed while opening it: ${shown}`, { code: "EAGAIN" });
}

/** The portable strategy; it holds nothing of its own, so one serves every runtime. */
export const portable: Strategy = {
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
  async readChild(parent, _name, shown, inPool = false) {
    // Refused before any lookup: past the limit no path reaches it, and the walk says so (SPEC §5).
    if (Buffer.byteLength(shown) >= PATH_MAX) return { error: errnoError("ENAMETOOLONG", shown) };
    let id: FileObjectId;
    let size: number;
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
      size = Number(st.size);
    } catch (error) {
      return { error };
    }
    try {
      return { entries: visible(await readDirEntries(shown, size, inPool)), reach: shown + path.sep, fd: -1, id };
    } catch (error) {
      return { error };
    }
  },
  // Its reach is a path and holds no fd, so a walk never releases it and nothing needs reopening.
  reopenChild: (_parent, _name, shown) => ({ reach: shown + path.sep, fd: -1 }),
  // Its reach is a path checked by each file's real path afterwards: nothing cheaper holds here.
  openEntriesSync: openEach,
  // Its paths may be swapped while they are walked: every file is checked by its identity.
  provesInside: () => false,
  descriptorLimit: () => Infinity,
  copyContent: copyByChunks,
};

/*
 * Why the working directory, process-wide as it is: Node has no openat/unlinkat/mkdirat, and acting on a
 * path re-verified by identity would leave a window between the check and the use. Each operation changes
 * to the held directory's path, checks with stat(".") that it is the directory object that was held (a
 * path swapped for a symlink lands elsewhere and is refused), acts on the entry by its bare name — which
 * the kernel resolves in that working directory, whatever happens to paths meanwhile — and changes back,
 * all in one synchronous step: no other code (another call, another runtime's strategy) ever runs with the
 * working directory changed, and the server resolves every path absolutely anyway. Its limits: a held
 * directory whose path is longer than PATH_MAX cannot be entered (ENAMETOOLONG), and a worker thread
 * cannot chdir, so this strategy runs on the main thread only (vitest's pool stays `forks`).
 */

/** portable: a directory held by its real path and identity, entered for each operation. */
class CwdDir implements HeldDir {
  constructor(
    readonly real: string,
    readonly id: DirId,
  ) {}

  /** Runs `op` with this very directory as the working directory, synchronously, and changes back. */
  private within<T>(op: () => T): Promise<T> {
    return now(() =>
      inWorkingDir(this.real, () => {
        if (!sameFile(fsSync.statSync(".", { bigint: true }), this.id)) throw changed(this.real);
        return op();
      }),
    );
  }

  /** Enters entry `name` (in the working directory) as a directory, refused for a symlink or another directory than `expected`. */
  static enter(name: string, real: string, expected?: DirId): CwdDir {
    const st = fsSync.lstatSync(name, { bigint: true });
    if (st.isSymbolicLink()) throw errnoError("ELOOP", real);
    if (!st.isDirectory()) throw errnoError("ENOTDIR", real);
    if (expected !== undefined && !sameFile(expected, st)) throw changed(real);
    process.chdir(name);
    if (!sameFile(fsSync.statSync(".", { bigint: true }), st)) throw changed(real);
    return new CwdDir(real, idOf(st));
  }

  entries(): Promise<Dirent[]> {
    return this.within(() => fsSync.readdirSync(".", { withFileTypes: true }));
  }
  lstat(name: string): Promise<BigIntStats | undefined> {
    return this.within(() => fsSync.lstatSync(name, { bigint: true, throwIfNoEntry: false }));
  }
  openDir(name: string, expected?: DirId): Promise<HeldDir> {
    return this.within(() => CwdDir.enter(name, path.join(this.real, name), expected));
  }
  openParent(expected: DirId): Promise<HeldDir> {
    return this.within(() => {
      process.chdir("..");
      if (!sameFile(fsSync.statSync(".", { bigint: true }), expected)) throw changed(path.dirname(this.real));
      return new CwdDir(path.dirname(this.real), expected);
    });
  }
  openFile(name: string, flags: number, mode?: number): Promise<number> {
    return this.within(() => fsSync.openSync(name, flags, mode));
  }
  unlink(name: string): Promise<void> {
    return this.within(() => fsSync.unlinkSync(name));
  }
  rmdir(name: string): Promise<void> {
    return this.within(() => fsSync.rmdirSync(name));
  }
  async mkdir(name: string, mode: number): Promise<void> {
    await this.within(() => fsSync.mkdirSync(name, mode));
  }
  symlink(target: string, name: string): Promise<void> {
    return this.within(() => fsSync.symlinkSync(target, name));
  }
  readlink(name: string): Promise<string> {
    return this.within(() => fsSync.readlinkSync(name));
  }
  chmodDir(name: string, mode: number): Promise<void> {
    return this.within(() => {
      const fd = fsSync.openSync(name, DIR_NOFOLLOW_FLAGS);
      try {
        fsSync.fchmodSync(fd, mode);
      } finally {
        fsSync.closeSync(fd);
      }
    });
  }
  async close(): Promise<void> {}
}

/** portable's hold: entry `name` of `dir`, entered by bare name from `dir` itself. */
async function holdByCwd(dir: OpenedDir, name: string, expected?: DirId): Promise<HeldDir> {
  const parent = await fs.lstat(dir.real, { bigint: true });
  return new CwdDir(dir.real, idOf(parent)).openDir(name, expected);
}

/** portable's copy: read and write in chunks, in flat memory. */
async function copyByChunks(from: number, to: number, length: number): Promise<void> {
  if (length < SMALL_COPY) return copySmallByChunks(from, to, length);
  const buffer = Buffer.allocUnsafe(Math.min(CHUNK, Math.max(1, length)));
  for (let at = 0; at < length; ) {
    const { bytesRead } = await readFd(from, buffer, 0, Math.min(buffer.length, length - at), at);
    if (bytesRead === 0) break;
    for (let done = 0; done < bytesRead; ) {
      const { bytesWritten } = await writeFd(to, buffer, done, bytesRead - done, at + done);
      done += bytesWritten;
    }
    at += bytesRead;
  }
}

function copySmallByChunks(from: number, to: number, length: number): void {
  const buffer = Buffer.allocUnsafe(Math.max(1, length));
  let read = 0;
  while (read < length) {
    const n = fsSync.readSync(from, buffer, read, length - read, read);
    if (n === 0) break;
    read += n;
  }
  for (let done = 0; done < read; ) done += fsSync.writeSync(to, buffer, done, read - done, done);
}
