/** What several tools share: their parameters' descriptions, the plain text result, and the directory a listing reads. */
import { formatCount } from "../kernel/bounded.js";
import { escapeControls, type Shown } from "../kernel/escape.js";
import { type FilePort, SYSTEM_NAME, undecodable, WINDOWS } from "../sandbox/index.js";

/** The schema description of a path parameter naming a file (the path rules are in the server's instructions). */
export const PATH_DOC = "File path.";
export const DIR_DOC = "Directory.";
export const EXCLUDE_DOC = "Globs to leave out.";
export const GITIGNORE_DOC = "true: skip .git and .gitignore'd paths.";
/** respectGitignore where it is on by default (the content tools): the schema's default says so, as the siblings' false. */
export const GITIGNORE_ON_DOC = "Skip .git and .gitignore'd paths.";
export const REGEX_DOC = "true: query is a JavaScript regex source.";
export const FILES_GLOB_DOC = "Glob of files to include; default all.";
/** How to narrow a cut listing. */
export const LIST_ADVICE = "list a subdirectory, or use search_files with a pattern";

/**
 * The descriptors a content search over a tree may hold besides its walk's, given the process's open-file limit:
 * a counting batch's (a 32nd of the limit, 4 at least; the batcher holds at most 256), and the files its walk
 * opens ahead of the batches (an eighth of that, 32 at most; none under 8).
 */
export function searchDescriptors(openFileLimit: number): { batchFds: number; openAhead: number } {
  const batchFds = Number.isFinite(openFileLimit) ? Math.max(4, Math.floor(openFileLimit / 32)) : 256;
  return { batchFds, openAhead: Math.min(32, Math.floor(batchFds / 8)) };
}

/** A tool result of one text block. */
export const text = (value: string) => ({ content: [{ type: "text" as const, text: value }] });

/** excludePatterns as named parameters for checkPatterns. */
export const excludeParams = (excludePatterns: readonly string[]) => excludePatterns.map((p, i) => [`excludePatterns[${i}]`, p] as const);

/** The refusal of content that ends like a capped result of this server (SPEC §12). */
export function writingBackCappedRead(path: Shown): Error {
  return new Error(
    `Refusing to write ${path}: the content's last line is this server's own "[Result truncated: ...]" notice, so it ` +
      "looks like a capped read being written back, which would cut the file short and write the notice into it. " +
      "To change part of the file use edit_file; to get the rest of the text, call read_text_file again with the " +
      "offset the notice gives.",
  );
}

/**
 * Runs `list` on the validated directory opened once: on Linux it reads through
 * /proc/self/fd, so a directory swapped for a symlink after validation is not
 * followed out of the allowed directories.
 */
export async function withDirectory(requested: string, sandbox: FilePort, list: (dir: string) => Promise<void>): Promise<void> {
  const opened = await sandbox.openDirectory(requested);
  try {
    await list(opened.child(""));
  } finally {
    await opened.close();
  }
}

// Progress every this many entries: a notification per entry of a 100,000-entry tree would cost more than the work.
export const PROGRESS_EVERY = 1000;

/** `n` with its unit, singular or plural: '1 byte', '2,048 bytes'. */
export const counted = (n: number, one: string, many: string): string => `${formatCount(n)} ${n === 1 ? one : many}`;

/** The parameters that name paths: their values are taken exactly as given. */
export const PATH_PARAMETERS = ["path", "source", "destination", "paths"] as const;

// A glob's special characters (`[` and `{` are left out: real names hold them, as Next.js's `[id].tsx`).
const GLOB = /[*?]/;
// A compiler's or grep's location after a name: `src/a.ts:12`, `src/a.ts:12:5`.
const LOCATION = /^(.+?):(\d+)(?::\d+)?$/;

/**
 * For a failed call: a note on the first path parameter that begins or ends with whitespace (kept as part of the name,
 * as a file name may hold it, and easy to miss in the error's path) or holds U+FFFD, which listings show for the bytes
 * of a name that are not valid UTF-8 (no such name can be opened by a string); and when nothing was `missing` at the
 * path, on one written as a glob (`src/*.ts`: a path is a name) or ending in a line number (`a.ts:12`). "" when none.
 */
export function pathParameterNote(args: Readonly<Record<string, unknown>>, missing: boolean): string {
  for (const key of PATH_PARAMETERS) {
    const value = args[key];
    for (const [i, v] of (Array.isArray(value) ? value : [value]).entries()) {
      if (typeof v !== "string") continue;
      const note = pathNote(Array.isArray(value) ? `${key}[${i}]` : key, v, missing);
      if (note !== "") return note;
    }
  }
  return "";
}

/** pathParameterNote's note on one path parameter `name` holding `value`; "" when none. */
export function pathNote(name: string, value: string, missing: boolean): string {
  if (undecodable(value)) {
    return `\nNote: ${name} holds \uFFFD, which listings show in place of bytes of a name that are not valid UTF-8; this server cannot open such a name.`;
  }
  if (value.trim() !== value)
    return `\nNote: ${name} ${value.trimStart() === value ? "ends" : "begins"} with whitespace, which is taken as part of the name.`;
  if (!missing) return "";
  const glob = globNote(name, value);
  if (glob !== undefined) return glob;
  const at = LOCATION.exec(value);
  if (at === null) return backslashNote(name, value);
  return (
    `\nNote: ${name} ends in :${at[2]}, which is taken as part of the name; to read ${escapeControls(at[1] as string)} from line ` +
    `${at[2]}, call read_text_file with that path and startLine ${at[2]}.`
  );
}

// Where / is the only separator, a Windows path (`C:\Users\a.txt`, `src\a.ts`) is one name holding backslashes.
function backslashNote(name: string, value: string): string {
  if (WINDOWS || !value.includes("\\")) return "";
  const drive = /^[A-Za-z]:\\/.exec(value);
  if (drive !== null) {
    return (
      `\nNote: ${name} is a Windows path (drive ${drive[0].slice(0, 2)}), and this server runs on ${SYSTEM_NAME}, where \\ is part of a name, ` +
      "not a separator; list_allowed_directories gives the directories it serves."
    );
  }
  return `\nNote: ${name} holds \\, which on ${SYSTEM_NAME} is part of a name, not a separator; with / it reads ${escapeControls(value.replaceAll("\\", "/"))}.`;
}

// A path holding * or ?: the directory before its first such segment, and the rest as the pattern to pass instead.
function globNote(name: string, value: string): string | undefined {
  const segments = value.split(/(?<=[\\/])/);
  const first = segments.findIndex((segment) => GLOB.test(segment));
  if (first === -1) return undefined;
  const dir =
    segments
      .slice(0, first)
      .join("")
      .replace(/[\\/]+$/, "") || ".";
  const pattern = segments.slice(first).join("").replaceAll("\\", "/");
  return (
    `\nNote: ${name} holds ${value.includes("*") ? "*" : "?"}, and a path is taken as a name, not as a glob; to take files by a glob, ` +
    `pass path ${escapeControls(dir)} and pattern ${escapeControls(pattern)} to search_files or search_file_contents.`
  );
}
