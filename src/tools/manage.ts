/** The file operations beside writing (SPEC §15): append_file, copy_file, delete_file. */
import { z } from "zod";
import { endsWithNotice, formatCount } from "../kernel/bounded.js";
import { escapeControls, type Shown } from "../kernel/escape.js";
import type { Copied, Deleted, Ending } from "../sandbox/index.js";
import { defineTool } from "./context.js";
import { PATH_DOC } from "./read.js";
import { writingBackCappedRead } from "./write.js";

const text = (value: string) => ({ content: [{ type: "text" as const, text: value }] });

// Progress every this many entries: a notification per entry of a 100,000-entry tree would cost more than the work.
const PROGRESS_EVERY = 1000;

const count = (n: number, one: string, many: string): string => `${formatCount(n)} ${n === 1 ? one : many}`;

const BEFORE: Record<Ending, string> = {
  new: "new file",
  empty: "it was empty",
  lf: "it ended with a line break",
  crlf: "it ended with a CRLF line break",
  none: "it did not end with a line break; the text was added directly after its last character",
};

// The results that name a path: each takes it as shown (escaped), so none can be built from a raw one.
const appended = (path: Shown, bytes: number, ending: Ending) =>
  text(`Successfully appended ${count(bytes, "byte", "bytes")} to ${path} (${BEFORE[ending]})`);

const deleted = (path: Shown, what: Deleted) =>
  text(`Successfully deleted ${path}${what.kind === "directory" && what.entries > 0 ? ` (${count(what.entries, "entry", "entries")})` : ""}`);

function copied(source: Shown, destination: Shown, what: Copied): ReturnType<typeof text> {
  const parts = [
    what.directories > 0 ? count(what.directories, "directory", "directories") : "",
    what.files > 0 || what.directories > 0 ? count(what.files, "file", "files") : "",
    what.links > 0 && what.directories > 0 ? count(what.links, "link", "links") : "",
  ].filter((part) => part !== "");
  const bytes = what.directories > 0 ? `; ${count(what.bytes, "byte", "bytes")}` : "";
  const special = what.special > 0 ? `; ${count(what.special, "special file", "special files")} (FIFO, socket, device) not copied` : "";
  const detail = what.directories > 0 ? ` (${parts.join(", ")}${bytes}${special})` : "";
  return text(`Successfully copied ${source} to ${destination}${detail}`);
}

/** append_file: text added at the end of a file as one indivisible change. */
export const appendFile = defineTool({
  name: "append_file",
  title: "Append to File",
  description: () =>
    "Add UTF-8 text at the end of a file (created if missing); returns the bytes added and whether the file ended " +
    "with a line break. All or nothing, even if killed. Whole file: write_file; inside: edit_file. Fails like write_file.",
  input: {
    path: z.string().describe(PATH_DOC),
    content: z.string().describe("Text to add, as is."),
  },
  annotations: { readOnlyHint: false, idempotentHint: false, destructiveHint: false, openWorldHint: false },
  advice: "shorten the path",
  async handler({ path, content }, ctx) {
    if (endsWithNotice(content)) throw writingBackCappedRead(escapeControls(path));
    const ending = await ctx.sandbox.appendFile(path, content);
    return appended(escapeControls(path), Buffer.byteLength(content, "utf8"), ending);
  },
});

/** copy_file: a file, a link or (recursive) a tree copied, never replacing anything. */
export const copyFile = defineTool({
  name: "copy_file",
  title: "Copy File",
  description: () =>
    "Copy a file byte for byte (mode kept), a link as a link, or with recursive a tree (counted in the " +
    "result). Renaming: move_file. Never replaces: fails with 'Destination already exists'; a failed copy leaves nothing.",
  input: {
    source: z.string().describe("What to copy."),
    destination: z.string().describe("Its new path, name included."),
    recursive: z.boolean().default(false).describe("true: copy a directory tree."),
  },
  annotations: { readOnlyHint: false, idempotentHint: true, destructiveHint: false, openWorldHint: false },
  advice: "shorten the paths",
  async handler({ source, destination, recursive }, ctx) {
    const what = await ctx.sandbox.copy(source, destination, {
      recursive,
      signal: ctx.signal,
      onProgress: (n) => n % PROGRESS_EVERY === 0 && ctx.progress(n),
    });
    return copied(escapeControls(source), escapeControls(destination), what);
  },
});

/** delete_file: a file, a link, an empty directory or (recursive) a tree removed. */
export const deleteFile = defineTool({
  name: "delete_file",
  title: "Delete File",
  description: () =>
    "Delete a file, a link (not its target) or an empty directory; with recursive, a whole tree, links not " +
    "followed (counted in the result). Fails on a non-empty directory without recursive, or an allowed directory.",
  input: {
    path: z.string().describe("What to delete."),
    recursive: z.boolean().default(false).describe("true: also a non-empty directory."),
  },
  annotations: { readOnlyHint: false, idempotentHint: true, destructiveHint: true, openWorldHint: false },
  advice: "shorten the path",
  async handler({ path, recursive }, ctx) {
    const what = await ctx.sandbox.delete(path, { recursive, signal: ctx.signal, onProgress: (n) => n % PROGRESS_EVERY === 0 && ctx.progress(n) });
    return deleted(escapeControls(path), what);
  },
});
