/**
 * Startup directories (SPEC §2): each argument expanded, made absolute and
 * resolved; both the given and the resolved form are allowed; unusable ones
 * are skipped with upstream's warnings.
 */
import { resolveDirectory } from "../roots-utils.js";

/**
 * Returns the allowed directory forms for the given arguments (as given first, then resolved),
 * warning about each one that is missing, inaccessible or not a directory.
 */
export async function resolveStartupDirectories(args: readonly string[], warn: (line: string) => void): Promise<string[]> {
  const allowed: string[] = [];
  for (const arg of args) {
    const dir = await resolveDirectory(arg);
    if (dir.kind === "inaccessible") warn(`Warning: Cannot access directory ${arg}, skipping`);
    else if (dir.kind === "not-directory") warn(`Warning: ${arg} is not a directory, skipping`);
    else for (const form of [dir.original, dir.resolved]) if (!allowed.includes(form)) allowed.push(form);
  }
  return allowed;
}
