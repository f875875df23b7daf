import { z } from "zod";
import { formatCount } from "../kernel/bounded.js";
import { readMedia } from "../reading/index.js";
import { READ_ONLY, defineTool } from "./context.js";
import { PATH_DOC } from "./shared.js";

/** read_media_file: an image, audio or resource block, refused over the media limit. */
export const readMediaFile = defineTool({
  name: "read_media_file",
  title: "Read Media File",
  description: ({ maxMediaBytes }) =>
    "Return an image, audio or other file as a base64 block, typed by extension. Refused over " +
    `${formatCount(maxMediaBytes)} bytes (${formatCount(4 * Math.ceil(maxMediaBytes / 3))} base64 characters). Text, SVG included: read_text_file.`,
  input: { path: z.string().describe(PATH_DOC) },
  annotations: READ_ONLY,
  advice: "read a smaller file",
  async handler({ path }, ctx) {
    // In one of the process's media slots, from the open on: only so many files and their base64 texts are built
    // in memory at once, and a call waiting for its turn holds no descriptor.
    const block = await ctx.runtime.media.run(ctx.signal, async () => {
      const { handle, path: realPath } = await ctx.sandbox.openFile(path);
      try {
        return await readMedia(handle, realPath, ctx.limits.maxMediaBytes, ctx.signal);
      } finally {
        await handle.close();
      }
    });
    return { content: [block] };
  },
});
