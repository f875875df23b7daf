/**
 * The one temp-dir helper and the one idiom for running a suite under each
 * platform strategy (Linux /proc/self/fd and the portable path).
 */
import { execFileSync } from "node:child_process";
import fs, { closeSync, fstatSync, mkdirSync, openSync, symlinkSync, writeFileSync } from "node:fs";
import fsp, { mkdtemp, realpath, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, vi } from "vitest";
import { __testing, Sandbox, type StrategyName } from "../../src/sandbox/index.js";
import { createRuntime, type Runtime } from "../../src/server/runtime.js";
import type { WalkOptions } from "../../src/walking/index.js";

/** Whether a git executable answers here: suites comparing with `git check-ignore` skip (and say so) without one. */
export const noGit = ((): boolean => {
  try {
    execFileSync("git", ["--version"], { stdio: "ignore" });
    return false;
  } catch {
    return true;
  }
})();

/** The strategies this platform runs: both on Linux, the portable one elsewhere. */
export const STRATEGIES: readonly StrategyName[] = __testing.strategies();

/** A fresh real (symlink-resolved) temp directory and its remover. */
export async function tempDir(prefix = "bfs-"): Promise<{ dir: string; remove: () => Promise<void> }> {
  const dir = await realpath(await mkdtemp(path.join(os.tmpdir(), prefix)));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/**
 * Declares `body` once per strategy, each with a runtime of its own that runs that strategy (in-process
 * suites): nothing process-wide is switched, so the two can run side by side.
 */
export function describeEachStrategy(title: string, body: (name: StrategyName, runtime: Runtime) => void): void {
  describe.each(STRATEGIES)(`${title} (%s)`, (name) => {
    const runtime = createRuntime(name);
    beforeAll(() => {
      running = runtime;
    });
    afterAll(() => {
      running = undefined;
    });
    body(name, runtime);
  });
}

let running: Runtime | undefined;
let platformDefault: Runtime | undefined;

/**
 * The runtime of the describeEachStrategy block whose tests are running, for a file's own hooks and helpers
 * (a file-level beforeEach runs after the block's beforeAll); outside such a block, one of the platform's strategy.
 */
export function currentRuntime(): Runtime {
  if (running !== undefined) return running;
  platformDefault ??= createRuntime();
  return platformDefault;
}

/** The environment that makes a spawned server run `name` (suites that spawn dist/index.js). */
export function strategyEnv(name: StrategyName): Record<string, string> {
  return { BOUNDED_FS_STRATEGY: name };
}

/** Walk options confined to `dirs`, drawing on `runtime`'s strategy and descriptors. */
export function walkOptions(runtime: Runtime, dirs: readonly string[], extra: Omit<WalkOptions, "sandbox" | "descriptors"> = {}): WalkOptions {
  return { sandbox: new Sandbox(runtime, dirs), descriptors: runtime.descriptors, ...extra };
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

/**
 * Records the real path of every directory the walkers read from now on (on Linux they read through
 * /proc/self/fd, resolved here): small directories in one readdirSync burst, bigger ones with fs/promises.
 */
export function spyDirectoryReads(): string[] {
  const read: string[] = [];
  const record = (p: fs.PathLike): void => {
    const shown = String(p).replace(/\/$/, "");
    read.push(shown.startsWith("/proc/self/fd/") ? fs.readlinkSync(shown) : path.resolve(shown));
  };
  const original = fsp.readdir.bind(fsp);
  vi.spyOn(fsp, "readdir").mockImplementation(((p: fs.PathLike, o?: unknown) => {
    record(p);
    return (original as (p: fs.PathLike, o?: unknown) => Promise<unknown>)(p, o);
  }) as typeof fsp.readdir);
  const originalSync = fs.readdirSync.bind(fs);
  vi.spyOn(fs, "readdirSync").mockImplementation(((p: fs.PathLike, o?: unknown) => {
    record(p);
    return (originalSync as (p: fs.PathLike, o?: unknown) => unknown)(p, o);
  }) as typeof fs.readdirSync);
  return read;
}

/** A file opened for the content search as the walk hands it over: its descriptor, its size, and its close. */
export function openedFile(file: string): { fd: number; size: number; close: () => void } {
  const fd = openSync(file, "r");
  return { fd, size: fstatSync(fd).size, close: () => closeSync(fd) };
}

/** A writer of `texts` as f0.txt, f1.txt… into a fresh subfolder of `root` per call; resolves to their paths. */
export function fileWriter(root: () => string): (texts: string[]) => Promise<string[]> {
  let dirs = 0;
  return async (texts) => {
    const dir = path.join(root(), `d${dirs++}`);
    await fsp.mkdir(dir);
    return Promise.all(
      texts.map(async (text, i) => {
        const file = path.join(dir, `f${i}.txt`);
        await fsp.writeFile(file, text);
        return file;
      }),
    );
  };
}
