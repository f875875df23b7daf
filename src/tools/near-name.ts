/**
 * The note on a path that names nothing because one of its names differs from an entry's only in letter case or in
 * Unicode form (`readme.md` for `README.md`, a composed `é` for the `e` and U+0301 a macOS archive wrote): on a
 * case-sensitive file system the two are different names, and the error alone reads as if the file were not there.
 */
import { asciiJson, escapeControls } from "../kernel/escape.js";
import { errnoCode, type FilePort, type WalkPort } from "../sandbox/index.js";

/** The names of one directory read for a near name: a directory past this is not read further. */
export const NEAR_NAME_ENTRIES = 10_000;
/** The failed paths of one call looked at for a near name (read_multiple_files may name 10,000 in one directory). */
export const NEAR_NAME_LOOKUPS = 8;
/** The directories of a path tried upward for the deepest one that exists (each is resolved from the top). */
export const NEAR_NAME_LEVELS = 32;

const fold = (name: string): string => name.normalize("NFC").toLowerCase();

/**
 * For `value` of path parameter `name`, which named nothing: when the deepest directory of it that exists holds no
 * entry by its next name but exactly one that differs from it only in letter case or Unicode form, a note naming
 * that entry and the path with it in place; "" otherwise. Every directory is opened and read through `files` and
 * `walks`, so nothing outside the allowed directories is looked at.
 */
export async function nearNameNote(files: FilePort, walks: WalkPort, name: string, value: string): Promise<string> {
  const separators = [...value.matchAll(/[\\/]+/g)].filter((m) => m.index + m[0].length < value.length);
  for (let k = separators.length - 1; k >= Math.max(-1, separators.length - 1 - NEAR_NAME_LEVELS); k--) {
    const at = separators[k];
    const start = at === undefined ? 0 : at.index + at[0].length;
    const end = separators[k + 1]?.index ?? value.length;
    const wanted = value.slice(start, end);
    if (wanted === "" || wanted === "." || wanted === "..") return "";
    // The directory as given, with its separator ("/" for the root); "." for a relative name alone.
    const dir = at === undefined ? "." : value.slice(0, at.index + at[0].length);
    const found = await entryLike(files, walks, dir, wanted);
    if (found === "missing") continue;
    if (found === undefined) return "";
    // Only a link whose target lies inside fails with ENOENT: one leading outside is refused as outside, whether or not
    // its target exists, so this says nothing of what lies outside.
    if (found === "dangling")
      return `\nNote: ${escapeControls(at === undefined ? wanted : dir + wanted)} is a symbolic link whose target does not exist.`;
    const corrected = `${value.slice(0, start)}${found.name}${value.slice(start + wanted.length)}`;
    return (
      `\nNote: ${escapeControls(at === undefined ? found.dir : dir)} holds no ${escapeControls(wanted)}, ` +
      `but it holds ${escapeControls(found.name)}, ${difference(wanted, found.name)}; with it, ${name} reads ${escapeControls(corrected)}`
    );
  }
  return "";
}

/**
 * The one entry of directory `dir` whose name folds to `wanted`'s, and the directory's real path; "missing" when `dir`
 * does not exist (its parent is to be tried); "dangling" when `wanted` itself is a symbolic link there (the path named
 * nothing, so its target does not exist); undefined when it holds `wanted` as anything else, none or several such, or
 * cannot be read. Only its first NEAR_NAME_ENTRIES names are read.
 */
async function entryLike(
  files: FilePort,
  walks: WalkPort,
  dir: string,
  wanted: string,
): Promise<{ name: string; dir: string } | "missing" | "dangling" | undefined> {
  let opened: Awaited<ReturnType<FilePort["openDirectory"]>>;
  try {
    opened = await files.openDirectory(dir);
  } catch (error) {
    const code = errnoCode(error);
    return code === "ENOENT" || code === "ENOTDIR" ? "missing" : undefined;
  }
  try {
    const key = fold(wanted);
    let like: string | undefined;
    let read = 0;
    reading: for await (const batch of walks.entryBatches(opened.child(""))) {
      for (const entry of batch) {
        if (read++ === NEAR_NAME_ENTRIES) break reading;
        if (entry.name === wanted) return entry.isSymbolicLink() ? "dangling" : undefined;
        if (fold(entry.name) === key) {
          if (like !== undefined) return undefined;
          like = entry.name;
        }
      }
    }
    return like === undefined ? undefined : { name: like, dir: opened.real };
  } catch {
    return undefined;
  } finally {
    await opened.close();
  }
}

/** How `found` differs from `wanted`, for the note. */
function difference(wanted: string, found: string): string {
  if (wanted.normalize("NFC") === found.normalize("NFC")) {
    return `the same letters in other Unicode code points (as JSON: ${asciiJson(found)})`;
  }
  return wanted.toLowerCase() === found.toLowerCase()
    ? "a name that differs only in letter case"
    : "a name that differs in letter case and Unicode form";
}
