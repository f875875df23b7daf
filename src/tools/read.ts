/** The reading tools: read_text_file, read_file, read_multiple_files, read_media_file. */
import { z } from "zod";
import { formatCount, TextSink, type ToolOutput } from "../bounded.js";
import { validatePathIn } from "../lib.js";
import { readMedia } from "../media.js";
import { headInto, readWindow, streamInto, tailInto } from "../paged-read.js";
import { openRegularFile } from "../safe-fs.js";
import { defineTool, READ_ONLY, readOptions, type ToolContext } from "./context.js";

export const PATH_DOC = "File path: absolute, or relative to an allowed directory; ~ expands to the home directory.";
const HEAD_TAIL_ADVICE = "ask for fewer lines, or use offset and limit";

const count = z.number().int().min(0);

const readTextInput = {
  path: z.string().describe(PATH_DOC),
  offset: count
    .optional()
    .describe("Start at this character (UTF-16 code unit) of the decoded text. Default 0. Copy it from the previous result's notice."),
  limit: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe("Most characters to return. Default and maximum: the result cap; larger values are lowered to it."),
  head: count.optional().describe("Return only the first N lines. Not with tail, offset or limit."),
  tail: count.optional().describe("Return only the last N lines. Not with head, offset or limit."),
};

type ReadTextArgs = { path: string; offset?: number; limit?: number; head?: number; tail?: number };

function readTextDescription(extra: string) {
  return ({ maxResultChars }: { maxResultChars: number }) =>
    `${extra}Read a UTF-8 text file and return its text. Returns at most ${formatCount(maxResultChars)} characters per call: ` +
    "when more follows, the text ends with a notice giving the offset for the next call, so follow the notices to read a " +
    "big file in order. head/tail return the first/last N lines instead (capped, not pageable). " +
    "Fails if the path is outside the allowed directories, missing, or not a regular file. " +
    "Use read_multiple_files for several files, read_media_file for images and audio.";
}

/** Refuses combinations SPEC §3.2 forbids, naming both parameters. */
function checkReadArgs(args: ReadTextArgs): void {
  const lines = (["head", "tail"] as const).filter((k) => args[k] !== undefined);
  const window = (["offset", "limit"] as const).filter((k) => args[k] !== undefined);
  if (lines.length === 2) throw new Error("Parameters head and tail cannot be combined: pass only one of them.");
  if (lines.length === 1 && window.length > 0) {
    throw new Error(
      `Parameters ${lines[0]} and ${window[0]} cannot be combined: use ${lines[0]} for lines, or offset/limit for characters.`,
    );
  }
}

async function readText(args: ReadTextArgs, ctx: ToolContext): Promise<ToolOutput> {
  checkReadArgs(args);
  const realPath = await validatePathIn(args.path, ctx.allowedDirs);
  const handle = await openRegularFile(realPath, ctx.allowedDirs);
  try {
    const opts = readOptions(ctx);
    if (args.head !== undefined || args.tail !== undefined) {
      const sink = new TextSink(ctx.limits.maxResultChars);
      if (args.head !== undefined) await headInto(handle, args.head, sink, opts);
      else await tailInto(handle, args.tail as number, sink, opts);
      return { sink, advice: HEAD_TAIL_ADVICE };
    }
    const limit = Math.min(args.limit ?? ctx.limits.maxResultChars, ctx.limits.maxResultChars);
    return { window: await readWindow(handle, realPath, args.offset ?? 0, limit, ctx.cache, opts) };
  } finally {
    await handle.close();
  }
}

export const readTextFile = defineTool({
  name: "read_text_file",
  title: "Read Text File",
  description: readTextDescription(""),
  input: readTextInput,
  annotations: READ_ONLY,
  advice: HEAD_TAIL_ADVICE,
  handler: readText,
});

export const readFile = defineTool({
  name: "read_file",
  title: "Read File (deprecated)",
  description: readTextDescription("Deprecated alias of read_text_file, same parameters and behaviour. "),
  input: readTextInput,
  annotations: READ_ONLY,
  advice: HEAD_TAIL_ADVICE,
  handler: readText,
});

export const readMultipleFiles = defineTool({
  name: "read_multiple_files",
  title: "Read Multiple Files",
  description: ({ maxResultChars }) =>
    "Read several UTF-8 text files in one call. Returns each as '<path>:' followed by its text, separated by '---'; " +
    "a file that cannot be read shows '<path>: Error - <reason>' and does not stop the others. " +
    `The combined result is capped at ${formatCount(maxResultChars)} characters; the notice says how many files were ` +
    "included in full. Read the rest, or any big file, with read_text_file and its offset.",
  input: {
    paths: z
      .array(z.string())
      .min(1)
      .describe("Files to read, in order (at least one). Each absolute, or relative to an allowed directory."),
  },
  annotations: READ_ONLY,
  advice: "request fewer files, or read the others with read_text_file",
  async handler({ paths }, ctx) {
    const sink = new TextSink(ctx.limits.maxResultChars);
    const opts = readOptions(ctx);
    for (const [i, requested] of paths.entries()) {
      if (i > 0) sink.append("\n---\n");
      try {
        const realPath = await validatePathIn(requested, ctx.allowedDirs);
        const handle = await openRegularFile(realPath, ctx.allowedDirs);
        try {
          sink.append(`${requested}:\n`);
          await streamInto(handle, realPath, ctx.cache, sink, opts);
          sink.append("\n");
        } finally {
          await handle.close();
        }
      } catch (error) {
        ctx.signal.throwIfAborted();
        sink.append(`${requested}: Error - ${error instanceof Error ? error.message : String(error)}`);
      }
      sink.endPart();
    }
    return { sink };
  },
});

export const readMediaFile = defineTool({
  name: "read_media_file",
  title: "Read Media File",
  description: ({ maxMediaBytes }) =>
    "Read an image or audio file and return it base64-encoded with its MIME type (image or audio content; other " +
    `types as an embedded resource). Files over ${formatCount(maxMediaBytes)} bytes are refused before reading, ` +
    "with their size in the error. Fails outside the allowed directories or on non-regular files. " +
    "For text use read_text_file.",
  input: { path: z.string().describe(PATH_DOC) },
  annotations: READ_ONLY,
  advice: "read a smaller file",
  async handler({ path }, ctx) {
    const realPath = await validatePathIn(path, ctx.allowedDirs);
    return { content: [await readMedia(realPath, ctx.allowedDirs, ctx.limits.maxMediaBytes, ctx.signal)] };
  },
});
