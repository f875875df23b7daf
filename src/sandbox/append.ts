/**
 * write_file's `append` (SPEC §12): adds text at the end of a file through the
 * verified parent directory, with O_APPEND so nothing already there is ever
 * truncated or overwritten, creating the file when it is missing.
 */
import { constants } from "node:fs";
import fs, { type FileHandle } from "node:fs/promises";
import { assertHandleInside, openParentOf } from "./dirs.js";
import { notRegular, SafeFsError, wrapError, errnoCode } from "./errors.js";
import { O_NOFOLLOW, O_NONBLOCK } from "./flags.js";
import { withFileLocks } from "./locks.js";
import { assertWritable } from "./ownership.js";

// O_NONBLOCK: a FIFO swapped in fails (ENXIO) or is refused after fstat instead of blocking.
const APPEND_FLAGS = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | O_NOFOLLOW | O_NONBLOCK;

/** Appends `content` to `path` (created if missing), never truncating; serialised with other changes to `path`. */
export async function appendFileSafely(path: string, content: string, allowedDirs: readonly string[]): Promise<void> {
  await withFileLocks([path], async () => {
    const { dir, name } = await openParentOf(path, allowedDirs, path, "append to");
    try {
      let handle: FileHandle;
      try {
        // 0o666: a new file's mode is left to the umask, as for write_file.
        handle = await fs.open(dir.child(name), APPEND_FLAGS, 0o666);
      } catch (err) {
        const code = errnoCode(err);
        if (code === "ELOOP" || code === "EMLINK") {
          throw new SafeFsError(`Cannot append to ${path}: it is a symbolic link; refusing to follow it`, { cause: err });
        }
        if (code === "EISDIR") throw new SafeFsError(`Cannot append to ${path}: it is a directory`, { cause: err });
        throw wrapError(err, `Cannot append to ${path}`);
      }
      try {
        const st = await handle.stat({ bigint: true });
        if (!st.isFile()) throw notRegular(path, st);
        await assertHandleInside(handle, dir.child(name), path, allowedDirs);
        assertWritable(st, path, "append to");
        await handle.writeFile(content, "utf8");
      } catch (err) {
        throw wrapError(err, `Cannot append to ${path}`);
      } finally {
        await handle.close();
      }
    } finally {
      await dir.close();
    }
  });
}
