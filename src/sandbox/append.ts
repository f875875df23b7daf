/**
 * write_file's `append` (SPEC §12): adds text at the end of a file through its
 * verified parent directory, with O_APPEND so nothing already there is ever
 * truncated or overwritten, creating the file when it is missing.
 */
import fs, { type FileHandle } from "node:fs/promises";
import type { Confinement } from "./confinement.js";
import { errnoCode, isSymlinkRefusal, notRegular, SafeFsError, wrapError } from "./errors.js";
import { APPEND_OR_CREATE_FLAGS } from "./flags.js";
import { assertWritable } from "./replace.js";

/** Appends `content` to `real` (a validated path; created if missing), never truncating. */
export function appendText(c: Confinement, real: string, content: string): Promise<void> {
  return c.inParent(real, "append to", async (t) => {
    let handle: FileHandle;
    try {
      // 0o666: a new file's mode is left to the umask, as for write_file.
      handle = await fs.open(t.at, APPEND_OR_CREATE_FLAGS, 0o666);
    } catch (err) {
      if (isSymlinkRefusal(err)) {
        throw new SafeFsError(`Cannot append to ${t.shown}: it is a symbolic link; refusing to follow it`, { cause: err });
      }
      if (errnoCode(err) === "EISDIR") throw new SafeFsError(`Cannot append to ${t.shown}: it is a directory`, { cause: err });
      throw wrapError(err, `Cannot append to ${t.shown}`);
    }
    try {
      const st = await handle.stat({ bigint: true });
      if (!st.isFile()) throw notRegular(t.shown, st);
      await c.assertHandleInside(handle, t.at, t.shown);
      assertWritable(st, t.shown, "append to");
      await handle.writeFile(content, "utf8");
    } catch (err) {
      throw wrapError(err, `Cannot append to ${t.shown}`);
    } finally {
      await handle.close();
    }
  });
}
