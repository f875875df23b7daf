import { READ_ONLY, defineTool } from "./context.js";
import { HEAD_TAIL_ADVICE, readText, readTextInput } from "./read_text_file.js";
import { PATH_DOC } from "./shared.js";

// read_text_file's parameters, each described briefly: read_text_file's own descriptions say more.
const input = {
  path: readTextInput.path.describe(PATH_DOC),
  offset: readTextInput.offset.describe("Character to start at."),
  limit: readTextInput.limit.describe("Characters to read."),
  head: readTextInput.head.describe("Only the first N lines."),
  tail: readTextInput.tail.describe("Only the last N lines."),
  startLine: readTextInput.startLine.describe("Line to start at (1-based)."),
  lineCount: readTextInput.lineCount.describe("Lines to read."),
};

/** read_file: the deprecated alias of read_text_file. */
export const readFile = defineTool({
  name: "read_file",
  title: "Read File (deprecated)",
  description: () => "Deprecated: use read_text_file (same parameters, same result).",
  input,
  annotations: READ_ONLY,
  advice: HEAD_TAIL_ADVICE,
  handler: readText,
});
