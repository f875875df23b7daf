/**
 * create_directory's `mkdir -p` (SPEC §4, §5 Races): from the nearest existing
 * ancestor, opened and verified inside, each missing component is created in
 * the directory opened before it and then opened itself without following a
 * symlink, so nothing is ever created outside the allowed directories, even if
 * a component is swapped for a symlink meanwhile.
 */
import fs from "node:fs/promises";
import path from "node:path";
import type { Confinement } from "./confinement.js";
import { errnoCode, isSymlinkRefusal, SafeFsError, wrapError } from "./errors.js";
import type { OpenedDir } from "./strategy.js";

/** Opens `dirPath`, or returns undefined when it does not exist. */
async function openIfExists(c: Confinement, dirPath: string, shown: string): Promise<OpenedDir | undefined> {
  try {
    return await c.openDir(dirPath, shown);
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return undefined;
    throw wrapError(err, `Cannot create directory ${shown}: cannot open ${dirPath}`);
  }
}

/** mkdir -p of `target` (an absolute path checked from inside); succeeds when it exists as a directory. */
export async function makeDirectory(c: Confinement, target: string): Promise<void> {
  const context = `Cannot create directory ${target}`;
  const missing: string[] = [];
  let current = path.resolve(target);
  let dir: OpenedDir | undefined;
  for (;;) {
    if (!c.inside(current)) {
      if (missing.length === 0) throw c.denied(target);
      throw new SafeFsError(`${context}: no ancestor inside the allowed directories exists`, { code: "ENOENT" });
    }
    dir = await openIfExists(c, current, target);
    if (dir) break;
    missing.unshift(path.basename(current));
    current = path.dirname(current);
  }
  try {
    for (const name of missing) {
      current = path.join(current, name);
      try {
        await fs.mkdir(dir.child(name));
      } catch (err) {
        if (errnoCode(err) !== "EEXIST") throw wrapError(err, `${context}: cannot create ${current}`);
      }
      // O_NOFOLLOW: a component swapped for a symlink since the mkdir is refused, not entered.
      let next: OpenedDir;
      try {
        next = await c.openDir(dir.child(name), target, true);
      } catch (err) {
        // Linux reports O_DIRECTORY|O_NOFOLLOW on a symlink as ENOTDIR, so look again to name it.
        const seen = await fs.lstat(dir.child(name)).catch(() => undefined);
        if (seen?.isSymbolicLink() || isSymlinkRefusal(err)) {
          throw new SafeFsError(`${context}: ${current} is a symbolic link; refusing to follow it`, { cause: err });
        }
        if (errnoCode(err) === "ENOTDIR") throw new SafeFsError(`${context}: ${current} is not a directory`, { cause: err });
        throw wrapError(err, `${context}: cannot open ${current}`);
      }
      const parent = dir;
      dir = next;
      await parent.close();
    }
  } finally {
    await dir.close();
  }
}
