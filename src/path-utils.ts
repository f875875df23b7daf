/**
 * Path spelling helpers with upstream's semantics (SPEC §7). They only rewrite
 * strings; they never touch the disk. `process.platform` is read on every call
 * so tests can fake Windows.
 */
import os from "node:os";
import path from "node:path";

const isWindows = (): boolean => process.platform === "win32";

/** Rewrites `C:/a` to `C:\a` (any platform) and `/c/a` to `C:\a` (win32 only); WSL `/mnt/x/…` and posix paths are returned unchanged. */
export function convertToWindowsPath(p: string): string {
  // WSL paths are real Linux paths there; converting them breaks fs calls inside WSL.
  if (p.startsWith("/mnt/")) return p;
  if (/^\/[a-zA-Z]\//.test(p) && isWindows()) {
    return `${p.charAt(1).toUpperCase()}:${p.slice(2).replace(/\//g, "\\")}`;
  }
  if (/^[a-zA-Z]:/.test(p)) return p.replace(/\//g, "\\");
  return p;
}

function isUnixStylePath(p: string): boolean {
  if (!p.startsWith("/")) return false;
  if (/^\/mnt\/[a-z]\//i.test(p)) return true;
  return !isWindows() || !/^\/[a-zA-Z]\//.test(p);
}

function collapseBackslashes(p: string): string {
  if (p.startsWith("\\\\")) {
    // A UNC path keeps exactly two leading backslashes; doubles after that collapse.
    return `\\\\${p.replace(/^\\{2,}/, "").replace(/\\{2,}/g, "\\")}`;
  }
  return p.replace(/\\{2,}/g, "\\");
}

function stripTrailingSeparator(p: string): string {
  if (/^[a-zA-Z]:\\$/.test(p) || p === "\\" || p === "/") return p;
  return p.replace(/[\\/]+$/, "") || p;
}

/** Normalizes a user-supplied path: trims whitespace and quotes, collapses separators, drops a trailing separator (except at a root), upper-cases drive letters, keeps UNC and WSL forms. */
export function normalizePath(p: string): string {
  let s = p.trim().replace(/^["']|["']$/g, "");

  if (isUnixStylePath(s)) {
    // Posix paths are only tidied; `.`/`..` folding is left to the caller's path.resolve.
    return s.replace(/\/+/g, "/").replace(/(?<!^)\/$/, "");
  }

  s = collapseBackslashes(convertToWindowsPath(s));
  // A bare drive letter means that drive's root; path.win32.normalize("C:") would give "C:.".
  if (/^[a-zA-Z]:$/.test(s)) s = `${s}\\`;

  const flavour = isWindows() ? path.win32 : path.posix;
  let normalized = flavour.normalize(s);
  if (s.startsWith("\\\\") && !normalized.startsWith("\\\\")) normalized = `\\${normalized}`;

  if (/^[a-zA-Z]:/.test(normalized)) {
    const withBackslashes = normalized.replace(/\//g, "\\");
    return stripTrailingSeparator(withBackslashes.charAt(0).toUpperCase() + withBackslashes.slice(1));
  }
  return stripTrailingSeparator(isWindows() ? normalized.replace(/\//g, "\\") : normalized);
}

/** Expands a leading `~` or `~/` to the current user's home directory; every other path is returned unchanged. */
export function expandHome(filepath: string): string {
  if (filepath === "~" || filepath.startsWith("~/")) {
    return path.join(os.homedir(), filepath.slice(1));
  }
  return filepath;
}
