/**
 * Streaming edit_file engine (SPEC §12): applies upstream's edit semantics to a file of any size
 * while holding only the edited ranges and their diff context, keeps every line ending outside
 * the edited text, writes the result through `write`, and returns the hunks-only diff.
 */
import { formatCount } from "../bounded.js";
import { escapeControls, type Shown } from "../escape.js";
import { fenceDiff, normalizeLineEndings, type EditOperation } from "./edits.js";
import { ExactFinder } from "./exact.js";
import { PatchedDoc } from "./patched-doc.js";
import { EditSearch } from "./match-search.js";
import { type ByteSource, checkAbort, SourceIndex } from "./source-index.js";
import { streamedDiff } from "./stream-diff.js";
import { LinePattern, rebase, TolerantFinder, type LineMatch } from "./tolerant.js";

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
  /** Lines longer than this are never a whitespace-tolerant match. @default 1 MiB */
  maxLineBytes?: number;
  /** How long the engine may run before it lets other work in. @default 10 ms */
  sliceMs?: number;
}

/** What streamEdit did. */
export interface StreamEditResult {
  /** fenceDiff(unified diff), as edit_file returns it. */
  diff: string;
  /** Bytes handed to `write` (the edited file's size). */
  bytesWritten: number;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const COPY_BYTES = 1024 * 1024;

interface PreparedEdit {
  oldText: string;
  newText: string;
  pattern: Buffer;
  lines: LinePattern | undefined;
}

function prepare(edits: readonly EditOperation[]): PreparedEdit[] {
  return edits.map((edit, i) => {
    for (const field of ["oldText", "newText"] as const) {
      // Buffer.from would turn a lone surrogate into U+FFFD, silently matching or writing other text.
      if (LONE_SURROGATE.test(edit[field])) throw new Error(`edits[${i}].${field} is not well-formed Unicode (a lone surrogate)`);
    }
    const oldText = normalizeLineEndings(edit.oldText);
    return { oldText, newText: normalizeLineEndings(edit.newText), pattern: Buffer.from(oldText), lines: undefined };
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

/** `text` with each LF not already after a CR written as `ending`. */
function withEnding(text: Buffer, ending: string): Buffer {
  if (ending === "\n") return text;
  const parts: Buffer[] = [];
  let from = 0;
  for (let at = text.indexOf(0x0a); at !== -1; at = text.indexOf(0x0a, at + 1)) {
    if (at > 0 && text[at - 1] === 0x0d) continue;
    parts.push(text.subarray(from, at), Buffer.from(ending));
    from = at + 1;
  }
  parts.push(text.subarray(from));
  return Buffer.concat(parts);
}

/** Applies every edit to the document, in order, each to the result of the ones before. */
async function applyAll(edits: PreparedEdit[], given: readonly EditOperation[], search: EditSearch, pause: () => Promise<void>): Promise<void> {
  for (const [k, edit] of edits.entries()) {
    await pause();
    if (edit.pattern.length === 0) {
      search.replace(0, 0, Buffer.from(edit.newText));
      continue;
    }
    const at = await search.exact(k, edit.pattern);
    if (at !== undefined) {
      search.replace(at, at + edit.pattern.length, Buffer.from(edit.newText));
      continue;
    }
    edit.lines ??= new LinePattern(edit.oldText.split("\n"));
    const match = await search.tolerant(k, edit.lines);
    if (match === undefined) {
      throw new Error(
        `Could not find exact match for edit:\n${given[k]?.oldText ?? ""}\n(edits[${k}], edit ${k + 1} of ${edits.length}, ` +
          "applied to the text as the edits before it left it; lines over " +
          `${formatCount(search.maxLineBytes)} bytes are matched only exactly, not ignoring whitespace)`,
      );
    }
    search.replace(match.start, match.end, Buffer.from(rebase(match.firstLine, edit.lines.oldLines, edit.newText)));
  }
}

/** Streams the original raw bytes with each patch's range replaced by its text in the file's line endings. */
async function writeOut(doc: PatchedDoc, write: (chunk: Buffer) => Promise<void>, pause: () => Promise<void>): Promise<number> {
  const { index } = doc;
  let written = 0;
  let cursor = 0;
  const copyUntil = async (end: number): Promise<void> => {
    while (cursor < end) {
      await pause();
      const length = Math.min(COPY_BYTES, end - cursor);
      const bytes = await index.source.read(cursor, length);
      if (bytes.length !== length) throw index.changed();
      await write(bytes);
      written += length;
      cursor += length;
    }
  };
  for (const patch of doc.patches) {
    await copyUntil(await index.rawOf(patch.start));
    const text = withEnding(patch.text, await index.endingFrom(patch.start));
    if (text.length > 0) await write(text);
    written += text.length;
    cursor = await index.rawOf(patch.end);
  }
  await copyUntil(index.source.size);
  return written;
}

/**
 * Applies `edits` like edits.ts applyEdits on the LF-normalized text, streaming the file, and
 * returns the fenced hunks-only diff; LF files come out byte-identical to applyEdits' text.
 * @throws `Could not find exact match for edit:\n<oldText>…` when an edit matches nowhere; when
 * the file is not UTF-8 or changes meanwhile; the signal's reason when it aborts
 */
export async function streamEdit(options: StreamEditOptions): Promise<StreamEditResult> {
  const { source, signal, write, path = escapeControls("file") } = options;
  const edits = prepare(options.edits);
  const pause = pauser(signal, options.sliceMs ?? 10);
  const maxLineBytes = options.maxLineBytes ?? 1024 * 1024;
  const exact = new ExactFinder(
    edits.map((e) => e.pattern),
    0,
  );
  const index = await SourceIndex.build(source, { blockBytes: options.blockBytes, signal, path }, async (block) => {
    if (!exact.done) exact.feed(block);
    await pause();
  });
  // Edits with no exact occurrence in the original are the likely whitespace-tolerant ones:
  // one more pass finds all their first tolerant matches at once.
  const lineHints: (LineMatch | undefined | null)[] = edits.map(() => null);
  const tolerantOnes = edits.map((e, i) =>
    e.pattern.length > 0 && exact.found[i] === undefined ? (e.lines = new LinePattern(e.oldText.split("\n"))) : undefined,
  );
  if (tolerantOnes.some((p) => p !== undefined)) {
    const finder = new TolerantFinder(tolerantOnes, 0, () => true, maxLineBytes);
    for await (const block of index.blocksFrom(0)) {
      finder.feed(block);
      if (finder.done) break;
      await pause();
    }
    finder.finish(index.normSize);
    tolerantOnes.forEach((p, i) => {
      if (p !== undefined) lineHints[i] = finder.found[i];
    });
  }
  const doc = new PatchedDoc(index);
  const radius = edits.reduce((most, e) => Math.max(most, e.pattern.length), 1);
  const around = edits.reduce((most, e) => Math.max(most, e.oldText.split("\n").length), 1) + 1;
  const search = new EditSearch(doc, index, exact.found.slice(), lineHints, maxLineBytes, pause, radius, around);
  await applyAll(edits, options.edits, search, pause);
  const diff = fenceDiff(await streamedDiff(doc, path, pause));
  const bytesWritten = write === undefined ? 0 : await writeOut(doc, write, pause);
  return { diff, bytesWritten };
}
