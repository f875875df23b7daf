/**
 * Streaming edit_file engine (SPEC §12): applies upstream's edit semantics to a file of any size
 * while holding only the edited ranges and their diff context, keeps every line ending outside
 * the edited text, writes the result through `write`, and returns the hunks-only diff.
 */
import { formatCount } from "../kernel/bounded.js";
import { escapeControls, type Shown } from "../kernel/escape.js";
import { fenceDiff, normalizeLineEndings, type EditOperation } from "./edits.js";
import { ExactFinder, KEPT_OCCURRENCES } from "./exact.js";
import { PatchedDoc } from "./patched-doc.js";
import { EditRefused } from "./refusals.js";
import { EditSearch, type FirstPass } from "./match-search.js";
import { type ByteSource, checkAbort, SourceIndex } from "./source-index.js";
import { DIFF_BUDGET_BYTES, streamedDiff } from "./stream-diff.js";
import { LinePattern, rebase, TolerantFinder, type LineMatch } from "./tolerant.js";
import { type Copied, PREFIX_MIN_BYTES, writeOut } from "./write-out.js";

export type { ByteSource } from "./source-index.js";

/** Input of streamEdit. */
export interface StreamEditOptions {
  source: ByteSource;
  edits: readonly EditOperation[];
  /** Names the file in the diff headers and in errors, as shown. @default "file" */
  path?: Shown;
  signal?: AbortSignal;
  /** Receives the edited file in order; omitted for a dry run. */
  write?: (chunk: Buffer) => Promise<void>;
  /** Raw bytes read at a time. @default 65536 */
  blockBytes?: number;
  /** Bytes of blocks kept for re-reading (at least 4 blocks). @default 2 MiB */
  cacheBytes?: number;
  /** Lines longer than this are never a whitespace-tolerant match. @default 1 MiB */
  maxLineBytes?: number;
  /** How long the engine may run before it lets other work in. @default 10 ms */
  sliceMs?: number;
  /** Build the diff; without it `diff` is "" and no line around the edits is read for it. @default true */
  withDiff?: boolean;
  /** Lines a diff window of nearby edits grows to before it is cut (tests make it small). @default 256 (stream-diff.ts) */
  diffWindowLines?: number;
  /** Most bytes handed to `write` at once (the output is gathered up to this). @default WRITE_BYTES */
  writeBytes?: number;
  /**
   * Puts the source's first `length` bytes at the start of the output, before any `write` (a kernel copy):
   * used for the unchanged part before the first edit when it is a large share of the file.
   */
  copyPrefix?: (length: number) => Promise<void>;
  /** Starts the kernel's copy of the whole file beside the first pass, for a later `copyPrefix` (the sink's `copyAhead`). */
  copyAhead?: () => void;
  /** Ends the output with the source's rest, left in place by the copy started ahead (the sink's `keepRest`); false when it cannot. */
  keepRest?: (from: number) => Promise<boolean>;
  /** Told where each stretch of the source copied unchanged lands in the output (the rewrite sink's `copied`). */
  copied?: Copied;
}

/** What streamEdit did. */
export interface StreamEditResult {
  /** fenceDiff(unified diff), as edit_file returns it. */
  diff: string;
  /** Bytes handed to `write` (the edited file's size). */
  bytesWritten: number;
  /** Replacements each edit made (1 unless replaceAll). */
  counts: number[];
  /** The 1-based lines of the edited file from the first change to the last; undefined when nothing was replaced. */
  lines?: { first: number; last: number };
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

interface PreparedEdit {
  oldText: string;
  newText: string;
  pattern: Buffer;
  lines: LinePattern | undefined;
  replaceAll: boolean;
}

/** Most replacements one edit_file call makes (each is a range held in memory until the write). */
export const MAX_REPLACEMENTS = 100_000;
// Line numbers an ambiguity refusal names.
const NAMED_LINES = 10;

function prepare(edits: readonly EditOperation[]): PreparedEdit[] {
  return edits.map((edit, i) => {
    for (const field of ["oldText", "newText"] as const) {
      // Buffer.from would turn a lone surrogate into U+FFFD, silently matching or writing other text.
      if (LONE_SURROGATE.test(edit[field])) throw new EditRefused({ kind: "loneSurrogate", edit: i, field });
    }
    const oldText = normalizeLineEndings(edit.oldText);
    const replaceAll = edit.replaceAll === true;
    if (oldText === "") throw new EditRefused({ kind: "emptyOldText", edit: i });
    return { oldText, newText: normalizeLineEndings(edit.newText), pattern: Buffer.from(oldText), lines: undefined, replaceAll };
  });
}

function pauser(signal: AbortSignal | undefined, sliceMs: number): () => Promise<void> {
  let since = Date.now();
  return async () => {
    checkAbort(signal);
    if (Date.now() - since < sliceMs) return;
    await new Promise((resolve) => setImmediate(resolve));
    checkAbort(signal);
    since = Date.now();
  };
}

/** The refusal of an edit whose old text is in several places, naming the first lines. */
async function ambiguous(k: number, search: EditSearch, edit: PreparedEdit, tolerant: boolean): Promise<EditRefused> {
  const scanned = tolerant
    ? await search.scanLines(edit.lines as LinePattern, NAMED_LINES)
    : await search.scanExact(edit.pattern, false, NAMED_LINES);
  const offsets = scanned.found.map((f) => (typeof f === "number" ? f : f.start));
  return new EditRefused({ kind: "ambiguous", edit: k, count: scanned.count, lines: await search.lineNumbers(offsets), tolerant });
}

/** Applies every edit to the document, in order, each to the result of the ones before; returns each edit's replacement count. */
async function applyAll(edits: PreparedEdit[], given: readonly EditOperation[], search: EditSearch, pause: () => Promise<void>): Promise<number[]> {
  const counts: number[] = [];
  let replacements = 0;
  for (const [k, edit] of edits.entries()) {
    await pause();
    if (edit.replaceAll) {
      const left = MAX_REPLACEMENTS - replacements;
      // What the first pass kept usually settles it; a scan of the edited text is the fallback.
      const known = await search.allExact(k, edit.pattern);
      const all = known === undefined ? await search.scanExact(edit.pattern, true, left + 1, left + 1) : { found: known, count: known.length };
      if (all.count === 0) throw new EditRefused({ kind: "noOccurrence", edit: k });
      if (all.count > left) throw new EditRefused({ kind: "tooMany", edit: k, left, limit: MAX_REPLACEMENTS });
      search.replaceEach(all.found, edit.pattern.length, Buffer.from(edit.newText));
      replacements += all.count;
      counts.push(all.count);
      continue;
    }
    const exact = await search.exact(k, edit.pattern);
    if (exact.kind === "many") throw await ambiguous(k, search, edit, false);
    if (exact.kind === "one") {
      search.replace(exact.at, exact.at + edit.pattern.length, Buffer.from(edit.newText));
      replacements++;
      counts.push(1);
      continue;
    }
    edit.lines ??= new LinePattern(edit.oldText.split("\n"));
    const match = await search.tolerant(k, edit.lines);
    if (match.kind === "many") throw await ambiguous(k, search, edit, true);
    if (match.kind === "none") {
      throw new EditRefused({ kind: "notFound", edit: k, edits: edits.length, oldText: given[k]?.oldText ?? "", maxLineBytes: search.maxLineBytes });
    }
    const { start, end, indents } = match.at;
    search.replace(start, end, Buffer.from(rebase(indents, edit.lines.oldLines, edit.newText)));
    replacements++;
    counts.push(1);
  }
  return counts;
}

/** The lines saying how many replacements each edit made, when one made more than one or was a replaceAll (SPEC §15, §22). */
function countLines(counts: readonly number[], edits: readonly PreparedEdit[]): string {
  if (counts.every((n) => n <= 1) && !edits.some((e) => e.replaceAll)) return "";
  return `${counts.map((n, k) => `edits[${k}]: replaced ${n === 1 ? "1 occurrence" : `${formatCount(n)} occurrences`}`).join("\n")}\n\n`;
}

/** Line feeds in `text`. */
function lineFeeds(text: Buffer): number {
  let n = 0;
  for (let at = text.indexOf(0x0a); at !== -1; at = text.indexOf(0x0a, at + 1)) n++;
  return n;
}

/** The lines of the edited file from the first change's start to the last one's end (1-based). */
async function changedLines(doc: PatchedDoc): Promise<{ first: number; last: number } | undefined> {
  const { patches, index } = doc;
  const head = patches[0];
  const tail = patches[patches.length - 1];
  if (head === undefined || tail === undefined) return undefined;
  // Nothing before the first change moves; the last one's end line shifts by the line feeds every change added or removed.
  let shift = 0;
  for (const p of patches) {
    // Asked in increasing order, which lineOf answers from its last answer.
    const from = await index.lineOf(p.start);
    shift += lineFeeds(p.text) - ((await index.lineOf(p.end)) - from);
  }
  const first = (await index.lineOf(head.start)) + 1;
  return { first, last: Math.max(first, (await index.lineOf(tail.end)) + 1 + shift) };
}

/**
 * Applies `edits` in order on the LF-normalized text, streaming the file: each edit's old text where it
 * is the only exact occurrence, else the only whitespace-tolerant match (as edits.ts applyEdits places
 * it), or every exact occurrence with replaceAll; returns the counts (when an edit made several) and the
 * fenced hunks-only diff. LF files come out byte-identical to applyEdits' text for unambiguous edits.
 * @throws `Could not find exact match for edit:\n<oldText>…` when an edit matches nowhere; an
 * `edits[i].oldText occurs in N places (lines …)` refusal when it is ambiguous; when replaceAll finds
 * nothing or passes MAX_REPLACEMENTS; when the file is not UTF-8 or changes meanwhile; the signal's reason
 */
export async function streamEdit(options: StreamEditOptions): Promise<StreamEditResult> {
  const { source, signal, write, path = escapeControls("file") } = options;
  const edits = prepare(options.edits);
  // A large file's copy runs beside the first pass (on another core, where there is one): the unchanged start is then
  // taken from it, and what follows the first change is written over it.
  if (write !== undefined && options.copyPrefix !== undefined && source.size >= PREFIX_MIN_BYTES) options.copyAhead?.();
  const pause = pauser(signal, options.sliceMs ?? 10);
  const maxLineBytes = options.maxLineBytes ?? 1024 * 1024;
  const exact = new ExactFinder(
    edits.map((e) => e.pattern),
    0,
    // A replaceAll keeps every original occurrence (one past the limit), so it needs no second pass.
    edits.map((e) => (e.replaceAll ? MAX_REPLACEMENTS + 1 : KEPT_OCCURRENCES)),
  );
  const index = await SourceIndex.build(source, { blockBytes: options.blockBytes, cacheBytes: options.cacheBytes, signal, path }, async (block) => {
    exact.feed(block);
    await pause();
  });
  const exactHints = edits.map((e, i): FirstPass<number> | undefined =>
    e.pattern.length === 0 ? undefined : { count: exact.counts[i] ?? 0, kept: exact.found[i] ?? [] },
  );
  // Edits with no exact occurrence in the original are the likely whitespace-tolerant ones: one more
  // pass counts all their tolerant matches at once, keeping the first few of each.
  const lineHints: (FirstPass<LineMatch> | null)[] = edits.map(() => null);
  const tolerantOnes = edits.map((e, i) =>
    e.pattern.length > 0 && !e.replaceAll && exactHints[i]?.count === 0 ? (e.lines = new LinePattern(e.oldText.split("\n"))) : undefined,
  );
  if (tolerantOnes.some((p) => p !== undefined)) {
    const kept: LineMatch[][] = edits.map(() => []);
    const counts = edits.map(() => 0);
    const collect = (i: number, m: LineMatch): boolean => {
      counts[i] = (counts[i] ?? 0) + 1;
      if ((kept[i]?.length ?? 0) < KEPT_OCCURRENCES) kept[i]?.push(m);
      return false;
    };
    const finder = new TolerantFinder(tolerantOnes, 0, collect, maxLineBytes);
    for await (const block of index.blocksFrom(0)) {
      finder.feed(block);
      await pause();
    }
    finder.finish(index.normSize);
    tolerantOnes.forEach((p, i) => {
      if (p !== undefined) lineHints[i] = { count: counts[i] ?? 0, kept: kept[i] ?? [] };
    });
  }
  const doc = new PatchedDoc(index);
  const radius = edits.reduce((most, e) => Math.max(most, e.pattern.length), 1);
  const around = edits.reduce((most, e) => Math.max(most, e.oldText.split("\n").length), 1) + 1;
  const search = new EditSearch(doc, index, exactHints, lineHints, maxLineBytes, pause, radius, around);
  const counts = await applyAll(edits, options.edits, search, pause);
  const lines = await changedLines(doc);
  if (options.withDiff === false) {
    const bytesWritten =
      write === undefined ? 0 : await writeOut(doc, write, pause, options.writeBytes, options.copyPrefix, options.copied, options.keepRest);
    return { diff: "", bytesWritten, counts, lines };
  }
  const streamed = await streamedDiff(doc, path, pause, options.diffWindowLines);
  const cut = streamed.omitted;
  const note =
    cut === undefined
      ? ""
      : `[The diff leaves out ${formatCount(cut.regions)} changed region${cut.regions === 1 ? "" : "s"} from line ` +
        `${formatCount(cut.fromLine)} on (it reads at most ${formatCount(DIFF_BUDGET_BYTES)} bytes); the edits apply there too]\n`;
  const diff = countLines(counts, edits) + fenceDiff(streamed.diff) + note;
  const bytesWritten =
    write === undefined ? 0 : await writeOut(doc, write, pause, options.writeBytes, options.copyPrefix, options.copied, options.keepRest);
  return { diff, bytesWritten, counts, lines };
}
