/**
 * The sandbox's errors: one error class, the wording of refusals written once,
 * and the conversion of Node system errors into messages that name the path.
 */
import type { BigIntStats, Stats } from "node:fs";
import { constants as osConstants } from "node:os";
import { getSystemErrorMap } from "node:util";
import { escapeControls } from "../kernel/escape.js";

/**
 * An error raised by the sandbox; `code` mirrors the underlying errno code when there is one. Its
 * message is one line: control characters in the paths it quotes are escaped here, once for all.
 */
export class SafeFsError extends Error {
  readonly code: string | undefined;
  constructor(message: string, options?: { cause?: unknown; code?: string }) {
    super(escapeControls(message), options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "SafeFsError";
    this.code = options?.code ?? errnoCode(options?.cause);
  }

  /** The same error with `; <note>` added: what was and was not changed (SPEC §18). */
  withNote(note: string): SafeFsError {
    return new SafeFsError(`${this.message}; ${note}`, { cause: this.cause, code: this.code });
  }
}

/** The errno code (`ENOENT`, …) of a Node system error, if it is one. */
export function errnoCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

/** `no such file or directory (ENOENT)` for a system error; the message otherwise. */
export function reason(err: unknown): string {
  const errno = (err as { errno?: unknown } | null)?.errno;
  const entry = typeof errno === "number" ? getSystemErrorMap().get(errno) : undefined;
  if (entry && entry[0] === errnoCode(err)) return `${entry[1]} (${entry[0]})`;
  return err instanceof Error ? err.message : String(err);
}

/** Passes SafeFsErrors through; wraps anything else as `<context>: <reason>` with `{ cause }`. */
export function wrapError(err: unknown, context: string): SafeFsError {
  if (err instanceof SafeFsError) return err;
  // The context quotes the path; when the path itself is the problem it can be longer than the
  // result cap, so the reason goes first where the cut cannot hide it.
  if (errnoCode(err) === "ENAMETOOLONG") return new SafeFsError(`Path too long (ENAMETOOLONG): ${context}`, { cause: err });
  return new SafeFsError(`${context}: ${reason(err)}`, { cause: err });
}

/** A failure of the disk or the system (no space, I/O error, quota, size limit), not a refusal the sandbox worded. */
export function isIoFailure(err: unknown): boolean {
  const code = errnoCode(err);
  return code === "ENOSPC" || code === "EIO" || code === "EDQUOT" || code === "EFBIG" || code === "EROFS";
}

/** True when an open with O_NOFOLLOW was refused because the final component is a symlink. */
export function isSymlinkRefusal(err: unknown): boolean {
  // Linux and macOS report it as ELOOP, FreeBSD as EMLINK.
  const code = errnoCode(err);
  return code === "ELOOP" || code === "EMLINK";
}

/** `Not a directory: <path as given>`, as the shell says it. */
export function notADirectory(given: string, cause?: unknown): SafeFsError {
  return new SafeFsError(`Not a directory: ${given}`, { cause, code: "ENOTDIR" });
}

/** Rewords a failure to open `shown` as a directory when it is missing or not one; other errors pass through. */
export function directoryError(err: unknown, shown: string): unknown {
  const code = errnoCode(err);
  if (code === "ENOTDIR") return notADirectory(shown, err);
  if (code === "ENOENT") return new SafeFsError(`No such directory: ${shown}`, { cause: err });
  return err;
}

/**
 * The one refusal for a path that leads outside the allowed directories (SPEC §13): it names the path
 * as shown to the user and nothing about what lies outside, whatever that is.
 */
export function accessDenied(shown: string, allowedDirs: readonly string[]): SafeFsError {
  return new SafeFsError(`Access denied - path outside allowed directories: ${shown} not in ${allowedDirs.join(", ")}`, {
    code: "EACCES",
  });
}

/** The code of `changedDuringEdit`, so an operation that may redo itself (append_file) can tell it apart. */
export const CHANGED = "ECHANGED";

/** `File changed during edit: <path>; no changes were written.`, for an edit whose file another writer changed. */
export function changedDuringEdit(shown: string): SafeFsError {
  return new SafeFsError(`File changed during edit: ${shown}; no changes were written. Read it again and retry.`, { code: CHANGED });
}

/** Human name of what a stat describes ("directory", "FIFO", …). */
function kindOf(st: Stats | BigIntStats): string {
  if (st.isFile()) return "regular file";
  if (st.isDirectory()) return "directory";
  if (st.isSymbolicLink()) return "symbolic link";
  if (st.isFIFO()) return "FIFO";
  if (st.isSocket()) return "socket";
  if (st.isCharacterDevice()) return "character device";
  if (st.isBlockDevice()) return "block device";
  return "special file";
}

/** `Not a regular file: <path> (<kind>)`, with code EISDIR for a directory (callers tell it apart by code). */
export function notRegular(shown: string, st: Stats | BigIntStats): SafeFsError {
  return new SafeFsError(`Not a regular file: ${shown} (${kindOf(st)})`, { code: st.isDirectory() ? "EISDIR" : "EINVAL" });
}

/** A Node-style system error for a condition detected without a syscall. */
export function errnoError(code: "ELOOP" | "ENOTDIR" | "ENAMETOOLONG", target: string): NodeJS.ErrnoException {
  const text = { ELOOP: "is a symbolic link", ENOTDIR: "not a directory", ENAMETOOLONG: "name too long" }[code];
  const err: NodeJS.ErrnoException = new Error(`${code}: ${text}, '${target}'`);
  err.code = code;
  err.errno = -osConstants.errno[code];
  return err;
}
