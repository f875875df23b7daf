/** open(2) flags the sandbox uses; absent constants are 0 where unsupported (Windows), which drops the flag. */
import { constants } from "node:fs";

/** open(2) flag: fail unless the target is a directory (0 where unsupported). */
export const O_DIRECTORY = constants.O_DIRECTORY ?? 0;
/** open(2) flag: fail if the final component is a symlink (0 where unsupported). */
export const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;
/** open(2) flag: do not block, e.g. on a FIFO without a writer (0 where unsupported). */
export const O_NONBLOCK = constants.O_NONBLOCK ?? 0;

/**
 * Opening a file to read it: never through a final symlink, and O_NONBLOCK so a FIFO swapped in
 * after a first look cannot block the open (for regular files it changes nothing).
 */
export const READ_FLAGS = constants.O_RDONLY | O_NOFOLLOW | O_NONBLOCK;
