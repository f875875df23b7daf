/**
 * The one name form of the files this server creates in users' directories
 * (SPEC §18): `.bfs-<32 hex>.tmp` for a new version, a copy or a tree being
 * built, `.bfs-<32 hex>.lock` for the swap lock, where the digits are the
 * first half of the SHA-256 of the entry's name. One name per entry and kind,
 * so a leftover of a killed server is found with one look, not a directory
 * scan, the next time that entry is written; and one predicate, so no
 * listing, walk or search ever shows, counts or searches them.
 * (lib.ts keeps upstream's `<path>.<32 hex>.tmp`, SPEC §7; it is not ours.)
 */
import { SEPARATORS } from "./platform/host.js";
import { createHash } from "node:crypto";
import type { Dirent } from "node:fs";

const SERVER_ENTRY = /^\.bfs-[0-9a-f]{32}\.(?:tmp|lock)$/;

const digits = (name: string): string => createHash("sha256").update(name).digest("hex").slice(0, 32);

/** The temp entry that holds the next version (or the copy being built) of entry `name`. */
export function tempNameOf(name: string): string {
  return `.bfs-${digits(name)}.tmp`;
}

/** The cross-process swap lock of entry `name`: fixed length, so a long name cannot make it too long. */
export function lockNameOf(name: string): string {
  return `.bfs-${digits(name)}.lock`;
}

/** True for a name of this server's own temp and lock files, which no tool shows. */
export function isServerEntry(name: string): boolean {
  return name.length === 41 || name.length === 42 ? SERVER_ENTRY.test(name) : false;
}

/** The entries a tool may see: `entries` without this server's own temp and lock files. */
export function visible(entries: Dirent[]): Dirent[] {
  return entries.some((entry) => isServerEntry(entry.name)) ? entries.filter((entry) => !isServerEntry(entry.name)) : entries;
}

/** The first component of `p` (split at the platform's separators) that is one of this server's own names, if any. */
export function serverNameIn(p: string): string | undefined {
  return p.split(SEPARATORS).find(isServerEntry);
}

/**
 * True for a name Node read from a directory with bytes that are not valid UTF-8, which it gives as U+FFFD: not found
 * under that string, no call can reach the entry (a name really holding U+FFFD is found, so asked only after ENOENT).
 */
export function undecodable(name: string): boolean {
  return name.includes("\uFFFD");
}
