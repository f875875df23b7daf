import { READ_ONLY, defineTool } from "./context.js";
import { HEAD_TAIL_ADVICE, readText, readTextInput } from "./read_text_file.js";

/** read_file: the deprecated alias of read_text_file. */
export const readFile = defineTool({
  name: "read_file",
  title: "Read File (deprecated)",
  description: () => "Deprecated: use read_text_file (same parameters).",
  input: readTextInput,
  listedInput: ["path"],
  annotations: READ_ONLY,
  advice: HEAD_TAIL_ADVICE,
  handler: readText,
});
