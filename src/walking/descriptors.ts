/**
 * The descriptors walks may hold, shared by every walk of the runtime: half
 * of the open-file limit, of which one walk takes at most MAX_WALK_FDS and,
 * when others hold much of it, less (never under MIN_WALK_FDS), so that
 * concurrent walks of deep trees cannot exhaust the process's descriptors.
 */

/** Most descriptors one walk holds (SPEC §6: deep trees in bounded descriptors). */
export const MAX_WALK_FDS = 64;
/** Fewest a walk is given, however many walks run: enough to go on, reopening more often. */
export const MIN_WALK_FDS = 24;

/** A walk's share: how many descriptors it may hold, and the call that gives them back. */
export interface Share {
  readonly count: number;
  giveBack(): void;
}

/** The walks' pool of descriptors: one per runtime, so every walk of the process draws on it. */
export class DescriptorBudget {
  private granted = 0;

  /** Takes a share of the pool for one walk, given the process's open-file limit. */
  takeShare(openFileLimit: number): Share {
    const pool = Number.isFinite(openFileLimit) ? Math.floor(openFileLimit / 2) : Infinity;
    // Half of what is free: the first walks get the most, later ones still get a share.
    const count = Math.max(MIN_WALK_FDS, Math.min(MAX_WALK_FDS, Math.floor((pool - this.granted) / 2)));
    this.granted += count;
    let held = true;
    return {
      count,
      giveBack: () => {
        if (held) this.granted -= count;
        held = false;
      },
    };
  }
}
