/**
 * The one temp-dir helper and the one idiom for running a suite under each
 * platform strategy (Linux /proc/self/fd and the portable path).
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { mkdtemp, realpath, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe } from "vitest";
import { __testing, Sandbox, type StrategyName } from "../../src/sandbox/index.js";
import type { WalkOptions } from "../../src/walking/index.js";

/** The strategies this platform runs: both on Linux, the portable one elsewhere. */
/** Whether a git executable answers here: suites comparing with `git check-ignore` skip (and say so) without one. */
export const noGit = ((): boolean => {
  try {
    execFileSync("git", ["--version"], { stdio: "ignore" });
    return false;
  } catch {
    return true;
  }
})();

export const STRATEGIES: readonly StrategyName[] = __testing.strategies();

/** A fresh real (symlink-resolved) temp directory and its remover. */
export async function tempDir(prefix = "bfs-"): Promise<{ dir: string; remove: () => Promise<void> }> {
  const dir = await realpath(await mkdtemp(path.join(os.tmpdir(), prefix)));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** Declares `body` once per strategy, with that strategy active during its tests (in-process suites). */
export function describeEachStrategy(title: string, body: (name: StrategyName) => void): void {
  describe.each(STRATEGIES)(`${title} (%s)`, (name) => {
    let before: StrategyName;
    beforeEach(() => {
      before = __testing.strategyName();
      __testing.useStrategy(name);
    });
    afterEach(() => __testing.useStrategy(before));
    body(name);
  });
}

/** The environment that makes a spawned server run `name` (suites that spawn dist/index.js). */
export function strategyEnv(name: StrategyName): Record<string, string> {
  return { BOUNDED_FS_STRATEGY: name };
}

/** Walk options confined to `dirs`. */
export function walkOptions(dirs: readonly string[], extra: Omit<WalkOptions, "sandbox"> = {}): WalkOptions {
  return { sandbox: new Sandbox(dirs), ...extra };
}

/** A tree to lay out: a file's text, a directory's entries, or a symlink's target. */
export type Spec = { [name: string]: string | Spec | { link: string } };

/** Lays `spec` out under the existing directory `dir`. */
export function materialize(dir: string, spec: Spec): void {
  for (const [name, value] of Object.entries(spec)) {
    const p = path.join(dir, name);
    if (typeof value === "string") writeFileSync(p, value);
    else if ("link" in value && typeof value.link === "string") symlinkSync(value.link, p);
    else {
      mkdirSync(p);
      materialize(p, value as Spec);
    }
  }
}
