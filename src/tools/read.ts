/** The reading tools: read_text_file, read_file, read_multiple_files, read_media_file. */
import { z } from "zod";
import { formatCount, type TextSink, type ToolOutput } from "../kernel/bounded.js";
import { escapeControls, type Shown } from "../kernel/escape.js";
import { headInto, readLineWindow, readMedia, readWindow, streamInto, tailInto } from "../reading/index.js";
import { defineTool, READ_ONLY, readOptions, streamed, type ToolContext } from "./context.js";

/** The schema description of a path parameter naming a file (the path rules are in the server's instructions). */
export const PATH_DOC = "File path.";
// Only head/tail results are cut with this advice: windows carry their own pageable notice.
const HEAD_TAIL_ADVICE = "ask for fewer lines, or use startLine and lineCount";

const count = z.number().int().min(0);

const readTextInput = {
  path: z.string().describe(PATH_DOC),
  offset: count.optional().describe("Character to start at, as a notice gives it."),
  limit: z.number().int().min(1).optional().describe("Characters to return; at most, and by default, the cap."),
  head: count.optional().describe("Only the first N lines."),
  tail: count.optional().describe("Only the last N lines."),
  startLine: z.number().int().min(1).optional().describe("Line to start at (1: the first)."),
  lineCount: z.number().int().min(1).optional().describe("Lines to return; default: up to the cap."),
};

type ReadTextArgs = {
  path: string;
  offset?: number;
  limit?: number;
  head?: number;
  tail?: number;
  startLine?: number;
  lineCount?: number;
};

/** Refuses combinations SPEC §3.2 forbids, naming both parameters. */
function checkReadArgs(args: ReadTextArgs): void {
  const lines = (["head", "tail"] as const).filter((k) => args[k] !== undefined);
  const window = (["offset", "limit"] as const).filter((k) => args[k] !== undefined);
  const byLine = (["startLine", "lineCount"] as const).find((k) => args[k] !== undefined);
  const other = [...lines, ...window][0];
  if (byLine !== undefined && other !== undefined) {
    throw new Error(`Parameters ${byLine} and ${other} cannot be combined: use startLine/lineCount for lines, or ${other} alone.`);
  }
  if (lines.length === 2) throw new Error("Parameters head and tail cannot be combined: pass only one of them.");
  if (lines.length === 1 && window.length > 0) {
    throw new Error(`Parameters ${lines[0]} and ${window[0]} cannot be combined: use ${lines[0]} for lines, or offset/limit for characters.`);
  }
}

async function readText(args: ReadTextArgs, ctx: ToolContext): Promise<ToolOutput> {
  checkReadArgs(args);
  const { handle, path: realPath } = await ctx.sandbox.openFile(args.path);
  try {
    const opts = readOptions(ctx);
    const { head, tail } = args;
    if (head !== undefined) return await streamed(ctx, (sink) => headInto(handle, head, sink, opts));
    if (tail !== undefined) return await streamed(ctx, (sink) => tailInto(handle, tail, sink, opts));
    if (args.startLine !== undefined || args.lineCount !== undefined) {
      return await readLineWindow(handle, realPath, args.startLine ?? 1, args.lineCount, ctx.bounds.windowLimit(), ctx.cache, opts);
    }
    const limit = ctx.bounds.windowLimit(args.limit);
    return { window: await readWindow(handle, realPath, args.offset ?? 0, limit, ctx.cache, opts) };
  } finally {
    await handle.close();
  }
}

/** read_text_file: a window of a file's text, or its first/last lines. */
export const readTextFile = defineTool({
  name: "read_text_file",
  title: "Read Text File",
  description: ({ maxResultChars }) =>
    `Read a text file (UTF-8), at most ${formatCount(maxResultChars)} characters per call; a longer one ends with a ` +
    "notice giving the next offset. Choose characters (offset, limit) or lines (startLine, lineCount; head; tail), " +
    "one way per call. Several files: read_multiple_files; media: read_media_file. Fails on a directory or FIFO.",
  input: readTextInput,
  annotations: READ_ONLY,
  advice: HEAD_TAIL_ADVICE,
  handler: readText,
});

/** read_file: the deprecated alias of read_text_file. */
export const readFile = defineTool({
  name: "read_file",
  title: "Read File (deprecated)",
  description: () => "Deprecated: use read_text_file (same parameters).",
  input: readTextInput,
  listedInput: ["path"],
  annotations: READ_ONLY,
  advice: HEAD_TAIL_ADVICE,
  handler: readText,
});

/** read_multiple_files: several files in upstream's join format, one combined cap. */
export const readMultipleFiles = defineTool({
  name: "read_multiple_files",
  title: "Read Multiple Files",
  description: () =>
    "Read several text files in order: each as '<path>:' then its text, joined by lines '---'; a failed one as " +
    "'<path>: Error - <reason>'. One cap covers all. One file: read_text_file.",
  input: {
    paths: z.array(z.string()).min(1).describe("The files, in the order wanted."),
  },
  annotations: READ_ONLY,
  advice: "request fewer files, or read the others with read_text_file",
  handler: ({ paths }, ctx) => streamed(ctx, (sink) => readAllInto(paths, sink, ctx)),
});

// The two lines of read_multiple_files that name a file: its header, and its error line.
const partHeader = (requested: Shown): string => `${requested}:\n`;
const partError = (requested: Shown, message: Shown): string => `${requested}: Error - ${message}`;

/** read_multiple_files' text, file after file, in upstream's join format; each file's part marked for the notice. */
async function readAllInto(paths: readonly string[], sink: TextSink, ctx: ToolContext): Promise<void> {
  const opts = readOptions(ctx);
  for (const [i, requested] of paths.entries()) {
    if (i > 0) sink.append("\n---\n");
    let started = false;
    try {
      const { handle, path: realPath } = await ctx.sandbox.openFile(requested);
      try {
        sink.append(partHeader(escapeControls(requested)));
        started = true;
        await streamInto(handle, realPath, ctx.cache, sink, opts);
        sink.append("\n");
      } finally {
        await handle.close();
      }
    } catch (error) {
      ctx.signal.throwIfAborted();
      // A failure after some content was written starts its error line on a line of its own.
      const message = error instanceof Error ? error.message : String(error);
      sink.append(`${started ? "\n" : ""}${partError(escapeControls(requested), escapeControls(message))}`);
    }
    sink.endPart();
  }
}

/** read_media_file: an image, audio or resource block, refused over the media limit. */
export const readMediaFile = defineTool({
  name: "read_media_file",
  title: "Read Media File",
  description: ({ maxMediaBytes }) =>
    "Return a file as base64: image (.png .jpg .jpeg .gif .webp .bmp .svg), audio (.mp3 .wav .ogg .flac), else a " +
    `resource. Over ${formatCount(maxMediaBytes)} bytes (${formatCount(4 * Math.ceil(maxMediaBytes / 3))} base64 ` +
    "characters): refused before reading. Text: read_text_file.",
  input: { path: z.string().describe(PATH_DOC) },
  annotations: READ_ONLY,
  advice: "read a smaller file",
  async handler({ path }, ctx) {
    const { handle, path: realPath } = await ctx.sandbox.openFile(path);
    try {
      return { content: [await readMedia(handle, realPath, ctx.limits.maxMediaBytes, ctx.signal)] };
    } finally {
      await handle.close();
    }
  },
});
