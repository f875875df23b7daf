/**
 * replace_in_files whole (SPEC §22): the files under a path counted first by search_file_contents' search
 * (its workers, regex budget, binary and .gitignore skips), refused past the call's replacement limit before
 * anything is written, then each file with occurrences rewritten alone through the sandbox's rewrite seam
 * (locked, atomic, line endings kept) by the line engine. A file that fails is named with why, beside
 * the files changed, so a model knows which files hold the new text.
 */
import { formatCount, TextSink } from "../kernel/bounded.js";
import { escapeControls, type Shown } from "../kernel/escape.js";
import { ContentSearch, literalNote, RegexTooCostlyError, type ScanWorkers } from "../grep/index.js";
import { type FilePort, otherNamesKeep } from "../sandbox/index.js";
import { checkPatterns, walkFiles, type WalkOptions } from "../walking/index.js";
import { compileReplacer, ReplacementLimit, replaceStream, type ReplaceSpec } from "./line-replace.js";

/** Files rewritten at once. */
const WRITERS = 8;

/** Most replacements one replace_in_files call makes. */
export const MAX_FILE_REPLACEMENTS = 100_000;

/** A replace_in_files call as the tool takes it. */
export interface ReplaceFilesArgs extends ReplaceSpec {
  path: string;
  pattern?: string;
  excludePatterns: readonly string[];
  respectGitignore: boolean;
  dryRun: boolean;
}

/** What the call's walk and its writes may use. */
export interface ReplaceFilesOptions extends WalkOptions {
  /** The runtime's idle scan workers, which the counting search takes its workers from. */
  workers: ScanWorkers;
  /** Descriptors one counting batch may hold. */
  batchFds?: number;
  /** Files the walk may open ahead of the batches (see FileSelection). */
  openAhead?: number;
  /** The call's limit on replacements. @default MAX_FILE_REPLACEMENTS */
  limit?: number;
}

/** A file handed to the count: its path, what names its file object (names of one object share it), and its count of names. */
interface Added {
  full: string;
  object: string;
  links: number;
}

interface Counted extends Added {
  shown: Shown;
  count: number;
}

/** A changed file's line's end when `left` other names (hard links) the call does not reach keep the old text (`would`: a dry run's); "" when none. */
const keptElsewhere = (left: number, would = false): string => (left <= 0 ? "" : `; ${otherNamesKeep(left, would)} the previous text`);

const counted = (n: number, one: string, many: string): string => `${formatCount(n)} ${n === 1 ? one : many}`;

/** The file's occurrences no longer there when it came to be written: nothing to write. */
class NothingLeft extends Error {}

/**
 * Counts the occurrences in every selected file, in walk order; returns those with any, the summary of
 * what was searched and skipped, and the notes of .gitignore files that could not be applied.
 */
async function countAll(
  sandbox: FilePort,
  args: ReplaceFilesArgs,
  search: ContentSearch,
  files: Added[],
  opts: ReplaceFilesOptions,
): Promise<string> {
  // One resolution: a file is opened and counted, a directory walked.
  const target = await sandbox.openFileOrDirectory(args.path);
  if (target.kind === "file") {
    try {
      files.push({ full: target.path, object: target.path, links: Number((await target.handle.stat()).nlink) });
      await search.searchFile(target.handle, escapeControls(target.path));
    } finally {
      await search.close();
      await target.handle.close();
    }
    return "";
  }
  try {
    const selection = {
      pattern: args.pattern,
      excludePatterns: args.excludePatterns,
      respectGitignore: args.respectGitignore,
      openAhead: opts.openAhead,
    };
    const notes = await walkFiles(
      target.path,
      selection,
      (opened, shown, full) => {
        // The walk is checked (no `unchecked`): each file comes with its identity.
        files.push({ full, object: opened.stat === undefined ? full : `${opened.stat.dev}:${opened.stat.ino}`, links: opened.links ?? 1 });
        return search.addFile(opened, shown);
      },
      (reason, count) => search.skip(reason, count),
      opts,
    );
    await search.drain();
    return notes;
  } finally {
    await search.close();
  }
}

/**
 * Runs one replace_in_files call, writing its report into `sink`: the totals and skips, the files that
 * failed (unchanged) and why, then `<path>: N replacements` per file changed (or, with dryRun, to change).
 * @throws when the arguments are refused, the path cannot be read, the regex is invalid or too costly,
 * the call would pass its replacement limit (nothing written), or the signal's reason before anything was written
 */
export async function replaceInFiles(sandbox: FilePort, args: ReplaceFilesArgs, sink: TextSink, opts: ReplaceFilesOptions): Promise<void> {
  checkPatterns([
    ...(args.pattern === undefined ? [] : [["pattern", args.pattern] as const]),
    ...args.excludePatterns.map((p, i) => [`excludePatterns[${i}]`, p] as const),
  ]);
  const limit = opts.limit ?? MAX_FILE_REPLACEMENTS;
  const replacer = compileReplacer(args);
  // Files as added to the search, in order; the search reports each back in the same order.
  const added: (Added | undefined)[] = [];
  let next = 0;
  const found: Counted[] = [];
  let total = 0;
  const search = new ContentSearch({
    workers: opts.workers,
    query: replacer.query,
    mode: "count",
    // Counting shows nothing: the search's own text (its summary) goes to a sink of its own.
    sink: new TextSink(sink.max),
    signal: opts.signal,
    batchFds: opts.batchFds,
    onCounted(shown, count) {
      const file = added[next] as Added;
      added[next++] = undefined;
      total += count;
      if (count > 0 && total <= limit) found.push({ ...file, shown, count });
    },
  });
  let notes: string;
  try {
    notes = await countAll(sandbox, args, search, added as Added[], opts);
  } catch (error) {
    if (error instanceof RegexTooCostlyError) throw new RegexTooCostlyError(`${error.message}\nNothing was written.`, { cause: error });
    throw error;
  }
  const summary = search.soFar().split("\n");
  const skips = summary.slice(1).join("\n");
  const searched = search.totals.filesSearched;
  if (total > limit) {
    throw new Error(
      `replace_in_files would make ${formatCount(total)} replacements in ${counted(search.totals.matchingFiles, "file", "files")}, more than ` +
        `the limit of ${formatCount(limit)} a call; nothing was written. Narrow path, pattern or the query, or split the change into calls.`,
    );
  }
  if (total === 0) {
    const literal = args.regex === true ? "" : literalNote(args.query);
    sink.append(
      `No occurrences found; searched ${counted(searched, "file", "files")}; nothing was written.${skips ? `\n${skips}` : ""}${notes}${literal}`,
    );
    return;
  }
  if (args.dryRun) {
    sink.append(
      `Dry run, nothing written: would make ${counted(total, "replacement", "replacements")} in ${counted(found.length, "file", "files")}; ` +
        `searched ${counted(searched, "file", "files")}.${skips ? `\n${skips}` : ""}${notes}`,
    );
    // Names of a file the call would not reach (outside `path`, or left out) would keep the old text, as in the write.
    const reached = new Map<string, number>();
    for (const f of found) reached.set(f.object, (reached.get(f.object) ?? 0) + 1);
    for (const f of found) {
      const left = f.links - (reached.get(f.object) as number);
      listLine(sink, f.shown, f.count, keptElsewhere(left, true));
    }
    return;
  }
  await writeAll(sandbox, replacer, found, limit, sink, {
    searched,
    skips: `${skips ? `\n${skips}` : ""}${notes}`,
    signal: opts.signal,
    onProgress: opts.onProgress,
  });
}

function listLine(sink: TextSink, shown: Shown, count: number, note = ""): void {
  sink.append(`\n${shown}: ${counted(count, "replacement", "replacements")}${note}`);
  sink.endEntry();
}

/** Rewrites each counted file, in turn, and reports what changed and what did not. */
async function writeAll(
  sandbox: FilePort,
  replacer: ReturnType<typeof compileReplacer>,
  found: readonly Counted[],
  limit: number,
  sink: TextSink,
  o: { searched: number; skips: string; signal?: AbortSignal; onProgress?: (n: number) => void },
): Promise<void> {
  const outcomes: ({ count: number; note: string } | { why: string } | undefined)[] = found.map(() => undefined);
  let stopped: string | undefined;
  // Room past the counted total, for files that grew since the count: taken line by line as a file needs it
  // (files rewritten at once share it exactly), and given back by a file left unchanged or that shrank.
  let slack = limit - found.reduce((n, f) => n + f.count, 0);
  let next = 0;
  let started = 0;
  // `later`: the names of this file object the call rewrites after this one (its chain's rest).
  const one = async (i: number, later: number): Promise<void> => {
    const f = found[i] as Counted;
    let seen = 0;
    let extra = 0;
    let kept = 0;
    const take = (n: number): boolean => {
      const need = Math.max(0, seen + n - f.count) - extra;
      if (need > slack) return false;
      slack -= need;
      extra += need;
      seen += n;
      return true;
    };
    try {
      const {
        value: count,
        appendedBytes,
        otherNames,
      } = await sandbox.rewrite(f.full, { dryRun: false, signal: o.signal }, async (source, out, sig) => {
        const n = await replaceStream({
          source,
          replacer,
          shown: f.shown,
          write: out === null ? undefined : (c) => out.write(c),
          take,
          signal: sig,
        });
        if (n === 0) throw new NothingLeft();
        return n;
      });
      kept = count;
      const drift = count === f.count ? "" : ` (${formatCount(f.count)} when counted: the file changed meanwhile)`;
      const late = appendedBytes === 0 ? "" : `; ${counted(appendedBytes, "byte", "bytes")} another process appended meanwhile were kept`;
      // Names the call does not reach (outside `path`, or left out) keep the old text: an atomic rewrite replaces one name.
      const left = otherNames - later;
      outcomes[i] = { count, note: drift + late + keptElsewhere(left) };
    } catch (error) {
      if (error instanceof NothingLeft) outcomes[i] = { why: "no occurrence left (the file changed after it was counted); not changed" };
      else if (error instanceof ReplacementLimit) {
        outcomes[i] = {
          why: `it would pass the limit of ${formatCount(limit)} replacements a call (the file grew after it was counted); not changed`,
        };
        stopped ??= "the call stopped at the replacement limit";
      } else if (o.signal?.aborted) {
        outcomes[i] = { why: "cancelled; not changed" };
        stopped ??= "the call was cancelled";
      } else outcomes[i] = { why: error instanceof Error ? error.message : String(error) };
    } finally {
      // What the file holds now is its share; the rest of its count and of what it took goes back.
      slack += f.count + extra - kept;
    }
  };
  // Several files at once: each rewrite waits a moment after its swap for late writers, and those waits overlap. The
  // names of one file object (hard links) one after another: a name's swap changes the object's link count and so its
  // ctime, and a rewrite of another name open meanwhile took that for another writer and refused.
  const byObject = new Map<string, number[]>();
  for (const [i, f] of found.entries()) {
    const chain = byObject.get(f.object);
    if (chain === undefined) byObject.set(f.object, [i]);
    else chain.push(i);
  }
  const chains = [...byObject.values()];
  const worker = async (): Promise<void> => {
    while (next < chains.length && stopped === undefined) {
      const chain = chains[next++] as number[];
      for (const [k, i] of chain.entries()) {
        if (stopped !== undefined) break;
        o.onProgress?.(started++);
        await one(i, chain.length - k - 1);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(WRITERS, chains.length) }, worker));
  const changed = found.flatMap((f, i) => {
    const r = outcomes[i];
    return r !== undefined && "count" in r ? [{ f, count: r.count, note: r.note }] : [];
  });
  const failed = found.flatMap((f, i) => {
    const r = outcomes[i];
    return r !== undefined && "why" in r ? [{ f, why: r.why }] : [];
  });
  const notReached = found.filter((_, i) => outcomes[i] === undefined);
  const changedCount = changed.reduce((n, c) => n + c.count, 0);
  const unreached = notReached.length;
  const head =
    `Replaced ${counted(changedCount, "occurrence", "occurrences")} in ${counted(changed.length, "file", "files")}; searched ${counted(o.searched, "file", "files")}.` +
    (failed.length + unreached > 0
      ? ` Not changed: ${counted(failed.length + unreached, "file", "files")} that held occurrences when counted (listed first${stopped ? `; ${stopped}` : ""}).`
      : "");
  sink.append(head + o.skips);
  for (const { f, why } of failed) {
    sink.append(`\n${f.shown}: not changed: ${escapeControls(why)}`);
    sink.endEntry();
  }
  for (const f of notReached) {
    sink.append(`\n${f.shown}: not changed: not reached (${stopped ?? "the call stopped"})`);
    sink.endEntry();
  }
  for (const c of changed) listLine(sink, c.f.shown, c.count, c.note);
}
