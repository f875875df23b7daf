/**
 * Confinement, written once (SPEC §5, §13): the allowed directories of one call, whether
 * a real path lies inside them, the one refusal for anything that leads outside, and
 * directories opened through the platform strategy and verified inside, so that every
 * operation acts within a parent checked once (an operation's `Target`).
 */
import type { BigIntStats } from "node:fs";
import fs, { type FileHandle } from "node:fs/promises";
import path from "node:path";
import { isPathWithinAllowedDirectories } from "../path-validation.js";
import { accessDenied, errnoCode, refused, SafeFsError, wrapError } from "./errors.js";
import type { LockWaits } from "./locks.js";
import type { OpenedDir, Strategy } from "./strategy.js";

/** Test-only hooks into the race windows; not part of the tool API. */
export const __testHooks: {
  /** Runs after a directory has been opened and verified, before it is used. */
  afterOpenDir?: (realPath: string) => void | Promise<void>;
  /** Runs after the temp file is written, just before the identity re-check and rename. */
  beforeReplace?: (path: string) => void | Promise<void>;
  /** Runs after the identity re-check, just before the rename (the window edit_file must survive). */
  afterCheck?: (path: string) => void | Promise<void>;
} = {};

/** An operation's target: entry `name` of its parent `dir` (opened and verified inside), named `shown` in errors. */
export class Target {
  constructor(
    readonly dir: OpenedDir,
    readonly name: string,
    readonly shown: string,
  ) {}

  /** The path that reaches the entry through the opened parent, whatever happens to the parent's path. */
  get at(): string {
    return this.dir.child(this.name);
  }

  /** The entry's lstat (nothing at its end followed), or undefined when there is no entry. */
  async lstat(): Promise<BigIntStats | undefined> {
    try {
      return await fs.lstat(this.at, { bigint: true });
    } catch (err) {
      if (errnoCode(err) === "ENOENT") return undefined;
      throw err;
    }
  }
}

/** The allowed directories of one call, and the checks and opens that keep an operation inside them. */
export class Confinement {
  /**
   * `strategy` is the runtime's: how directories are opened and handles checked on this platform; `lockWaits`
   * its deadline and count of waits for server lock files.
   */
  constructor(
    readonly strategy: Strategy,
    readonly dirs: readonly string[],
    readonly lockWaits: LockWaits,
  ) {}

  /** True when the real path `real` lies inside one of the allowed directories (checked as resolved, never trimmed). */
  inside(real: string): boolean {
    // normalizePath would trim a trailing space or quote and could admit a sibling of an allowed directory.
    return isPathWithinAllowedDirectories(real, this.dirs);
  }

  /** True when `abs` is one of the allowed directories itself (not merely inside one). */
  isAllowedDirectory(abs: string): boolean {
    return this.dirs.some((dir) => path.resolve(dir) === abs);
  }

  /** The allowed directory that lies below `abs` (lexically), which `abs` therefore holds; undefined when none does. */
  allowedUnder(abs: string): string | undefined {
    return this.dirs.find((dir) => path.resolve(dir).startsWith(abs + path.sep));
  }

  /**
   * The allowed directory that the directory at `real` (lstat `st`) is (`itself`) or holds, compared by
   * identity, so that no spelling of it (a link on the way, another case) slips by: `real` itself or any
   * ancestor of an allowed directory that lies inside them is the same directory as `st`. Undefined when none.
   */
  async allowedHeldBy(real: string, st: BigIntStats): Promise<{ allowed: string; itself: boolean } | undefined> {
    for (const dir of this.dirs) {
      const lexical = path.resolve(dir);
      if (lexical === real || lexical.startsWith(real + path.sep)) return { allowed: dir, itself: lexical === real };
      for (let p = lexical; this.inside(p); p = path.dirname(p)) {
        // Followed: an allowed directory may be spelled through a link (only identities are compared).
        const at = await fs.stat(p, { bigint: true }).catch(() => undefined);
        if (at !== undefined && at.dev === st.dev && at.ino === st.ino) return { allowed: dir, itself: p === lexical };
        if (path.dirname(p) === p) break;
      }
    }
    return undefined;
  }

  /** The one refusal for a path that leads outside (SPEC §13): it names `shown` and nothing that lies outside. */
  denied(shown: string): SafeFsError {
    return accessDenied(shown, this.dirs);
  }

  /** The refusal for a relative link `shown` that a move or copy would make lead outside; nothing about where it leads. */
  linkWouldLeave(action: "move" | "copy", shown: string): SafeFsError {
    return refused({ kind: "linkWouldLeave", action, path: shown, allowed: this.dirs });
  }

  /** Throws the refusal naming `shown` (never `real`) unless `real` is inside. */
  assertInside(real: string, shown: string): void {
    if (!this.inside(real)) throw this.denied(shown);
  }

  /**
   * Opens directory `target` (following symlinks unless `noFollow`) and verifies its real path is inside;
   * the caller closes it. Low-level errors (ENOENT, ENOTDIR, ELOOP…) are rethrown unwrapped for the caller to word.
   */
  async openDir(target: string, shown: string, noFollow = false): Promise<OpenedDir> {
    const opened = await this.strategy.openDir(target, noFollow);
    try {
      this.assertInside(opened.real, shown);
      await __testHooks.afterOpenDir?.(opened.real);
    } catch (err) {
      await opened.close();
      throw err;
    }
    return opened;
  }

  /** Verifies that an opened file handle (reached as `reach`) refers to an object inside. */
  async assertHandleInside(handle: FileHandle, reach: string, shown: string): Promise<void> {
    this.assertInside(await this.strategy.realPathOf(handle, reach, shown), shown);
  }

  /**
   * Runs `act` on the entry `target` names, in its parent opened and verified inside; closes the parent
   * however `act` ends. `action` words the refusals (`Cannot <action> <shown>: …`); `shown` is how messages
   * name the target (the path as given), `target` itself by default.
   * @throws for the root, an allowed directory itself, a missing parent, or one that cannot be opened
   */
  async inParent<T>(target: string, action: string, act: (t: Target) => Promise<T>, shown = target): Promise<T> {
    const abs = path.resolve(target);
    const name = path.basename(abs);
    if (name === "") throw new SafeFsError(`Cannot ${action} ${shown}: it is the root directory`, { code: "EISDIR" });
    // Its parent is outside by definition, so the parent check below would call it "outside".
    if (this.isAllowedDirectory(abs)) {
      throw new SafeFsError(`Cannot ${action} ${shown}: it is one of the allowed directories, not a file inside one`, {
        code: "EISDIR",
      });
    }
    let dir: OpenedDir;
    try {
      dir = await this.openDir(path.dirname(abs), shown);
    } catch (err) {
      if (errnoCode(err) === "ENOENT") {
        throw new SafeFsError(`Cannot ${action} ${shown}: parent directory does not exist`, { cause: err });
      }
      throw wrapError(err, `Cannot ${action} ${shown}: cannot open its parent directory`);
    }
    try {
      return await act(new Target(dir, name, shown));
    } finally {
      await dir.close();
    }
  }
}
