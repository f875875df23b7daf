/**
 * The files of a tree, for search_file_contents (SPEC §10): every regular file
 * under `root` whose path matches `pattern` and no exclude (.gitignore too when
 * asked), opened through the sandbox and handed to `onFile` one at a time, in
 * walk order. Symlinks are followed only to files inside; each file object is
 * visited once, however many names lead to it; what is not visited is counted.
 */
import type { Dirent } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import path from "node:path";
import { Minimatch } from "minimatch";
import type { Sandbox } from "../sandbox/index.js";
import { GitignoreFilter, withGitignore } from "./gitignore.js";
import { walkTree, type WalkOptions } from "./walker.js";

/** Why an entry was not searched. */
export type FileSkip = "gitignored" | "unreadable" | "outsideLink";

/** What to walk and which files to take. */
export interface FileSelection {
  /** Glob matched against each file's path relative to the root (search_files' rules); every file when absent. */
  pattern?: string;
  excludePatterns: readonly string[];
  respectGitignore: boolean;
}

/** Receives each selected file, opened and verified; the walker closes the handle after the promise settles. */
export type FileVisitor = (handle: FileHandle, shown: string) => Promise<void>;

const isDirectoryRefusal = (error: unknown): boolean => /\(directory\)/.test(error instanceof Error ? error.message : "");

async function openLinked(sandbox: Sandbox, link: string): Promise<{ handle: FileHandle } | FileSkip | "directory"> {
  const verdict = await sandbox.followLink(link, false);
  if (verdict.kind !== "inside") return verdict.kind === "outside" ? "outsideLink" : "unreadable";
  try {
    return { handle: (await sandbox.openFile(verdict.target.real)).handle };
  } catch (error) {
    // A link to a directory is listed by search_files but never descended; it holds no file to search.
    return isDirectoryRefusal(error) ? "directory" : "unreadable";
  }
}

/**
 * Walks `root`, calling `onFile` for each selected file and `onSkip` for each entry left out.
 * @throws when `root` cannot be read, or the signal's reason when cancelled
 */
export async function walkFiles(
  root: string,
  selection: FileSelection,
  onFile: FileVisitor,
  onSkip: (reason: FileSkip, count: number) => void,
  opts: WalkOptions,
): Promise<void> {
  const excludes = selection.excludePatterns.map((p) => new Minimatch(p, { dot: true }));
  const matcher = selection.pattern === undefined ? undefined : new Minimatch(selection.pattern, { dot: true });
  const seen = new Set<string>();
  const visit = async (handle: FileHandle, shown: string): Promise<void> => {
    try {
      const st = await handle.stat({ bigint: true });
      const id = `${st.dev}:${st.ino}`;
      if (seen.has(id)) return;
      seen.add(id);
      await onFile(handle, shown);
    } finally {
      await handle.close();
    }
  };
  const enter = async (dir: string, entry: Dirent, rel: string, reach: string): Promise<void> => {
    if (entry.isDirectory() || (matcher !== undefined && !matcher.match(rel))) return;
    const shown = path.join(dir, entry.name);
    if (entry.isSymbolicLink()) {
      const linked = await openLinked(opts.sandbox, reach + entry.name);
      if (typeof linked === "string") {
        if (linked !== "directory") onSkip(linked, 1);
        return;
      }
      return visit(linked.handle, shown);
    }
    if (!entry.isFile()) return;
    let handle: FileHandle;
    try {
      ({ handle } = await opts.sandbox.openWalkedFile(reach, entry.name, shown));
    } catch {
      opts.signal?.throwIfAborted();
      onSkip("unreadable", 1);
      return;
    }
    return visit(handle, shown);
  };
  const gitignore = selection.respectGitignore ? new GitignoreFilter(root, opts.sandbox) : undefined;
  const skipped = await walkTree(
    root,
    withGitignore(
      {
        excluded: (rel) => excludes.some((m) => m.match(rel)),
        enter: (dir, entry, rel, _depth, reach) => enter(dir, entry, rel, reach ?? dir + path.sep),
        leave() {},
      },
      gitignore,
    ),
    opts,
  );
  if (skipped.count > 0) onSkip("unreadable", skipped.count);
  if (gitignore !== undefined && gitignore.ignored + gitignore.gitDirs > 0) onSkip("gitignored", gitignore.ignored + gitignore.gitDirs);
}
