/**
 * Every open(2) flag set of the sandbox, in one table. A constant the platform lacks
 * (Windows) is 0 there, which drops that flag from the set.
 */
import { constants } from "node:fs";

const { O_APPEND, O_CREAT, O_EXCL, O_RDONLY, O_WRONLY } = constants;
const O_DIRECTORY = constants.O_DIRECTORY ?? 0;
const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const O_NONBLOCK = constants.O_NONBLOCK ?? 0;

/**
 * Reading a file: never through a final symlink, and O_NONBLOCK so a FIFO swapped in after a first
 * look cannot block the open (for regular files it changes nothing).
 */
export const READ_FLAGS = O_RDONLY | O_NOFOLLOW | O_NONBLOCK;

/** Holding a directory named by a path whose symlinks may lead anywhere (its real path is checked next). */
export const DIR_FLAGS = O_RDONLY | O_DIRECTORY;

/** Holding a directory met as an entry: a symlink in its place is refused, never followed. */
export const DIR_NOFOLLOW_FLAGS = O_RDONLY | O_DIRECTORY | O_NOFOLLOW;

/** A temp file that is to replace another: always a new file, never through a symlink. */
export const TEMP_FLAGS = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW;

/** The cross-process swap lock: taken by creating it, so only one process holds it; never through a symlink. */
export const LOCK_FLAGS = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW;

/**
 * Appending to a file that must already exist (an edit carrying late appends over to its new version, an
 * append_file in place); a FIFO swapped in fails (ENXIO) or is refused after fstat instead of blocking.
 */
export const APPEND_EXISTING_FLAGS = O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK;
