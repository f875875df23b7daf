import type { FileHandle } from "node:fs/promises";
import { z } from "zod";
import { formatCount, type ToolOutput } from "../kernel/bounded.js";
import { escapeControls } from "../kernel/escape.js";
import { encodingNote, headInto, mayBeUndecoded, readLineWindow, readWindow, tailInto } from "../reading/index.js";
import { READ_ONLY, defineTool, readOptions, streamed, type ToolContext } from "./context.js";
import { PATH_DOC } from "./shared.js";

// Only head/tail results are cut with this advice: windows carry their own pageable notice.
export const HEAD_TAIL_ADVICE = "ask for fewer lines, or use startLine and lineCount";

const count = z.number().int().min(0);

export const readTextInput = {
  path: z.string().describe(PATH_DOC),
  offset: count.optional().describe("Characters to skip; default 0."),
  limit: z.number().int().min(1).optional().describe("Characters to return; default: the per-call maximum."),
  head: count.optional().describe("First N lines."),
  tail: count.optional().describe("Last N lines."),
  startLine: z.number().int().min(1).optional().describe("First line, 1-based; default 1."),
  lineCount: z.number().int().min(1).optional().describe("Lines to return; default: up to the per-call maximum."),
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

/** What tail=1 answers for a file that ends with a line break, instead of nothing. */
const EMPTY_LAST_LINE =
  "Note: tail=1 is the empty line after the file's final line break (lines are counted as upstream counts them); tail=2 gives its last line of text.";

export async function readText(args: ReadTextArgs, ctx: ToolContext): Promise<ToolOutput> {
  checkReadArgs(args);
  const { handle, path: realPath } = await ctx.sandbox.openFile(args.path);
  try {
    const output = await readOpened(handle, realPath, args, ctx);
    // A text showing U+FFFD or NUL may show a file that is not UTF-8: a note says which, in a block of its own.
    if (!mayBeUndecoded((ch) => holds(output, ctx, ch))) return output;
    const note = await encodingNote(handle, escapeControls(realPath));
    return note === undefined ? output : { ...output, note };
  } finally {
    await handle.close();
  }
}

async function readOpened(handle: FileHandle, realPath: string, args: ReadTextArgs, ctx: ToolContext): Promise<ToolOutput> {
  const opts = readOptions(ctx);
  const { head, tail } = args;
  if (head !== undefined) return await streamed(ctx, (sink) => headInto(handle, head, sink, opts));
  if (tail !== undefined) {
    return await streamed(ctx, async (sink) => {
      await tailInto(handle, tail, sink, opts);
      // Upstream counts the empty line after a final line break as the file's last: tail 1 of such a file is empty.
      if (sink.total === 0 && tail > 0 && (await handle.stat()).size > 0) sink.append(EMPTY_LAST_LINE);
    });
  }
  if (args.startLine !== undefined || args.lineCount !== undefined) {
    return await readLineWindow(handle, realPath, args.startLine ?? 1, args.lineCount, ctx.bounds.windowLimit(), ctx.runtime.cache, opts);
  }
  const limit = ctx.bounds.windowLimit(args.limit);
  return { window: await readWindow(handle, realPath, args.offset ?? 0, limit, ctx.runtime.cache, opts) };
}

/** Whether the text a read answers holds `ch`. */
function holds(output: ToolOutput, ctx: ToolContext, ch: string): boolean {
  if ("window" in output) return output.window.text.includes(ch);
  if ("streamed" in output) return ctx.bounds.sink.holds(ch);
  return output.content.some((block) => block.type === "text" && block.text.includes(ch));
}

/** read_text_file: a window of a file's text, or its first/last lines. */
export const readTextFile = defineTool({
  name: "read_text_file",
  title: "Read Text File",
  description: ({ maxResultChars }) =>
    `Read a UTF-8 text file, at most ${formatCount(maxResultChars)} characters a call; if more follows, a notice ` +
    "gives the next offset. Pick one: offset/limit, startLine/lineCount, head, tail. Many files: " +
    "read_multiple_files; media: read_media_file. Fails on a directory or FIFO.",
  input: readTextInput,
  annotations: READ_ONLY,
  advice: HEAD_TAIL_ADVICE,
  handler: readText,
});
