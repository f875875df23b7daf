/**
 * Startup directories (SPEC §2): each argument expanded, made absolute and
 * resolved; both the given and the resolved form are allowed; unusable ones
 * are skipped with upstream's warnings.
 */
import fs from "node:fs/promises";
import path from "node:path";
import { expandHome, normalizePath } from "./path-utils.js";

/**
 * Returns the allowed directory forms for the given arguments, warning about
 * each one that is missing, inaccessible or not a directory.
 */
export async function resolveStartupDirectories(args: readonly string[], warn: (line: string) => void): Promise<string[]> {
  const allowed: string[] = [];
  for (const arg of args) {
    const absolute = path.resolve(expandHome(arg));
    try {
      const stats = await fs.stat(absolute);
      if (!stats.isDirectory()) {
        warn(`Warning: ${arg} is not a directory, skipping`);
        continue;
      }
      const real = await fs.realpath(absolute);
      for (const form of [normalizePath(absolute), normalizePath(real)]) if (!allowed.includes(form)) allowed.push(form);
    } catch {
      warn(`Warning: Cannot access directory ${arg}, skipping`);
    }
  }
  return allowed;
}
