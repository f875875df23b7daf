import { z } from "zod";
import { looksBinary } from "../kernel/binary.js";
import { fileInfo, sampleEnds } from "../reading/index.js";
import { READ_ONLY, defineTool } from "./context.js";

/** get_file_info: metadata lines for one path. */
export const getFileInfo = defineTool({
  name: "get_file_info",
  title: "Get File Info",
  description: () =>
    "Return a path's metadata as 'key: value' lines: size (bytes), times, isDirectory, isFile, permissions " +
    "(octal); for a file also lineEndings (LF, CRLF, mixed, none), endsWithNewline, text (false if binary: a " +
    "NUL byte in the first 8 KiB, or a UTF-16 mark).",
  input: { path: z.string().describe("File or directory.") },
  annotations: READ_ONLY,
  advice: "shorten the path",
  async handler({ path }, ctx) {
    // One resolution; a file the server may stat but not read comes without a handle and keeps upstream's fields only.
    const { stats, handle } = await ctx.sandbox.inspect(path);
    const info: Record<string, unknown> = { ...fileInfo(stats) };
    if (handle !== undefined) {
      try {
        const sample = await sampleEnds(handle, (await handle.stat()).size);
        Object.assign(info, { lineEndings: sample.lineEndings, endsWithNewline: sample.endsWithNewline, text: !looksBinary(sample.head) });
      } finally {
        await handle.close();
      }
    }
    const lines = Object.entries(info).map(([key, value]) => `${key}: ${String(value)}`);
    return { content: [{ type: "text", text: lines.join("\n") }] };
  },
});
