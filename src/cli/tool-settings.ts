/**
 * Which tools a user lets the server offer (SPEC §19): --tools and --disable-tools,
 * their help text, and one function that turns them into the list to register,
 * refusing an unknown name at startup. Pure: read-only mode still filters later.
 */
import { toolNames } from "../server/catalog.js";
import { PACKAGE_NAME, UsageError, type Given, type OptionSpec, type ReadOptions } from "./options.js";

const LIST = "a comma-separated list of tool names";
const ONLY: OptionSpec = { flag: "--tools", env: "BOUNDED_FS_TOOLS", kind: "value", expects: LIST };
const DISABLED: OptionSpec = { flag: "--disable-tools", env: "BOUNDED_FS_DISABLE_TOOLS", kind: "value", expects: LIST };

/** The tool-selection options, in --help order. */
export const TOOL_OPTIONS: readonly OptionSpec[] = [ONLY, DISABLED];

/** Their --help lines. */
export const TOOLS_USAGE = `  --tools LIST           offer only these tools (comma-separated names; env
                         BOUNDED_FS_TOOLS); --read-only still leaves out the
                         tools that change files
  --disable-tools LIST   offer every tool but these (env BOUNDED_FS_DISABLE_TOOLS);
                         with --tools, taken away from its list
`;

/** The tools chosen, and what to tell the user about the choice. */
export interface ToolSelection {
  /** The names to register, in tools/list order; absent when neither option is set (every tool). */
  readonly tools?: readonly string[];
  /** A line for stderr when read-only mode leaves out tools that --tools names. */
  readonly note?: string;
}

/**
 * The names in `given`, each checked against the tools the server has.
 * @throws UsageError naming the source, the unknown name and every valid one
 */
function namesIn(given: Given): Set<string> {
  const known = toolNames();
  const names = given.value
    .split(",")
    .map((name) => name.trim())
    .filter((name) => name !== "");
  for (const name of names) {
    if (!known.includes(name)) {
      throw new UsageError(`${PACKAGE_NAME}: unknown tool ${JSON.stringify(name)} in ${given.source} (valid names: ${known.join(", ")})`);
    }
  }
  return new Set(names);
}

/**
 * The selection that `read` asks for: --tools (every tool when absent) minus --disable-tools,
 * each flag winning over its variable.
 * @throws UsageError on an unknown name, or a selection that leaves no tool to offer
 */
export function toolSelection(read: ReadOptions, readOnly: boolean): ToolSelection {
  const only = read.get(ONLY);
  const disabled = read.get(DISABLED);
  if (only === undefined && disabled === undefined) return {};
  const listed = only === undefined ? undefined : namesIn(only);
  const removed = disabled === undefined ? new Set<string>() : namesIn(disabled);
  const tools = toolNames().filter((name) => (listed === undefined || listed.has(name)) && !removed.has(name));
  const writing = new Set(toolNames(true));
  const dropped = readOnly && listed !== undefined ? tools.filter((name) => writing.has(name)) : [];
  const sources = [only?.source, disabled?.source].filter((source) => source !== undefined).join(" and ");
  if (tools.every((name) => readOnly && writing.has(name))) {
    throw new UsageError(
      `${PACKAGE_NAME}: ${sources} leave${sources.includes(" and ") ? "" : "s"} no tool to offer${readOnly ? " in read-only mode" : ""}`,
    );
  }
  if (dropped.length === 0) return { tools };
  return {
    tools,
    note: `Note: read-only mode leaves out ${dropped.join(", ")}, though ${only?.source} names ${dropped.length === 1 ? "it" : "them"}`,
  };
}
