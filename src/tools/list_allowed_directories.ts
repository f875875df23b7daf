import { escapeControls, type Shown } from "../kernel/escape.js";
import { NO_DIRECTORIES } from "../sandbox/index.js";
import { READ_ONLY, defineTool } from "./context.js";

/** list_allowed_directories' text: the heading, then one directory per line. */
const allowedList = (dirs: readonly Shown[]): string => `Allowed directories:\n${dirs.length === 0 ? `(none: ${NO_DIRECTORIES})` : dirs.join("\n")}`;

/** list_allowed_directories: where the server may go. */
export const listAllowedDirectories = defineTool({
  name: "list_allowed_directories",
  title: "List Allowed Directories",
  description: () => "List the directories this server may access.",
  input: {},
  annotations: READ_ONLY,
  advice: "use the directories shown",
  async handler(_args, ctx) {
    return { content: [{ type: "text", text: allowedList(ctx.sandbox.allowedDirs.map(escapeControls)) }] };
  },
});
