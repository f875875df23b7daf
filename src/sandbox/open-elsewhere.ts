/**
 * The walked files of a search opened on a scan worker's thread (SPEC §16, §23), through the checks
 * the walk itself uses (open.ts `openWalkedSync`): O_NOFOLLOW|O_NONBLOCK in a directory the walk read
 * and still holds (reach-holds.ts), fstat of what was opened, refused unless a regular file, and the
 * strategy's containment check against the call's allowed directories. What crosses the thread is
 * plain data: the strategy's name, the allowed directories, the directory's reach and identity, the
 * names. One name at a time: a worker thread cannot change the working directory, as procfd's
 * batched opens do, and `reach + name` is the same lookup (the kernel resolves the name in the
 * directory the reach holds).
 */
import { Confinement } from "./confinement.js";
import type { FileObjectId } from "./identity.js";
import { LockWaits } from "./locks.js";
import { openWalkedSync, type WalkedResult } from "./open.js";
import { openEach } from "./platform/host.js";
import { createStrategy } from "./platform/index.js";
import type { Strategy, StrategyName } from "./strategy.js";

/** A walked directory as another thread receives it: its reach, held until the thread is done with it, and its identity when the walk read it (for a reach by path). */
export interface WalkedDirRef {
  reach: string;
  dir?: FileObjectId;
}

/** Walked directories of one call as another thread receives them: with what their entries are checked against. */
export interface WalkedDirs {
  strategy: StrategyName;
  /** The call's allowed directories. */
  allowed: readonly string[];
  dirs: WalkedDirRef[];
}

// The checks of the last call served: a thread serves one call at a time.
let last: { strategy: StrategyName; allowed: readonly string[]; c: Confinement } | undefined;

/** The checks the entries of `walked` are opened with: the walk's, with one open(2) per name. */
export function checksOf(walked: WalkedDirs): Confinement {
  const same = last !== undefined && last.strategy === walked.strategy && last.allowed.join("\0") === walked.allowed.join("\0");
  if (!same) {
    const strategy: Strategy = { ...createStrategy(walked.strategy), openEntriesSync: openEach };
    last = { strategy: walked.strategy, allowed: walked.allowed, c: new Confinement(strategy, walked.allowed, new LockWaits()) };
  }
  return (last as { c: Confinement }).c;
}

/** Opens entry `name` of the walked directory `ref` (checked by `c`, see `checksOf`) when it is a regular file inside; the caller closes the fd handed over. */
export function openElsewhere(c: Confinement, ref: WalkedDirRef, name: string): WalkedResult {
  return openWalkedSync(c, ref.reach, [name], () => name, ref.dir)[0] as WalkedResult;
}
