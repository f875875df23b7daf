/** open(2) flags the sandbox uses; absent constants are 0 where unsupported (Windows), which drops the flag. */
import { constants } from "node:fs";

/** open(2) flag: fail unless the target is a directory (0 where unsupported). */
export const O_DIRECTORY = constants.O_DIRECTORY ?? 0;
/** open(2) flag: fail if the final component is a symlink (0 where unsupported). */
export const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;
/** open(2) flag: do not block, e.g. on a FIFO without a writer (0 where unsupported). */
export const O_NONBLOCK = constants.O_NONBLOCK ?? 0;
