/**
 * Walked directories kept reachable for opens on another thread (SPEC §16, §23): a search hands a
 * scan worker a walked directory's reach and a file's name instead of the opened file, and the
 * worker opens it through the same checks (open-elsewhere.ts). A reach that holds a descriptor
 * (procfd's `/proc/self/fd/<fd>/`) must lead to that very directory until the worker has opened
 * every name it was given: were the descriptor closed when the walk leaves the directory, its
 * number could be reused for another directory and the name looked up there. So while a reach is
 * held, letting go of it (the walk's `release`, a root's `close`) is put off until the last hold ends.
 */
import type { WalkedDirRef } from "./open-elsewhere.js";

/** A held reach: what another thread receives of it, and the end of this hold (once). */
export interface HeldWalkDir {
  ref: WalkedDirRef;
  done(): void;
}

interface Entry {
  holds: number;
  ref: WalkedDirRef;
  close?: () => void;
}

/** One hold of an entry; ends once. */
class Hold implements HeldWalkDir {
  private ended = false;

  constructor(
    private readonly holds: ReachHolds,
    private readonly entry: Entry,
  ) {}

  get ref(): WalkedDirRef {
    return this.entry.ref;
  }

  done(): void {
    if (this.ended) return;
    this.ended = true;
    this.holds.end(this.entry);
  }
}

/** One call's held reaches, by reach. */
export class ReachHolds {
  private readonly held = new Map<string, Entry>();

  /** Holds `reach` until the hold's `done`; `refOf` makes what another thread receives of it, once per reach held. */
  hold(reach: string, refOf: () => WalkedDirRef): HeldWalkDir {
    let entry = this.held.get(reach);
    if (entry === undefined) this.held.set(reach, (entry = { holds: 0, ref: refOf() }));
    entry.holds++;
    return new Hold(this, entry);
  }

  /** Ends one hold of `entry`; the last one runs what was put off. */
  end(entry: Entry): void {
    if (--entry.holds > 0) return;
    this.held.delete(entry.ref.reach);
    entry.close?.();
  }

  /** Runs `close` now when `reach` is not held, else once its last hold ends; true when it was put off. */
  closeWhenFree(reach: string, close: () => void): boolean {
    const entry = this.held.get(reach);
    if (entry === undefined) {
      close();
      return false;
    }
    const before = entry.close;
    entry.close = () => {
      before?.();
      close();
    };
    return true;
  }
}
