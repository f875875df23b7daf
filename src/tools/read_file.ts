import { READ_ONLY, defineTool } from "./context.js";
import { HEAD_TAIL_ADVICE, readText, readTextInput } from "./read_text_file.js";
import { PATH_DOC } from "./shared.js";

// read_text_file's parameters, each described briefly: read_text_file's own descriptions say more.
const input = {
  path: readTextInput.path.describe(PATH_DOC),
  offset: readTextInput.offset.describe("Characters to skip; default 0."),
  limit: readTextInput.limit.describe("Characters to return."),
  head: readTextInput.head.describe("First N lines."),
  tail: readTextInput.tail.describe("Last N lines."),
  startLine: readTextInput.startLine.describe("First line, 1-based; default 1."),
  lineCount: readTextInput.lineCount.describe("Lines to return."),
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
