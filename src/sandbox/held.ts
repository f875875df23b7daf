/**
 * Directories held for tree operations (strategy.ts `HeldDir`), once per
 * platform strategy, and the copy of a file's bytes between two open files.
 *
 * procfd: the directory is an fd, each entry reached as
 * `/proc/self/fd/<fd>/<name>`, which the kernel resolves in that very directory.
 *
 * portable: Node has no openat/unlinkat/mkdirat, so each operation changes the
 * process's working directory to the held directory's path, checks with
 * stat(".") that it is the directory object that was held (a path swapped for a
 * symlink lands elsewhere and is refused), acts on the entry by its bare name —
 * which the kernel resolves in that working directory, whatever happens to
 * paths meanwhile — and changes back, all in one synchronous step, so no other
 * code of the server ever runs with the working directory changed (it resolves
 * every path absolutely anyway). Its limit: a held directory whose path is
 * longer than PATH_MAX cannot be entered (ENAMETOOLONG).
 */
import fsSync, { type BigIntStats, type Dirent } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { errnoError, SafeFsError } from "./errors.js";
import { DIR_NOFOLLOW_FLAGS } from "./flags.js";
import { sameFile } from "./identity.js";
import type { DirId, HeldDir, OpenedDir } from "./strategy.js";

const readFd = promisify(fsSync.read);
const writeFd = promisify(fsSync.write);

const CHUNK = 1024 * 1024;

function changed(real: string): SafeFsError {
  return new SafeFsError(`Directory changed during the operation: ${real} is no longer the directory that was opened`, { code: "EAGAIN" });
}

const idOf = (st: BigIntStats): DirId => ({ dev: st.dev, ino: st.ino });

/**
 * procfd: a directory held as an open fd. Its entries are looked up in the directory already open, so
 * each call is a few microseconds: they are made synchronously, where a thread-pool round trip each made
 * a 5,000-deep tree take seconds (the tree walk yields to the event loop between batches; only reading
 * a directory, which may be large, goes through the pool).
 */
class FdDir implements HeldDir {
  private constructor(
    private readonly fd: number,
    readonly id: DirId,
    readonly real: string,
  ) {}

  /**
   * Opens `at` as a directory without following a final symlink; refused unless it is `expected` (when
   * given). `real` is its path as reached (a deep one's real path may be longer than readlink can give).
   */
  static open(at: string, real: string, expected?: DirId): FdDir {
    const fd = fsSync.openSync(at, DIR_NOFOLLOW_FLAGS);
    try {
      const st = fsSync.fstatSync(fd, { bigint: true });
      if (expected !== undefined && !sameFile(expected, st)) throw changed(real);
      return new FdDir(fd, idOf(st), real);
    } catch (err) {
      fsSync.closeSync(fd);
      throw err;
    }
  }

  private at(name: string): string {
    return `/proc/self/fd/${this.fd}/${name}`;
  }

  entries(): Promise<Dirent[]> {
    return fs.readdir(`/proc/self/fd/${this.fd}`, { withFileTypes: true });
  }
  lstat(name: string): Promise<BigIntStats | undefined> {
    return now(() => fsSync.lstatSync(this.at(name), { bigint: true, throwIfNoEntry: false }));
  }
  openDir(name: string, expected?: DirId): Promise<HeldDir> {
    return now(() => FdDir.open(this.at(name), `${this.real}${path.sep}${name}`, expected));
  }
  openParent(expected: DirId): Promise<HeldDir> {
    return now(() => FdDir.open(this.at(".."), path.dirname(this.real), expected));
  }
  openFile(name: string, flags: number, mode?: number): Promise<number> {
    return now(() => fsSync.openSync(this.at(name), flags, mode));
  }
  unlink(name: string): Promise<void> {
    return now(() => fsSync.unlinkSync(this.at(name)));
  }
  rmdir(name: string): Promise<void> {
    return now(() => fsSync.rmdirSync(this.at(name)));
  }
  mkdir(name: string, mode: number): Promise<void> {
    return now(() => void fsSync.mkdirSync(this.at(name), mode));
  }
  symlink(target: string, name: string): Promise<void> {
    return now(() => fsSync.symlinkSync(target, this.at(name)));
  }
  readlink(name: string): Promise<string> {
    return now(() => fsSync.readlinkSync(this.at(name)));
  }
  chmodDir(name: string, mode: number): Promise<void> {
    return now(() => {
      const fd = fsSync.openSync(this.at(name), DIR_NOFOLLOW_FLAGS);
      try {
        fsSync.fchmodSync(fd, mode);
      } finally {
        fsSync.closeSync(fd);
      }
    });
  }
  close(): Promise<void> {
    return now(() => fsSync.closeSync(this.fd));
  }
}

/** `op`'s result (or its error) as a promise, `op` run at once. */
function now<T>(op: () => T): Promise<T> {
  return new Promise<T>((resolve) => resolve(op()));
}

/** The working directory to go back to; "/" when it was removed (nothing can use it then anyway). */
function currentDir(): string {
  try {
    return process.cwd();
  } catch {
    return path.parse(process.execPath).root;
  }
}

/** portable: a directory held by its real path and identity, entered for each operation (see the header). */
class CwdDir implements HeldDir {
  constructor(
    readonly real: string,
    readonly id: DirId,
  ) {}

  /** Runs `op` with this very directory as the working directory, synchronously, and changes back. */
  private within<T>(op: () => T): Promise<T> {
    return now(() => {
      const back = currentDir();
      process.chdir(this.real);
      try {
        if (!sameFile(fsSync.statSync(".", { bigint: true }), this.id)) throw changed(this.real);
        return op();
      } finally {
        try {
          process.chdir(back);
        } catch {
          process.chdir(path.parse(process.execPath).root);
        }
      }
    });
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

/** procfd's hold: entry `name` of `dir` opened O_DIRECTORY|O_NOFOLLOW through it. */
export function holdThroughFd(dir: OpenedDir, name: string, expected?: DirId): Promise<HeldDir> {
  return now(() => FdDir.open(dir.child(name), path.join(dir.real, name), expected));
}

/** portable's hold: entry `name` of `dir`, entered by bare name from `dir` itself. */
export async function holdByCwd(dir: OpenedDir, name: string, expected?: DirId): Promise<HeldDir> {
  const parent = await fs.lstat(dir.real, { bigint: true });
  return new CwdDir(dir.real, idOf(parent)).openDir(name, expected);
}

// Files smaller than this are copied synchronously: a few microseconds each, where the thread-pool
// round trips of an asynchronous copy made a 100,000-file tree copy several times slower than cp -r.
const SMALL = 256 * 1024;

/** procfd's copy: copy_file_range (or a reflink) between the two files, reopened through /proc/self/fd. */
export async function copyByKernel(from: number, to: number, length: number): Promise<void> {
  const [src, dst] = [`/proc/self/fd/${from}`, `/proc/self/fd/${to}`];
  if (length < SMALL) fsSync.copyFileSync(src, dst, fsSync.constants.COPYFILE_FICLONE);
  else await fs.copyFile(src, dst, fsSync.constants.COPYFILE_FICLONE);
  // It copies the size the file has when it is reopened; a later append to it is not ours to copy.
  if (fsSync.fstatSync(to).size > length) fsSync.ftruncateSync(to, length);
}

/** portable's copy: read and write in chunks, in flat memory. */
export async function copyByChunks(from: number, to: number, length: number): Promise<void> {
  if (length < SMALL) return copySmallByChunks(from, to, length);
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

/** Closes a raw fd, ignoring an error (it is closed either way); synchronous, as a close of a regular file is. */
export function closeQuietly(fd: number): void {
  try {
    fsSync.closeSync(fd);
  } catch {
    // Closed either way.
  }
}
