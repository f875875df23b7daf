/**
 * The directories a depth-first walk stands in, outermost first, in bounded
 * descriptors (SPEC §6; issue 18): each directory read is held by its fd only
 * while it is among the deepest few or a checkpoint (every `stride` levels,
 * the stride doubling as the walk goes deeper), and a released one is opened
 * again when the walk comes back to it, through its nearest held ancestor, one
 * name at a time with O_NOFOLLOW, each checked to be the directory first read.
 * Sibling directories are read ahead, kept topped up as the walk goes, with
 * descriptors of their own plus those the frames do not hold; the descriptors of
 * those read ahead by directories above are let go (the shallowest first) when a
 * deeper one wants to read ahead and none is free, or the frames need them back.
 * Portable reaches are paths and hold nothing to release.
 */
import type { Dirent } from "node:fs";
import { errnoCode, type FileObjectId, type Listing, type Read, type WalkPort } from "../sandbox/index.js";

/** One directory of the walk's current path. */
export interface Frame {
  readonly name: string;
  readonly entries: Dirent[];
  /** Depth of its entries (1 below the root's: 0). */
  readonly depth: number;
  /** Length of its shown path, a prefix of the path of every directory below it. */
  readonly pathLength: number;
  readonly id: FileObjectId | undefined;
  /** Reaches its entries; undefined while released. */
  reach: string | undefined;
  fd: number;
  /** The next entry to walk, and how far the read-ahead has looked. */
  next: number;
  ahead: number;
  /** Cached verdicts of its entries (0 until judged). */
  readonly verdicts: Uint8Array;
  /** Read-ahead of its subdirectories, by entry index. */
  readonly pending: Map<number, Ahead>;
  /** The allowed directories it was last found in (SPEC §2 Roots: checked again when they change). */
  allowedUnder: readonly string[];
  /** Set when it could not be reached again: the rest of its entries are skipped (and counted once). */
  lost: boolean;
}

/** A subdirectory read ahead; `parked` once the walk went down elsewhere, so its fd is let go (`released`) when it settles. */
interface Ahead {
  readonly read: Promise<Read>;
  settled: Read | undefined;
  parked: boolean;
  released: boolean;
}

// Sequential readdir costs ~4x `find` in thread-pool round trips; reading a few
// upcoming sibling directories ahead brings it near 1.5x (SPEC §6).
const AHEAD_PER_DIR = 8;
// Descriptors of directories read ahead: AHEAD_PER_DIR of a walk's share are theirs, and they may borrow
// those the frames do not hold, up to this many in all. With 8 in all, the levels above the walk held
// every one (their reads were waiting to be walked), so the levels below read most directories on the
// main thread, and the reads parked to let them go were opened again when walked: over the bench's
// 100,000-entry tree, 720 reopens and 320 reads on the main thread of 1,111 (now none and 111). A deep
// path, whose frames hold most of the share, keeps every frame it kept before.
export const AHEAD_FDS_BORROWING = 24;
// Stops reading ahead while this many entries read ahead wait to be walked, so
// wide trees cannot pile up memory ahead of the walk.
const AHEAD_ENTRY_BUDGET = 50_000;
// Descriptors a walk keeps besides its frames' and its read-ahead's: the root's, one opening, one file.
const SPARE_FDS = 3;
const EMFILE_RETRIES = 8;

const isEmfile = (error: unknown): boolean => {
  const code = errnoCode(error);
  return code === "EMFILE" || code === "ENFILE";
};

/** The frames of one walk and the descriptors they hold, within `share` descriptors. */
export class DirStack {
  private readonly frames: Frame[] = [];
  /** Frames (the root's aside) whose fd is open. */
  private held = 0;
  private readonly frameFds: number;
  private readonly window: number;
  private stride = 8;
  private readonly aheadFds: number;
  private aheadOpen = 0;
  private aheadEntries = 0;
  private readonly inFlight = new Set<Promise<unknown>>();
  // Frames with read-ahead not parked yet, so that parking never scans the whole path.
  private readonly reading = new Set<Frame>();

  constructor(
    private readonly sandbox: WalkPort,
    share: number,
    /** The shown path of a frame of this stack, for errors. */
    private readonly shownOf: (frame: Frame) => string,
    /** Whether the directories it reads ahead are read in the thread pool (else a small one at once); see WalkOptions.poolReads. */
    private readonly poolReads = true,
  ) {
    this.aheadFds = Math.min(AHEAD_PER_DIR, share >> 3);
    this.frameFds = Math.max(2, share - this.aheadFds - SPARE_FDS);
    this.window = Math.max(1, this.frameFds >> 2);
  }

  get size(): number {
    return this.frames.length;
  }

  get top(): Frame {
    return this.frames[this.frames.length - 1]!;
  }

  /** Stands in `listing` (entry `name` of the top frame, or the root). */
  push(listing: Listing, name: string, pathLength: number): Frame {
    const root = this.frames.length === 0;
    const frame: Frame = {
      name,
      entries: listing.entries,
      depth: root ? 0 : this.top.depth + 1,
      pathLength,
      id: listing.id,
      reach: listing.reach,
      fd: listing.fd,
      next: 0,
      ahead: 0,
      verdicts: new Uint8Array(listing.entries.length),
      pending: new Map(),
      allowedUnder: root ? this.sandbox.allowedDirs : this.top.allowedUnder,
      lost: false,
    };
    this.frames.push(frame);
    if (frame.fd >= 0) this.held++;
    this.bound();
    return frame;
  }

  /** Leaves the top frame, letting go of its fd and of what it read ahead. */
  pop(): Frame {
    const frame = this.frames.pop()!;
    this.letGo(frame);
    if (frame.reach !== undefined && this.frames.length > 0) this.sandbox.release({ reach: frame.reach, fd: -1 });
    this.park(frame);
    return frame;
  }

  /**
   * The reach of `frame` (the top one), reopened through its nearest held ancestor when it was released.
   * @throws when a directory on the way is gone or is not the one read (the frames from it on are then lost)
   */
  async reach(frame: Frame): Promise<string> {
    if (frame.reach !== undefined) return frame.reach;
    const last = this.frames.indexOf(frame);
    let from = last;
    while (this.frames[from]!.reach === undefined) from--;
    // Descriptors to spare hold frames of this chain at a step of their own, so that coming back up it
    // reopens from one of them rather than from `from` again.
    const spare = this.frameFds - this.held - Math.min(this.window, last - from);
    const step = spare > 0 ? Math.max(1, Math.ceil((last - from - this.window) / spare)) : 0;
    for (let j = from + 1; j <= last; j++) {
      const f = this.frames[j]!;
      const parent = this.frames[j - 1]!;
      let reopened: { reach: string; fd: number };
      try {
        reopened = await this.retryingEmfile(parent, () =>
          this.sandbox.reopenChild({ reach: parent.reach!, fd: parent.fd, id: parent.id }, f.name, this.shownOf(f), f.id),
        );
      } catch (error) {
        for (let k = j; k <= last; k++) this.frames[k]!.lost = true;
        throw error;
      }
      f.reach = reopened.reach;
      f.fd = reopened.fd;
      if (f.fd >= 0) this.held++;
      // Once the next one is open, a directory on the way is kept only when it is near the top, a checkpoint, or at the chain's step.
      if (j - 1 > from && !this.keeps(j - 1, last) && !(step > 0 && (j - 1 - from) % step === 0)) this.letGo(parent);
    }
    this.bound();
    return frame.reach!;
  }

  /** Reads entry `index` (named `name`, shown as `shown`) of the top frame (held) as a directory, taking what was read ahead. */
  async child(index: number, name: string, shown: string): Promise<Read> {
    const top = this.top;
    const reach = top.reach!;
    const ahead = top.pending.get(index);
    if (ahead !== undefined) {
      top.pending.delete(index);
      const read = await ahead.read;
      if ("entries" in read) {
        this.aheadEntries -= read.entries.length;
        if (!ahead.released) {
          // Its fd, if any, passes to the frame.
          if (read.fd >= 0) this.aheadOpen--;
          return read;
        }
        // Its fd was let go: it is opened again, and read afresh if it is gone or another directory now.
        try {
          const again = this.sandbox.reopenChild({ reach, fd: top.fd, id: top.id }, name, shown, read.id);
          return { ...read, ...again };
        } catch {}
      } else if (!isEmfile(read.error)) {
        return read;
      }
    }
    return this.retryingEmfile(top, async () => {
      const r = await this.sandbox.readChild({ reach, fd: top.fd, id: top.id }, name, shown);
      if ("error" in r && isEmfile(r.error)) throw r.error;
      return r;
    }).catch((error: unknown) => ({ error }));
  }

  /** True when `frame` has entries not yet judged for reading ahead and room for another read ahead. */
  wantsAhead(frame: Frame): boolean {
    return frame.ahead < frame.entries.length && frame.pending.size < AHEAD_PER_DIR;
  }

  /** True when another subdirectory of `frame` (the top one, held) may be read ahead now. */
  mayReadAhead(frame: Frame): boolean {
    if (frame.pending.size >= AHEAD_PER_DIR || this.aheadEntries >= AHEAD_ENTRY_BUDGET) return false;
    const limit = Math.min(AHEAD_FDS_BORROWING, Math.max(this.aheadFds, this.frameFds - this.held));
    // The directories above read ahead too and the walk went down since: theirs let go of their fds, those that
    // began reading ahead first (the shallowest, walked last) until one is free, since each is opened again when walked.
    for (const f of this.reading) {
      if (this.aheadOpen < limit) break;
      if (f !== frame) this.park(f);
    }
    return this.aheadOpen < limit;
  }

  /** Starts reading entry `index` of the top frame (held) ahead of the walk. */
  readAhead(frame: Frame, index: number, name: string, shown: string): void {
    this.aheadOpen++;
    const parent = { reach: frame.reach!, fd: frame.fd, id: frame.id };
    const ahead: Ahead = { read: this.sandbox.readChild(parent, name, shown, this.poolReads), settled: undefined, parked: false, released: false };
    const settling = ahead.read.then((read) => {
      ahead.settled = read;
      if ("entries" in read) this.aheadEntries += read.entries.length;
      if (!("fd" in read) || read.fd < 0) this.aheadOpen--;
      else if (ahead.parked) this.letGoAhead(ahead, read);
    });
    this.track(settling);
    frame.pending.set(index, ahead);
    this.reading.add(frame);
  }

  /** Closes every descriptor this stack holds, once what it reads ahead has settled. */
  async dispose(): Promise<void> {
    while (this.frames.length > 0) this.pop();
    while (this.inFlight.size > 0) await Promise.all(this.inFlight);
  }

  private track(p: Promise<unknown>): void {
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p));
  }

  // The read-ahead of a frame the walk leaves or goes down from lets go of its descriptors.
  private park(frame: Frame): void {
    this.reading.delete(frame);
    for (const ahead of frame.pending.values()) {
      if (ahead.parked) continue;
      ahead.parked = true;
      if (ahead.settled !== undefined && "fd" in ahead.settled && ahead.settled.fd >= 0) this.letGoAhead(ahead, ahead.settled);
    }
  }

  private letGoAhead(ahead: Ahead, read: Listing): void {
    this.sandbox.release(read);
    ahead.released = true;
    this.aheadOpen--;
  }

  private letGo(frame: Frame): void {
    if (frame.fd < 0 || this.frames[0] === frame) return;
    this.sandbox.release({ reach: frame.reach!, fd: frame.fd });
    frame.fd = -1;
    frame.reach = undefined;
    this.held--;
  }

  // Kept when among the `window` deepest below `last`, or at a depth that is a multiple of the stride.
  private keeps(index: number, last: number): boolean {
    return last - index < this.window || this.frames[index]!.depth % this.stride === 0;
  }

  // Lets go of the frame that left the window unless it is a checkpoint, and doubles the stride (thinning
  // the checkpoints out) while the held frames do not fit.
  private bound(): void {
    const last = this.frames.length - 1;
    const edge = last - this.window;
    if (edge >= 1 && !this.keeps(edge, last)) this.letGo(this.frames[edge]!);
    // The frames a reopened chain kept at its step go first.
    if (this.held > this.frameFds) for (let k = 1; k <= edge; k++) if (!this.keeps(k, last)) this.letGo(this.frames[k]!);
    while (this.held > this.frameFds) {
      this.stride *= 2;
      for (let k = 1; k <= edge; k++) if (!this.keeps(k, last)) this.letGo(this.frames[k]!);
    }
    // Reads ahead that borrowed descriptors the frames hold now give them back, those that began first first.
    for (const f of this.reading) {
      if (this.held + this.aheadOpen <= this.frameFds + this.aheadFds) break;
      this.park(f);
    }
  }

  // Too many open files (this process's limit, reached by other calls too): let go of every descriptor
  // this walk can do without but `keep`'s, give the others a moment, and try again a few times.
  private async retryingEmfile<T>(keep: Frame, act: () => T | Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await act();
      } catch (error) {
        if (!isEmfile(error) || attempt > EMFILE_RETRIES) throw error;
        for (const frame of this.frames) {
          this.park(frame);
          if (frame !== keep) this.letGo(frame);
        }
        await new Promise((resolve) => setTimeout(resolve, 5 * attempt));
      }
    }
  }
}
