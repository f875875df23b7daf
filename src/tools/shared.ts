/** What several tools share: their parameters' descriptions, the plain text result, and the directory a listing reads. */
import { formatCount } from "../kernel/bounded.js";
import type { Shown } from "../kernel/escape.js";
import { type FilePort, undecodable } from "../sandbox/index.js";

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
const PATH_PARAMETERS = ["path", "source", "destination", "paths"];

/**
 * For a failed call: a note on the first path parameter that begins or ends with whitespace (kept as part of the name,
 * as a file name may hold it, and easy to miss in the error's path) or holds U+FFFD, which listings show for the bytes
 * of a name that are not valid UTF-8 (no such name can be opened by a string); "" when none does.
 */
export function pathParameterNote(args: Readonly<Record<string, unknown>>): string {
  for (const key of PATH_PARAMETERS) {
    const value = args[key];
    for (const [i, v] of (Array.isArray(value) ? value : [value]).entries()) {
      if (typeof v !== "string") continue;
      const name = Array.isArray(value) ? `${key}[${i}]` : key;
      if (undecodable(v)) {
        return `\nNote: ${name} holds \uFFFD, which listings show in place of bytes of a name that are not valid UTF-8; this server cannot open such a name.`;
      }
      if (v.trim() === v) continue;
      const where = v.trimStart() === v ? "ends" : "begins";
      return `\nNote: ${name} ${where} with whitespace, which is taken as part of the name.`;
    }
  }
  return "";
}
