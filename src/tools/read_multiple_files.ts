import { z } from "zod";
import { formatCount, type TextSink } from "../kernel/bounded.js";
import { escapeControls, type Shown } from "../kernel/escape.js";
import { encodingNote, mayBeUndecoded, streamInto } from "../reading/index.js";
import { errnoCode } from "../sandbox/index.js";
import { READ_ONLY, defineTool, readOptions, streamed, type ToolContext } from "./context.js";
import { NEAR_NAME_LOOKUPS, nearNameNote } from "./near-name.js";
import { pathNote } from "./shared.js";

/** read_multiple_files: several files in upstream's join format, one combined cap. */
export const readMultipleFiles = defineTool({
  name: "read_multiple_files",
  title: "Read Multiple Files",
  description: ({ maxResultChars }) =>
    "Read text files in order: each as '<path>:' then its text, joined by '---' lines; a failed one as '<path>: " +
    `Error - <reason>'. At most ${formatCount(maxResultChars)} characters in all; reread a file cut there with read_text_file.`,
  input: {
    paths: z.array(z.string()).min(1).describe("File paths."),
  },
  annotations: READ_ONLY,
  advice: "request fewer files, or read the others with read_text_file",
  async handler({ paths }, ctx) {
    const notes: string[] = [];
    const output = await streamed(ctx, (sink) => readAllInto(paths, sink, ctx, notes));
    return notes.length === 0 ? output : { ...output, note: notes.join("\n") };
  },
});

/** Files a call looks at for the note on a file that is not UTF-8, at most (each look reads up to 16 MiB of it). */
export const ENCODING_NOTES = 8;

// The two lines of read_multiple_files that name a file: its header, and its error line.
const partHeader = (requested: Shown): string => `${requested}:\n`;
const partError = (requested: Shown, message: Shown): string => `${requested}: Error - ${message}`;

/**
 * read_multiple_files' text, file after file, in upstream's join format; each file's part marked for the notice. A file
 * whose text shows it is not UTF-8 gets a note in `notes` (for a block after the text, which stays as read).
 */
async function readAllInto(paths: readonly string[], sink: TextSink, ctx: ToolContext, notes: string[]): Promise<void> {
  const opts = readOptions(ctx);
  let lookups = 0;
  let looks = 0;
  for (const [i, requested] of paths.entries()) {
    if (i > 0) sink.append("\n---\n");
    let started = false;
    try {
      const { handle, path: realPath } = await ctx.sandbox.openFile(requested);
      try {
        sink.append(partHeader(escapeControls(requested)));
        started = true;
        const from = sink.mark();
        await streamInto(handle, realPath, ctx.runtime.cache, sink, opts);
        if (mayBeUndecoded((ch) => sink.holds(ch, from)) && looks++ < ENCODING_NOTES) {
          const note = await encodingNote(handle, escapeControls(realPath));
          if (note !== undefined) notes.push(note);
        }
        sink.append("\n");
      } finally {
        await handle.close();
      }
    } catch (error) {
      ctx.signal.throwIfAborted();
      // A failure after some content was written starts its error line on a line of its own.
      const message = error instanceof Error ? error.message : String(error);
      // Unlike a failed call's, a file's failure is a line of the result: its path's note follows it (whitespace,
      // a glob, a line number), as pathParameterNote's follows a failed call.
      const missing = !started && errnoCode(error) === "ENOENT";
      let note = started ? "" : pathNote(`paths[${i}]`, requested, missing);
      if (missing && note === "" && lookups++ < NEAR_NAME_LOOKUPS) note = await nearNameNote(ctx.sandbox, ctx.walks, `paths[${i}]`, requested);
      sink.append(`${started ? "\n" : ""}${partError(escapeControls(requested), escapeControls(message))}${note}`);
    }
    sink.endPart();
  }
}
