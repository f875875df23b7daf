/**
 * The sandbox's errors: one error class, the wording of refusals written once,
 * and the conversion of Node system errors into messages that name the path.
 */
import type { BigIntStats, Stats } from "node:fs";
import { constants as osConstants } from "node:os";
import path from "node:path";
import { getSystemErrorMap } from "node:util";
import { escapeControls } from "../kernel/escape.js";

/**
 * An error raised by the sandbox; `code` mirrors the underlying errno code when there is one. Its
 * message is one line: control characters in the paths it quotes are escaped here, once for all.
 */
export class SafeFsError extends Error {
  readonly code: string | undefined;
  /** The refusal this error words, when it is one made as a value (`refused`). */
  readonly refusal: Refusal | undefined;
  constructor(message: string, options?: { cause?: unknown; code?: string; refusal?: Refusal }) {
    super(escapeControls(message), options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "SafeFsError";
    this.code = options?.code ?? errnoCode(options?.cause);
    this.refusal = options?.refusal;
  }

  /** The same error with `; <note>` added: what was and was not changed (SPEC §18). */
  withNote(note: string): SafeFsError {
    return new SafeFsError(`${this.message}; ${note}`, { cause: this.cause, code: this.code, refusal: this.refusal });
  }
}

/** Who holds a swap lock, as a refusal may name it: a pid, and whether it runs on this machine. */
export interface LockHolderShown {
  pid: number;
  thisMachine: boolean;
}

/**
 * A refusal as a value (STYLE 27): a kind and its fields, tested by kind and fields; `refusalText`
 * words it, once. `path` is always the path as the caller gave it.
 */
export type Refusal =
  /** A path one of whose components is a name of this server's own temp and lock files (names.ts). */
  | { kind: "reservedName"; path: string; name: string }
  /** A change that waited `waitedMs` for the lock of `path`, held all along by `holder`. */
  | { kind: "lockTimeout"; path: string; holder: LockHolderShown; waitedMs: number }
  /** A change cancelled while it waited for the lock of `path`. */
  | { kind: "lockCancelled"; path: string }
  /** A move or delete of `path`, which is (`itself`) or holds the allowed directory `allowed`. */
  | { kind: "holdsAllowed"; action: "move" | "delete"; path: string; allowed: string; itself: boolean }
  /** A change of `path` whose temp or lock name is taken by (a directory holding) the allowed directory `allowed`. */
  | { kind: "allowedAtServerName"; path: string; allowed: string }
  /** A path that leads outside the allowed directories `allowed` (SPEC §13): nothing about what lies there is said. */
  | { kind: "outside"; path: string; allowed: readonly string[] }
  /** A path that names a `what` ("directory", "FIFO", …) where a regular file is needed. */
  | { kind: "notRegular"; path: string; what: string }
  /** A path that is not a directory where one is needed (`not` "directory"), or names nothing (`not` "there"). */
  | { kind: "noDirectory"; path: string; not: "directory" | "there" }
  /** A file moved or copied to a destination that ends in a separator, which names a directory (there is none there). */
  | { kind: "fileAsDirectory"; action: "move" | "copy"; path: string; destination: string }
  /**
   * A destination that already exists (moves and copies never replace one); `into`, when it is a directory: the
   * destination that puts the source inside it (what `mv` and `cp` make of such a destination, which these tools do not).
   */
  | { kind: "exists"; path: string; into?: string }
  /** A file whose mode gives the server's user no write permission. */
  | { kind: "readOnly"; path: string; action: string; mode: string; uid: string; gid: string }
  /** A file another writer changed while an edit of it read it: nothing was written. */
  | { kind: "changed"; path: string }
  /** A copy or delete of `path` cancelled part way; `kept` says what was and was not done. */
  | { kind: "cancelled"; action: "copy" | "delete"; path: string; kept: string }
  /** A relative symlink `path` that, moved or copied as a link (its target text kept), would lead outside `allowed`. */
  | { kind: "linkWouldLeave"; action: "move" | "copy"; path: string; allowed: readonly string[] }
  /** A directory `path` moved or copied to `destination`, inside itself. */
  | { kind: "intoItself"; action: "move" | "copy"; path: string; destination: string }
  /** An entry `path` (a directory when `isDir`) moved to `destination` on another file system, which rename(2) cannot reach. */
  | { kind: "crossDevice"; path: string; destination: string; isDir: boolean };

/** The code of `changed`, so an operation that may redo itself (append_file) can tell it apart. */
export const CHANGED = "ECHANGED";

const REFUSAL_CODES: Record<Refusal["kind"], string> = {
  reservedName: "EINVAL",
  lockTimeout: "ETIMEDOUT",
  lockCancelled: "ECANCELED",
  holdsAllowed: "EPERM",
  allowedAtServerName: "EPERM",
  outside: "EACCES",
  notRegular: "EINVAL",
  noDirectory: "ENOTDIR",
  fileAsDirectory: "ENOTDIR",
  exists: "EEXIST",
  readOnly: "EACCES",
  changed: CHANGED,
  cancelled: "ECANCELED",
  linkWouldLeave: "EACCES",
  intoItself: "EINVAL",
  crossDevice: "EXDEV",
};

/** The errno-like code a refusal carries (callers that only read codes, and lib.ts, keep working). */
function codeOf(r: Refusal): string {
  if (r.kind === "notRegular" && r.what === "directory") return "EISDIR";
  if (r.kind === "noDirectory" && r.not === "there") return "ENOENT";
  return REFUSAL_CODES[r.kind];
}

/** Why every path is refused when there is no allowed directory (list_allowed_directories says it too). */
export const NO_DIRECTORIES =
  "this server has no allowed directories: none were named on its command line, and the client has given no valid MCP roots";

/** The one wording of each refusal. */
function refusalText(r: Refusal): string {
  switch (r.kind) {
    case "reservedName":
      return `Refused ${r.path}: ${r.name} is a name this server keeps for its own temp and lock files; no tool reads, writes, moves, copies or deletes it. Use another name`;
    case "lockTimeout": {
      const holder = r.holder.thisMachine ? `process ${r.holder.pid} on this machine` : `process ${r.holder.pid} on another machine`;
      return `Cannot change ${r.path}: another call of this server (${holder}) has been changing it all along; this call waited ${Math.round(r.waitedMs / 1000)} s for it and changed nothing. Try again later`;
    }
    case "lockCancelled":
      return `Cancelled while waiting to change ${r.path}, which another call was changing; nothing was changed`;
    case "holdsAllowed":
      return r.itself
        ? `Cannot ${r.action} ${r.path}: it is one of the allowed directories (${r.allowed}); only what is inside them can be ${r.action === "move" ? "moved" : "deleted"}`
        : `Cannot ${r.action} ${r.path}: it holds one of the allowed directories (${r.allowed}), which cannot be ${r.action === "move" ? "moved" : "deleted"}`;
    case "allowedAtServerName":
      return `Cannot change ${r.path}: one of the allowed directories (${r.allowed}) sits at a name this server keeps for its own temp and lock files; nothing was changed`;
    case "outside":
      return r.allowed.length === 0
        ? `Access denied - path outside allowed directories: ${r.path}: ${NO_DIRECTORIES}`
        : `Access denied - path outside allowed directories: ${r.path} not in ${r.allowed.join(", ")}`;
    case "linkWouldLeave":
      return (
        `Access denied - the symlink ${r.path} would lead outside the allowed directories (${r.allowed.join(", ")}) from its new ` +
        `place: a link is ${r.action === "move" ? "moved" : "copied"} as a link, its target text unchanged`
      );
    case "intoItself":
      return `Cannot ${r.action} ${r.path} to ${r.destination}: the destination lies inside the source`;
    case "crossDevice":
      return (
        `Cannot move ${r.path} to ${r.destination}: they are on different file systems, which a move (a rename) cannot cross ` +
        `(EXDEV); nothing was moved. Copy it with copy_file${r.isDir ? " (recursive: true)" : ""}, then delete the source with delete_file.`
      );
    case "notRegular":
      return `Not a regular file: ${r.path} (${r.what})`;
    case "noDirectory":
      return r.not === "directory" ? `Not a directory: ${r.path}` : `No such directory: ${r.path}`;
    case "fileAsDirectory":
      return (
        `Cannot ${r.action} ${r.path} to ${r.destination}: a destination ending in a separator names a directory, and there is ` +
        `none there; pass the file's new path, as ${path.join(r.destination, path.basename(r.path))} to put it into that ` +
        "directory once it exists (create_directory makes it)"
      );
    case "exists":
      return r.into === undefined
        ? `Destination already exists: ${r.path}`
        : `Destination already exists: ${r.path}, a directory: to put ${path.basename(r.into)} inside it, pass destination ${r.into}`;
    case "readOnly":
      return (
        `Cannot ${r.action} ${r.path}: it is read-only for this server's user (mode ${r.mode}, owner uid ${r.uid}, ` +
        `group gid ${r.gid}); refusing to replace it. Change its permissions first if it should be written.`
      );
    case "changed":
      return `File changed during edit: ${r.path}; no changes were written. Read it again and retry.`;
    case "cancelled":
      return r.action === "copy" ? `Copy of ${r.path} cancelled; ${r.kept}` : `Deleting ${r.path} was cancelled: ${r.kept}`;
  }
}

/** The SafeFsError that carries refusal `r`, worded by refusalText; `cause`, when given, is the error it stands for. */
export function refused(r: Refusal, cause?: unknown): SafeFsError {
  return new SafeFsError(refusalText(r), { cause, code: codeOf(r), refusal: r });
}

/** The refusal `err` carries, if it is one made as a value. */
export function refusalOf(err: unknown): Refusal | undefined {
  return err instanceof SafeFsError ? err.refusal : undefined;
}

/** True when `err` refuses to open a directory as a regular file. */
export function isDirectoryRefusal(err: unknown): boolean {
  const r = refusalOf(err);
  return r?.kind === "notRegular" && r.what === "directory";
}

/** The errno code (`ENOENT`, …) of a Node system error, if it is one. */
export function errnoCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

/**
 * `no such file or directory (ENOENT)` for a system error; the message otherwise. Never the message of a
 * system error, which quotes the paths it was given: internal ones (`/proc/self/fd/N/…`, the server's own
 * names) and a link's target text.
 */
export function reason(err: unknown): string {
  const e = err as { errno?: unknown; info?: { code?: unknown; message?: unknown } } | null;
  const entry = typeof e?.errno === "number" ? getSystemErrorMap().get(e.errno) : undefined;
  if (entry && entry[0] === errnoCode(err)) return `${entry[1]} (${entry[0]})`;
  // Node's own file-system errors (ERR_FS_EISDIR…) carry the system error they stand for in `info`.
  if (typeof e?.info?.code === "string" && typeof e.info.message === "string") return `${e.info.message} (${e.info.code})`;
  if (err instanceof Error && ("syscall" in err || "path" in err)) return `failed (${errnoCode(err) ?? "unknown error"})`;
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

/** True for an error of a system call (its message quotes the paths it was given), not one the sandbox or an engine worded. */
export function isSystemError(err: unknown): boolean {
  return err instanceof Error && !(err instanceof SafeFsError) && ("syscall" in err || "errno" in err);
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
  return refused({ kind: "noDirectory", path: given, not: "directory" }, cause);
}

/** Rewords a failure to open `shown` as a directory when it is missing or not one; other errors pass through. */
export function directoryError(err: unknown, shown: string): unknown {
  const code = errnoCode(err);
  if (code === "ENOTDIR") return notADirectory(shown, err);
  if (code === "ENOENT") return refused({ kind: "noDirectory", path: shown, not: "there" }, err);
  return err;
}

/**
 * The one refusal for a path that leads outside the allowed directories (SPEC §13): it names the path
 * as shown to the user and nothing about what lies outside, whatever that is.
 */
export function accessDenied(shown: string, allowedDirs: readonly string[]): SafeFsError {
  return refused({ kind: "outside", path: shown, allowed: allowedDirs });
}

/** `File changed during edit: <path>; no changes were written.`, for an edit whose file another writer changed. */
export function changedDuringEdit(shown: string): SafeFsError {
  return refused({ kind: "changed", path: shown });
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

/** `Not a regular file: <path> (<kind>)`: the refusal `notRegular`, whose `what` says "directory" for one. */
export function notRegular(shown: string, st: Stats | BigIntStats): SafeFsError {
  return refused({ kind: "notRegular", path: shown, what: kindOf(st) });
}

/** A Node-style system error for a condition detected without a syscall. */
export function errnoError(code: "ELOOP" | "ENOTDIR" | "ENAMETOOLONG", target: string): NodeJS.ErrnoException {
  const text = { ELOOP: "is a symbolic link", ENOTDIR: "not a directory", ENAMETOOLONG: "name too long" }[code];
  const err: NodeJS.ErrnoException = new Error(`${code}: ${text}, '${target}'`);
  err.code = code;
  err.errno = -osConstants.errno[code];
  return err;
}
