/**
 * Containment, written once: a real path is inside the allowed directories,
 * an allowed directory is not a file operand, and a symlink met in a walk
 * leads inside.
 */
import path from "node:path";
import { isPathWithinAllowedDirectories } from "../path-validation.js";
import { accessDenied } from "./errors.js";

/** True when the real path `real` lies inside one of `allowedDirs` (checked as resolved, never trimmed). */
export function isInside(real: string, allowedDirs: readonly string[]): boolean {
  // normalizePath would trim a trailing space or quote and could admit a sibling of an allowed directory.
  return isPathWithinAllowedDirectories(real, allowedDirs);
}

/** Throws the access-denied refusal, naming `shown` and never `real`, unless `real` is inside `allowedDirs`. */
export function assertInside(real: string, shown: string, allowedDirs: readonly string[]): void {
  if (isInside(real, allowedDirs)) return;
  throw accessDenied(shown, allowedDirs);
}

/** True when `abs` is one of `allowedDirs` itself (not merely inside one). */
export function isAllowedDirectory(abs: string, allowedDirs: readonly string[]): boolean {
  return allowedDirs.some((dir) => path.resolve(dir) === abs);
}
