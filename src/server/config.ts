/**
 * Command-line and environment configuration (SPEC §2): one defaults object,
 * one parser, one usage text. Pure: it never touches the process.
 */

import { readFileSync } from "node:fs";
import type { Limits } from "../bounded.js";
import { MAX_MEDIA_BYTES_BOUND } from "./wire-limits.js";

/** The npm package and bin name, used in messages. */
const PACKAGE_NAME = "bounded-filesystem-mcp";
// The one read this module makes, once at load: package.json is two levels up from both
// src/server/ and dist/server/, and npm, npx and bunx install it beside dist/.
const MANIFEST = new URL("../../package.json", import.meta.url);
/** The package version reported by --version and serverInfo: package.json's, so it is written once. */
export const VERSION: string = (JSON.parse(readFileSync(MANIFEST, "utf8")) as { version: string }).version;

/** The limits when neither flag nor environment variable sets them. */
export const DEFAULTS: Limits = Object.freeze({
  maxResultChars: 50_000,
  maxMediaBytes: 5 * 1024 * 1024,
});

/** What the command line asks for: run with limits and directories, or print something and exit. */
export type Command =
  // readOnly (SPEC §14) is absent when off.
  { kind: "serve"; limits: Limits; directories: readonly string[]; readOnly?: true } | { kind: "help" } | { kind: "version" };

/** A bad command line or environment; the process exits with status 2. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

/** The --help text (stdout), also printed to stderr when no directory is given. */
export const USAGE = `Usage: ${PACKAGE_NAME} [options] [--] DIR...

An MCP filesystem server (stdio) whose results never exceed a size cap.
Each DIR is an allowed directory; with none, the client's MCP roots are used.

Options:
  --max-result-chars N   largest text result in characters before a truncation
                         notice (env BOUNDED_FS_MAX_RESULT_CHARS, default ${DEFAULTS.maxResultChars})
  --max-media-bytes N    largest file read_media_file returns, in bytes
                         (env BOUNDED_FS_MAX_MEDIA_BYTES, default ${DEFAULTS.maxMediaBytes}, at most
                         ${MAX_MEDIA_BYTES_BOUND}, so the base64 answer fits MCP clients' 10 MiB lines)
  --read-only            leave out write_file, edit_file, create_directory and
                         move_file (env BOUNDED_FS_READ_ONLY=1)
  --help                 print this help and exit
  --version              print the version and exit
  --                     end of options; every later argument is a directory

A flag wins over its environment variable. N is a positive whole number.
`;

interface LimitSpec {
  key: keyof Limits;
  flag: string;
  env: string;
}

const LIMIT_SPECS: readonly LimitSpec[] = [
  { key: "maxResultChars", flag: "--max-result-chars", env: "BOUNDED_FS_MAX_RESULT_CHARS" },
  { key: "maxMediaBytes", flag: "--max-media-bytes", env: "BOUNDED_FS_MAX_MEDIA_BYTES" },
];

/**
 * Parses a positive decimal integer.
 * @throws UsageError naming `source` and the value
 */
function parsePositiveInt(source: string, value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n < 1) {
    throw new UsageError(`${PACKAGE_NAME}: invalid value for ${source}: ${JSON.stringify(value)} (expected a positive whole number)`);
  }
  return n;
}

/**
 * Turns argv (without node and script) and the environment into a Command.
 * @throws UsageError on an unknown option, a missing value or a bad number
 */
export function parseCommand(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): Command {
  const fromFlags = new Map<keyof Limits, number>();
  const directories: string[] = [];
  let readOnly: boolean | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === "--") {
      directories.push(...argv.slice(i + 1));
      break;
    }
    if (arg === "--help" || arg === "-h") return { kind: "help" };
    if (arg === "--version") return { kind: "version" };
    if (arg === "--read-only") {
      readOnly = true;
      continue;
    }
    if (!arg.startsWith("-") || arg === "-") {
      directories.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    const name = eq === -1 ? arg : arg.slice(0, eq);
    const spec = LIMIT_SPECS.find((s) => s.flag === name);
    if (!spec) throw new UsageError(`${PACKAGE_NAME}: unknown option ${JSON.stringify(name)} (see --help)`);
    let value: string;
    if (eq !== -1) value = arg.slice(eq + 1);
    else if (i + 1 < argv.length) value = argv[++i] as string;
    else throw new UsageError(`${PACKAGE_NAME}: missing value for ${spec.flag} (expected a positive whole number)`);
    fromFlags.set(spec.key, parsePositiveInt(spec.flag, value));
  }
  const limits: { -readonly [K in keyof Limits]: number } = { ...DEFAULTS };
  for (const spec of LIMIT_SPECS) {
    const flagged = fromFlags.get(spec.key);
    const envValue = env[spec.env];
    if (flagged !== undefined) limits[spec.key] = flagged;
    else if (envValue !== undefined) limits[spec.key] = parsePositiveInt(spec.env, envValue);
  }
  checkMediaBound(limits.maxMediaBytes, fromFlags.has("maxMediaBytes") ? "--max-media-bytes" : "BOUNDED_FS_MAX_MEDIA_BYTES");
  readOnly ??= parseSwitch(READ_ONLY_ENV, env[READ_ONLY_ENV]);
  return { kind: "serve", limits: Object.freeze(limits), directories, ...(readOnly && { readOnly }) };
}

const READ_ONLY_ENV = "BOUNDED_FS_READ_ONLY";

/**
 * An on/off environment variable: unset, empty, 0 or false is off; 1 or true is on.
 * @throws UsageError naming the variable and the value otherwise
 */
function parseSwitch(source: string, value: string | undefined): boolean {
  if (value === undefined || /^(|0|false)$/i.test(value)) return false;
  if (/^(1|true)$/i.test(value)) return true;
  throw new UsageError(`${PACKAGE_NAME}: invalid value for ${source}: ${JSON.stringify(value)} (expected 1 or 0)`);
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
