/**
 * copy_file (SPEC §15, §18): a file copied byte for byte by the kernel (a
 * reflink where the file system has them) in flat memory, mode kept, a sparse
 * one with its holes kept; a link
 * copied as a link (its target text, never followed); with `recursive`, a
 * directory tree, each directory held one inside the other (tree.ts) on both
 * sides. The copy is built under the destination's hidden temp name, with its
 * swap lock held, and put in place at the end — link(2) for a file, rename(2)
 * for a tree — never replacing what is there, so a failed or killed copy
 * leaves no partial destination, only a hidden temp that the next change of
 * that name removes.
 */
import type { BigIntStats, Dirent } from "node:fs";
import fsSync from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { isPathWithinAllowedDirectories } from "../path-validation.js";
import type { Confinement, Target } from "./confinement.js";
import { errnoCode, notADirectory, notRegular, refused, SafeFsError, wrapError } from "./errors.js";
import { DIR_NOFOLLOW_FLAGS, READ_FLAGS, TEMP_FLAGS } from "./flags.js";
import { closeQuietly } from "./held.js";
import { sameFile } from "./identity.js";
import { leadsOutside } from "./lookup.js";
import { destinationExists, destinationTaken, renameDirectoryInto } from "./move.js";
import { isServerEntry, undecodable } from "./names.js";
import { openRegularIn } from "./open.js";
import type { HeldDir } from "./strategy.js";
import { type HeldLock, lockPresent, underSwapLock } from "./swap-lock.js";
import { DirStack, Pacer, removeEntry } from "./tree.js";

// link(2) failures meaning "no hard link possible here" rather than "refused".
const LINK_UNSUPPORTED = new Set(["EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS", "EMLINK"]);
const S_ISUID_ISGID = 0o6000;
// What reading a source entry fails with when it was swapped for another kind of entry meanwhile.
const RACED = new Set(["EINVAL", "ELOOP", "ENOTDIR", "EISDIR", "EAGAIN"]);

/** How a copy runs, and how its ends were named. */
export interface CopyOptions {
  recursive: boolean;
  source: string;
  destination: string;
  /** Whether the source or the destination was given ending in a separator, which names a directory. */
  sourceIsDir?: boolean;
  destinationIsDir?: boolean;
  signal?: AbortSignal;
  /** Called with the number of entries copied so far. */
  onProgress?: (copied: number) => void;
}

/** What a copy made. */
export interface Copied {
  files: number;
  directories: number;
  links: number;
  bytes: number;
  /** FIFOs, sockets and devices met in a tree, which are not copied. */
  special: number;
  /** Entries of a tree whose names are not valid UTF-8 (see `undecodable`), which are not copied. */
  badNames: number;
}

/** A copy's mode: the source's, without set-user/group-ID when the copy's owner or group differs. */
function modeFor(source: BigIntStats, copy: { uid: number | bigint; gid: number | bigint }): number {
  const mode = Number(source.mode) & 0o7777;
  const sameOwner = BigInt(copy.uid) === source.uid && BigInt(copy.gid) === source.gid;
  return sameOwner ? mode : mode & ~S_ISUID_ISGID;
}

// Holes are found at this granularity (the usual file-system block); a run of zero blocks is not written.
const HOLE_BLOCK = 4096;
const ZEROS = Buffer.alloc(HOLE_BLOCK);
const SPARSE_CHUNK = 1024 * 1024;
const readAt = promisify(fsSync.read);
const writeAt = promisify(fsSync.write);

/** True when the file holds fewer blocks than its size needs: it has holes (or is compressed). */
function hasHoles(st: BigIntStats): boolean {
  return st.blocks * 512n < st.size;
}

/**
 * Copies `length` bytes of `from` into the new, empty `to`, writing only the blocks that are not all
 * zeros and setting the size at the end, so the copy of a sparse file stays sparse. Node reaches neither
 * SEEK_DATA/SEEK_HOLE nor FIEMAP, so the holes are found by reading (the kernel hands holes back as
 * zeros without touching the disk); a block of real zeros becomes a hole too, which reads the same.
 */
async function copyKeepingHoles(from: number, to: number, length: number): Promise<void> {
  const buffer = Buffer.allocUnsafe(SPARSE_CHUNK);
  for (let at = 0; at < length; ) {
    const { bytesRead } = await readAt(from, buffer, 0, Math.min(buffer.length, length - at), at);
    if (bytesRead === 0) break;
    // Each run of blocks with data, [start, end), is written in one call; the zero blocks between are skipped.
    for (let start = 0; start < bytesRead; ) {
      const isZero = (block: number): boolean => {
        const end = Math.min(block + HOLE_BLOCK, bytesRead);
        return buffer.subarray(block, end).equals(ZEROS.subarray(0, end - block));
      };
      if (isZero(start)) {
        start += HOLE_BLOCK;
        continue;
      }
      let end = start + HOLE_BLOCK;
      while (end < bytesRead && !isZero(end)) end += HOLE_BLOCK;
      end = Math.min(end, bytesRead);
      for (let done = start; done < end; ) done += (await writeAt(to, buffer, done, end - done, at + done)).bytesWritten;
      start = end;
    }
    at += bytesRead;
  }
  fsSync.ftruncateSync(to, length);
}

/** Copies the regular file open as `from` (described by `st`) into the new, empty file open as `to`; returns its size. */
async function copyBytes(c: Confinement, from: number, to: number, st: BigIntStats): Promise<number> {
  const size = Number(st.size);
  // The kernel's copy fills holes (a 1.5 GB sparse file using no disk became 1.5 GB on disk: issue 28 row 11).
  if (hasHoles(st)) await copyKeepingHoles(from, to, size);
  else await c.strategy.copyContent(from, to, size);
  fsSync.fchmodSync(to, modeFor(st, fsSync.fstatSync(to, { bigint: true })));
  return size;
}

/** Puts the finished temp file at the destination without replacing anything there. */
async function linkIntoPlace(held: HeldLock, dst: Target): Promise<void> {
  try {
    await fs.link(held.temp, dst.at);
  } catch (err) {
    const code = errnoCode(err);
    if (code === "EEXIST") throw destinationExists(dst.shown, err);
    if (code === undefined || !LINK_UNSUPPORTED.has(code)) throw err;
    // Residual window, as for move_file: something made at the destination now is replaced.
    if ((await dst.lstat()) !== undefined) throw destinationExists(dst.shown);
    await fs.rename(held.temp, dst.at);
    return;
  }
  await fs.unlink(held.temp);
}

/** One file: opened through its verified parent, copied into the destination's temp file, linked into place. */
async function copyOneFile(c: Confinement, src: Target, held: HeldLock, dst: Target): Promise<Copied> {
  const { handle, stat } = await openRegularIn(c, src);
  let bytes: number;
  try {
    const out = await fs.open(held.temp, TEMP_FLAGS, 0o600);
    try {
      bytes = await copyBytes(c, handle.fd, out.fd, stat);
    } finally {
      await out.close();
    }
    await linkIntoPlace(held, dst);
  } catch (err) {
    await fs.rm(held.temp, { force: true });
    throw err;
  } finally {
    await handle.close();
  }
  return { files: 1, directories: 0, links: 0, bytes, special: 0, badNames: 0 };
}

/** The target text of a link to copy, refused when it is relative and would lead outside from `newDir`. */
async function linkTarget(c: Confinement, dir: HeldDir, name: string, newDir: string, shown: string): Promise<string> {
  const target = await dir.readlink(name);
  if (!path.isAbsolute(target) && (await leadsOutside(target, newDir, c))) throw c.linkWouldLeave("copy", shown);
  return target;
}

/** Copies every entry of the held source directory into the held (new, empty) destination directory. */
async function copyTree(c: Confinement, from: HeldDir, into: HeldDir, finalReal: string, o: CopyOptions): Promise<Copied> {
  const done: Copied = { files: 0, directories: 0, links: 0, bytes: 0, special: 0, badNames: 0 };
  const sources = new DirStack(from);
  const copies = new DirStack(into);
  const pending: Array<{ entries: Dirent[]; next: number; rel: string; mode: number }> = [
    { entries: await from.entries(), next: 0, rel: "", mode: 0 },
  ];
  const step = (): void => o.onProgress?.(done.files + done.directories + done.links);
  const pacer = new Pacer();
  try {
    for (;;) {
      await pacer.step();
      if (o.signal?.aborted) throw new SafeFsError("cancelled", { code: "ECANCELED" });
      const level = pending.at(-1)!;
      const entry = level.entries[level.next++];
      if (entry === undefined) {
        if (sources.depth === 0) return done;
        pending.pop();
        await sources.pop();
        const { name, parent } = await copies.pop();
        // Made 0700 so its entries could be written; its own mode once they are.
        await parent.chmodDir(name, level.mode);
        continue;
      }
      if (isServerEntry(entry.name)) continue;
      // Concatenated, not joined: joining re-reads the whole path, which is long in a deep tree.
      const rel = level.rel === "" ? entry.name : `${level.rel}${path.sep}${entry.name}`;
      const shown = `${o.source}${path.sep}${rel}`;
      const copyOne = async (): Promise<void> => {
        const src = sources.top();
        const dst = copies.top();
        const st = await src.lstat(entry.name);
        if (st === undefined) {
          // Gone since the directory was read, or never reachable by this name.
          if (undecodable(entry.name)) done.badNames++;
          return;
        }
        if (st.isDirectory()) {
          const child = await src.openDir(entry.name, { dev: st.dev, ino: st.ino });
          await sources.push(child, entry.name);
          await dst.mkdir(entry.name, 0o700);
          await copies.push(await dst.openDir(entry.name), entry.name);
          pending.push({ entries: await child.entries(), next: 0, rel, mode: Number(st.mode) & 0o7777 });
          done.directories++;
        } else if (st.isSymbolicLink()) {
          await dst.symlink(await linkTarget(c, src, entry.name, path.join(finalReal, level.rel), shown), entry.name);
          done.links++;
        } else if (st.isFile()) {
          const fd = await src.openFile(entry.name, READ_FLAGS);
          try {
            const opened = fsSync.fstatSync(fd, { bigint: true });
            if (!opened.isFile() || !sameFile(opened, st)) throw new SafeFsError(`File changed while copying it: ${shown}`, { code: "EAGAIN" });
            const out = await dst.openFile(entry.name, TEMP_FLAGS, 0o600);
            try {
              done.bytes += await copyBytes(c, fd, out, opened);
            } finally {
              closeQuietly(out);
            }
          } finally {
            closeQuietly(fd);
          }
          done.files++;
        } else {
          done.special++;
        }
      };
      try {
        await copyOne();
      } catch (err) {
        // A source entry that turned into something else while it was looked at: the tree is changing.
        if (!RACED.has(errnoCode(err) ?? "")) throw err;
        throw new SafeFsError(`Cannot copy ${o.source}: ${shown} changed while it was being copied`, { cause: err, code: "EAGAIN" });
      }
      step();
    }
  } finally {
    await sources.release();
    await copies.release();
  }
}

/** A tree: built under the destination's temp name, given the source's mode, renamed into place. */
async function copyDirectory(c: Confinement, src: Target, st: BigIntStats, held: HeldLock, dst: Target, o: CopyOptions): Promise<Copied> {
  await fs.mkdir(held.temp, 0o700);
  try {
    const from = await src.dir.hold(src.name, { dev: st.dev, ino: st.ino });
    let done: Copied;
    try {
      const into = await dst.dir.hold(held.tempName);
      try {
        done = await copyTree(c, from, into, path.join(dst.dir.real, dst.name), o);
      } finally {
        await into.close();
      }
    } finally {
      await from.close();
    }
    const root = await fs.open(held.temp, DIR_NOFOLLOW_FLAGS);
    try {
      await root.chmod(Number(st.mode) & 0o7777);
    } finally {
      await root.close();
    }
    await renameDirectoryInto(held.temp, dst);
    return { ...done, directories: done.directories + 1 };
  } catch (err) {
    await removeEntry(dst.dir, held.tempName).catch(() => undefined);
    throw err;
  }
}

/** The refusals of a copy: no source, a destination there, a directory without recursive, a link that would lead outside. */
async function checkCopy(c: Confinement, src: Target, dst: Target, o: CopyOptions, early = false): Promise<{ st: BigIntStats; target?: string }> {
  const st = await src.lstat();
  if (st === undefined) throw new SafeFsError(`Cannot copy ${o.source}: it does not exist`, { code: "ENOENT" });
  if (!st.isDirectory() && o.sourceIsDir === true) throw notADirectory(o.source);
  // Before the lock, a destination with a lock is left to the holder's check, as for move_file.
  const there = await dst.lstat();
  if (there !== undefined && !(early && (await lockPresent(dst)))) throw destinationTaken(o.destination, there, o);
  // Copied by its name without the separator, the file would be made where a directory was named.
  if (!st.isDirectory() && o.destinationIsDir === true) {
    throw refused({ kind: "fileAsDirectory", action: "copy", path: o.source, destination: o.destination });
  }
  if (st.isDirectory() && !o.recursive) {
    throw new SafeFsError(`Cannot copy ${o.source}: it is a directory; pass recursive: true to copy it with everything in it`, { code: "EISDIR" });
  }
  if (!st.isSymbolicLink()) return { st };
  const target = await fs.readlink(src.at);
  if (!path.isAbsolute(target) && (await leadsOutside(target, dst.dir.real, c))) throw c.linkWouldLeave("copy", o.source);
  return { st, target };
}

/** The copy itself, the destination's swap lock held. */
async function copyHeld(c: Confinement, src: Target, held: HeldLock, o: CopyOptions): Promise<Copied> {
  const dst = held.t;
  const { st, target } = await checkCopy(c, src, dst, o);
  if (target !== undefined) {
    // symlink(2) fails with EEXIST rather than replacing: no temp is needed.
    await fs.symlink(target, dst.at).catch((err: unknown) => {
      throw errnoCode(err) === "EEXIST" ? destinationExists(o.destination, err) : err;
    });
    return { files: 0, directories: 0, links: 1, bytes: 0, special: 0, badNames: 0 };
  }
  if (st.isFile()) return copyOneFile(c, src, held, dst);
  if (!st.isDirectory()) throw notRegular(o.source, st);
  return copyDirectory(c, src, st, held, dst, o);
}

/**
 * Copies entry `source` to `destination` (paths whose parents were resolved from inside; final components
 * not followed), never replacing anything at the destination.
 * @throws `Destination already exists: <destination>`; a directory without `recursive`; on any failure,
 * saying that nothing was copied
 */
export async function copyEntry(c: Confinement, source: string, destination: string, o: CopyOptions): Promise<Copied> {
  const from = path.resolve(source);
  const to = path.resolve(destination);
  if (c.isAllowedDirectory(to)) throw destinationTaken(o.destination, "directory", o);
  if (isPathWithinAllowedDirectories(path.dirname(to), [from])) {
    throw refused({ kind: "intoItself", action: "copy", path: o.source, destination: o.destination });
  }
  const context = `Cannot copy ${o.source} to ${o.destination}`;
  const nothing = `nothing was copied: ${o.destination} was not created`;
  return c.inParent(from, "copy", (src) =>
    c.inParent(to, "copy to", async (dst) => {
      try {
        // Refusals first, before the lock: a refused call leaves the directory as it was.
        await checkCopy(c, src, dst, o, true);
        return await underSwapLock(c, dst, (held) => copyHeld(c, src, held, o), { signal: o.signal });
      } catch (err) {
        // A refusal made as a value (a lock wait that timed out or was cancelled) already says nothing was changed.
        if (err instanceof SafeFsError && err.refusal !== undefined) throw err;
        if (errnoCode(err) === "ECANCELED") throw refused({ kind: "cancelled", action: "copy", path: o.source, kept: nothing }, err);
        if (err instanceof SafeFsError && (err.code === "EISDIR" || err.code === "EACCES")) throw err;
        throw wrapError(err, context).withNote(nothing);
      }
    }),
  );
}
