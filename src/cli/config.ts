/**
 * Command-line and environment configuration (SPEC §2): one defaults object,
 * one parser, one usage text. Pure: it never touches the process.
 */

import { formatCount, MIN_RESULT_CHARS, type Limits } from "../kernel/bounded.js";
import { HTTP_OPTIONS, HTTP_USAGE, httpSettings, type HttpSettings } from "./http-settings.js";
import { PACKAGE_NAME, parseWhole, readOptions, UsageError, type OptionSpec } from "./options.js";
import { TOOL_OPTIONS, TOOLS_USAGE, toolSelection, type ToolSelection } from "./tool-settings.js";
import { MAX_MEDIA_BYTES_BOUND } from "../transports/wire-limits.js";

export { UsageError } from "./options.js";
export { VERSION } from "../server/identity.js";

/** The limits when neither flag nor environment variable sets them. */
export const DEFAULTS: Limits = Object.freeze({
  maxResultChars: 50_000,
  maxMediaBytes: 5 * 1024 * 1024,
});

/** What the command line asks for: run with limits and directories, or print something and exit. */
export type Command =
  // readOnly (SPEC §14) is absent when off; http (SPEC §17) is absent for stdio; the tool selection (SPEC §19)
  // is absent when every tool is offered.
  | ({ kind: "serve"; limits: Limits; directories: readonly string[]; readOnly?: true; http?: HttpSettings } & ToolSelection)
  | { kind: "help" }
  | { kind: "version" };

/** The --help text (stdout), also printed to stderr when no directory is given. */
export const USAGE = `Usage: ${PACKAGE_NAME} [options] [--] DIR...

An MCP filesystem server (stdio, or Streamable HTTP with --http) whose results
never exceed a size cap.
Each DIR is an allowed directory; with none, the client's MCP roots are used.

Options:
  --max-result-chars N   largest text result in characters before a truncation
                         notice (env BOUNDED_FS_MAX_RESULT_CHARS, default ${DEFAULTS.maxResultChars},
                         at least ${MIN_RESULT_CHARS})
  --max-media-bytes N    largest file read_media_file returns, in bytes
                         (env BOUNDED_FS_MAX_MEDIA_BYTES, default ${DEFAULTS.maxMediaBytes}, at most
                         ${MAX_MEDIA_BYTES_BOUND}, so the base64 answer fits MCP clients' 10 MiB lines)
  --read-only            leave out the tools that change files: write_file,
                         append_file, edit_file, replace_in_files, create_directory,
                         move_file, copy_file, delete_file (env BOUNDED_FS_READ_ONLY=1)
${TOOLS_USAGE}${HTTP_USAGE}  --help                 print this help and exit
  --version              print the version and exit
  --                     end of options; every later argument is a directory

A flag wins over its environment variable. N is a positive whole number.
`;

const RESULT_CHARS = { flag: "--max-result-chars", env: "BOUNDED_FS_MAX_RESULT_CHARS", kind: "value", expects: "a positive whole number" } as const;
const MEDIA_BYTES = { flag: "--max-media-bytes", env: "BOUNDED_FS_MAX_MEDIA_BYTES", kind: "value", expects: "a positive whole number" } as const;
const LIMIT_OPTIONS: readonly (OptionSpec & { key: keyof Limits })[] = [
  { key: "maxResultChars", ...RESULT_CHARS },
  { key: "maxMediaBytes", ...MEDIA_BYTES },
];
const READ_ONLY: OptionSpec = { flag: "--read-only", env: "BOUNDED_FS_READ_ONLY", kind: "switch" };

/** Every option the command line knows, in --help order. */
const OPTIONS: readonly OptionSpec[] = [...LIMIT_OPTIONS, READ_ONLY, ...TOOL_OPTIONS, ...HTTP_OPTIONS];

/**
 * Turns argv (without node and script) and the environment into a Command.
 * @throws UsageError on an unknown option, a missing value, a bad number or a bad combination
 */
export function parseCommand(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): Command {
  const read = readOptions(argv, env, OPTIONS);
  if (read === "help" || read === "version") return { kind: read };
  const limits: { -readonly [K in keyof Limits]: number } = { ...DEFAULTS };
  for (const spec of LIMIT_OPTIONS) {
    const given = read.get(spec);
    if (given !== undefined) limits[spec.key] = parseWhole(given);
  }
  checkMediaBound(limits.maxMediaBytes, read.get(MEDIA_BYTES)?.source ?? MEDIA_BYTES.flag);
  checkResultMinimum(limits.maxResultChars, read.get(RESULT_CHARS)?.source ?? RESULT_CHARS.flag);
  const readOnly = read.on(READ_ONLY);
  const selection = toolSelection(read, readOnly);
  const http = httpSettings(read);
  if (http && read.directories.length === 0) {
    throw new UsageError(`${PACKAGE_NAME}: --http needs at least one DIR: over HTTP the directories are the ceiling clients' roots can only narrow`);
  }
  return {
    kind: "serve",
    limits: Object.freeze(limits),
    directories: read.directories,
    ...(readOnly && { readOnly }),
    ...(http && { http }),
    ...selection,
  };
}

/**
 * Refuses a cap too small to hold a search's closing summary whole (issue 18, item 11).
 * @throws UsageError naming `source`, the value and the minimum
 */
function checkResultMinimum(value: number, source: string): void {
  if (value >= MIN_RESULT_CHARS) return;
  throw new UsageError(
    `${PACKAGE_NAME}: ${source} is ${value}, below the minimum of ${formatCount(MIN_RESULT_CHARS)} characters ` +
      "(a smaller cap would cut search_file_contents' closing summary, with the offset that continues it)",
  );
}

/**
 * Refuses a media limit whose base64 answer could not reach SDK clients (SPEC §13).
 * @throws UsageError naming `source`, the value and the bound
 */
function checkMediaBound(value: number, source: string): void {
  if (value <= MAX_MEDIA_BYTES_BOUND) return;
  throw new UsageError(
    `${PACKAGE_NAME}: ${source} is ${value}, over the bound of ${MAX_MEDIA_BYTES_BOUND} bytes ` +
      "(a larger file's base64 answer would not fit in the 10 MiB line MCP clients accept)",
  );
}
