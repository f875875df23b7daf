/**
 * The containment check (SPEC §7): a pure function of its arguments that says
 * whether an absolute path lies inside one of the allowed directories.
 */
import path from "node:path";

type PathFlavour = typeof path.posix;

function flavour(): PathFlavour {
  // Read at call time so tests can fake win32 on a posix host.
  return process.platform === "win32" ? path.win32 : path.posix;
}

function canonical(p: string, f: PathFlavour): string {
  // path.win32.resolve("C:") means "cwd on drive C", not the drive root.
  const spelled = f === path.win32 && /^[a-zA-Z]:$/.test(p) ? `${p}\\` : p;
  const resolved = f.resolve(f.normalize(spelled));
  return /^[a-z]:/.test(resolved) ? resolved.charAt(0).toUpperCase() + resolved.slice(1) : resolved;
}

function isUsable(value: unknown): value is string {
  return typeof value === "string" && value !== "" && !value.includes("\x00");
}

/**
 * True when `absolutePath` equals or lies below one of `allowedDirectories` (separator-aware, so `/a/b` never admits `/a/bc`);
 * false for non-strings, empty input, an empty list or NUL bytes.
 * @throws Error when a path is still not absolute after normalization.
 */
export function isPathWithinAllowedDirectories(absolutePath: string, allowedDirectories: readonly string[]): boolean {
  if (!isUsable(absolutePath) || !Array.isArray(allowedDirectories) || allowedDirectories.length === 0) {
    return false;
  }
  const f = flavour();
  const target = canonical(absolutePath, f);
  if (!f.isAbsolute(target)) {
    throw new Error(`Path must be absolute after normalization: ${absolutePath} became ${target}`);
  }

  return allowedDirectories.some((dir: unknown) => {
    if (!isUsable(dir)) return false;
    const base = canonical(dir, f);
    if (!f.isAbsolute(base)) {
      throw new Error(`Allowed directories must be absolute paths after normalization: ${dir} became ${base}`);
    }
    if (target === base) return true;
    // Roots (`/`, `C:\`, `\\server\share\`) already end in a separator; appending another would admit nothing.
    const prefix = base.endsWith(f.sep) ? base : base + f.sep;
    return target.startsWith(prefix);
  });
}
