/** get_file_info's fields (SPEC §4, §7), from a stat result; lib.ts's getFileStats returns the same. */
import type { Stats } from "node:fs";

/** What get_file_info reports about a path, in upstream's order. */
export interface FileInfo {
  size: number;
  created: Date;
  modified: Date;
  accessed: Date;
  isDirectory: boolean;
  isFile: boolean;
  permissions: string;
}

/** Upstream's get_file_info fields, in its order, from a stat result: permissions as the last three octal digits of the mode. */
export function fileInfo(stats: Stats): FileInfo {
  return {
    size: stats.size,
    created: stats.birthtime,
    modified: stats.mtime,
    accessed: stats.atime,
    isDirectory: stats.isDirectory(),
    isFile: stats.isFile(),
    permissions: stats.mode.toString(8).slice(-3),
  };
}
