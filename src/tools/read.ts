/** The reading tools: read_text_file, read_file, read_multiple_files, read_media_file. */
import { z } from "zod";
import { formatCount, type TextSink, type ToolOutput } from "../bounded.js";
import { escapeControls } from "../escape.js";
import { headInto, readLineWindow, readMedia, readWindow, streamInto, tailInto } from "../reading/index.js";
import { defineTool, READ_ONLY, readOptions, streamed, type ToolContext } from "./context.js";

/** The schema description shared by every file-path parameter. */
export const PATH_DOC = "File path: absolute, or relative to an allowed directory; ~ expands to the home directory.";
// Only head/tail results are cut with this advice: windows carry their own pageable notice.
const HEAD_TAIL_ADVICE = "ask for fewer lines, or use offset and limit";

const count = z.number().int().min(0);

const readTextInput = {
  path: z.string().describe(PATH_DOC),
  offset: count
    .optional()
    .describe(
      "Start character (UTF-16 code units of the decoded text), integer ≥ 0. Default 0. To continue, pass the notice's offset.",
    ),
  limit: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe(
      "Most characters to return, integer ≥ 1. Default and maximum: the tool's per-call cap; larger values are lowered.",
    ),
  head: count.optional().describe("Only the first N lines (integer ≥ 0). Not combinable with tail, offset or limit."),
  tail: count.optional().describe("Only the last N lines (integer ≥ 0). Not combinable with head, offset or limit."),
  startLine: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe("Start at line N (≥ 1); past the end: empty. Not combinable with head, tail, offset or limit."),
  lineCount: z.number().int().min(1).optional().describe("With startLine: at most N lines (≥ 1)."),
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

function readTextDescription(extra: string) {
  return ({ maxResultChars }: { maxResultChars: number }) =>
    `${extra}Read a text file (decoded as UTF-8), at most ${formatCount(maxResultChars)} characters per call. A ` +
    "longer file is paged: the cut text ends with a notice naming the offset for the next call. Past the end: empty " +
    "text. startLine/lineCount read whole lines (numbered as search_file_contents prints them); head/tail the " +
    "first/last lines (not pageable). Fails if the path is outside the allowed directories, missing, or not a regular " +
    "file. Use read_multiple_files for several small files, read_media_file for images and audio (binary bytes come " +
    "out here as U+FFFD).";
}

/** Refuses combinations SPEC §3.2 forbids, naming both parameters. */
function checkReadArgs(args: ReadTextArgs): void {
  const lines = (["head", "tail"] as const).filter((k) => args[k] !== undefined);
  const window = (["offset", "limit"] as const).filter((k) => args[k] !== undefined);
  const byLine = (["startLine", "lineCount"] as const).find((k) => args[k] !== undefined);
  const other = [...lines, ...window][0];
  if (byLine !== undefined && other !== undefined) {
    throw new Error(
      `Parameters ${byLine} and ${other} cannot be combined: use startLine/lineCount for lines, or ${other} alone.`,
    );
  }
  if (lines.length === 2) throw new Error("Parameters head and tail cannot be combined: pass only one of them.");
  if (lines.length === 1 && window.length > 0) {
    throw new Error(
      `Parameters ${lines[0]} and ${window[0]} cannot be combined: use ${lines[0]} for lines, or offset/limit for characters.`,
    );
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
  description: readTextDescription(""),
  input: readTextInput,
  annotations: READ_ONLY,
  advice: HEAD_TAIL_ADVICE,
  handler: readText,
});

/** read_file: the deprecated alias of read_text_file. */
export const readFile = defineTool({
  name: "read_file",
  title: "Read File (deprecated)",
  description: readTextDescription("Deprecated: use read_text_file, which this aliases. "),
  input: readTextInput,
  annotations: READ_ONLY,
  advice: HEAD_TAIL_ADVICE,
  handler: readText,
});

/** read_multiple_files: several files in upstream's join format, one combined cap. */
export const readMultipleFiles = defineTool({
  name: "read_multiple_files",
  title: "Read Multiple Files",
  description: ({ maxResultChars }) =>
    "Read several text files (UTF-8) in one call, one after another, and return them joined: each as '<path>:' then " +
    "its text, separated by '---'. A file that fails (missing, outside the allowed directories, not a regular file) " +
    `appears as '<path>: Error - <reason>' and does not stop the others. The combined result is capped at ${formatCount(maxResultChars)} characters; a cut result's notice ` +
    "says how many files were included in full. Read the rest, or a file too big to fit, with read_text_file (it pages " +
    "with offset); use read_media_file for images and audio.",
  input: {
    paths: z
      .array(z.string())
      .min(1)
      .describe("Files to read, in this order; at least one. Each absolute, or relative to an allowed directory."),
  },
  annotations: READ_ONLY,
  advice: "request fewer files, or read the others with read_text_file",
  handler: ({ paths }, ctx) => streamed(ctx, (sink) => readAllInto(paths, sink, ctx)),
});

/** read_multiple_files' text, file after file, in upstream's join format; each file's part marked for the notice. */
async function readAllInto(paths: readonly string[], sink: TextSink, ctx: ToolContext): Promise<void> {
  const opts = readOptions(ctx);
  for (const [i, requested] of paths.entries()) {
    if (i > 0) sink.append("\n---\n");
    let started = false;
    try {
      const { handle, path: realPath } = await ctx.sandbox.openFile(requested);
      try {
        sink.append(`${escapeControls(requested)}:\n`);
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
      sink.append(`${started ? "\n" : ""}${escapeControls(`${requested}: Error - ${message}`)}`);
    }
    sink.endPart();
  }
}

/** read_media_file: an image, audio or resource block, refused over the media limit. */
export const readMediaFile = defineTool({
  name: "read_media_file",
  title: "Read Media File",
  description: ({ maxMediaBytes }) =>
    "Read an image or audio file and return it base64-encoded with its MIME type, chosen by extension: image content " +
    "(png, jpg, gif, webp, bmp, svg), audio content (mp3, wav, ogg, flac), anything else an embedded resource. " +
    `Files over ${formatCount(maxMediaBytes)} bytes are refused before any byte is read, with an error giving the ` +
    "file's size and the limit (get_file_info shows the size beforehand). Fails outside the allowed directories and " +
    "on missing or non-regular files. For text files use read_text_file.",
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
