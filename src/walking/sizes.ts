/**
 * Upstream's size format for list_directory_with_sizes (SPEC §4, §7); lib.ts
 * exports it as its `formatSize`.
 */

const UNITS = ["B", "KB", "MB", "GB", "TB"];

/** Formats a byte count as upstream does: `<n> B` below 1024, else two decimals of KB…TB (negative input yields `NaN`). */
export function formatSize(bytes: number): string {
  if (bytes === 0) return "0 B";
  const exponent = Math.floor(Math.log(bytes) / Math.log(1024));
  if (exponent <= 0) return `${bytes} B`;
  // Upstream's arithmetic is kept on purpose: for negative sizes both parts become NaN/undefined.
  const unit = Math.min(exponent, UNITS.length - 1);
  return `${(bytes / 1024 ** unit).toFixed(2)} ${UNITS[unit]}`;
}
