/**
 * Directories read for walks (SPEC §3.3): a walk's root, opened and verified
 * once, and the fd a walk's read holds, released once.
 */
import { closeSync } from "node:fs";
import fs from "node:fs/promises";
import type { Confinement } from "./confinement.js";
import { directoryError, wrapError } from "./errors.js";
import type { Listing, Read } from "./strategy.js";

/**
 * Opens and reads a walk's root (an already validated path), verified inside; `close` releases it.
 * @throws when `root` cannot be opened or read (naming it), or is outside the allowed directories
 */
export async function openWalkRoot(c: Confinement, root: string): Promise<{ listing: Listing; close: () => Promise<void> }> {
  const opened = await c.openDir(root, root).catch((error: unknown) => {
    throw directoryError(error, root);
  });
  try {
    const entries = await fs.readdir(opened.child(""), { withFileTypes: true }).catch((error: unknown) => {
      throw wrapError(error, `Cannot read directory ${root}`);
    });
    return { listing: { entries, reach: opened.reach, fd: -1 }, close: () => opened.close() };
  } catch (error) {
    await opened.close();
    throw error;
  }
}

/** Closes the fd a walk's read holds, once; nothing to do for a failed read or a listing without one. */
export function release(read: Read): void {
  if (!("fd" in read) || read.fd < 0) return;
  const fd = read.fd;
  read.fd = -1;
  closeSync(fd);
}
