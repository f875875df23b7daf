/**
 * The command line's grammar, once: a table of options (flag, environment
 * variable, kind), one pass over argv, and the value readers every setting
 * uses. Pure: what the options mean is decided by config.ts and http-settings.ts.
 */

import { UsageError } from "../kernel/usage-error.js";

export { UsageError };

/** The npm package and bin name, used in messages. */
export const PACKAGE_NAME = "bounded-filesystem-mcp";

/** One option: a switch (`--read-only`) or an option with a value (`--max-sessions N`), and its variable. */
export interface OptionSpec {
  readonly flag: string;
  readonly env: string;
  readonly kind: "switch" | "value";
  /** What the value looks like, for "missing value" errors, e.g. "a positive whole number". */
  readonly expects?: string;
}

/** Where a setting came from, for error messages: the flag or the environment variable. */
export interface Given {
  readonly value: string;
  readonly source: string;
}

/** argv and the environment read against a table: each option's value with its source, and the directories. */
export interface ReadOptions {
  readonly directories: readonly string[];
  /** The flag's value if given, else the variable's (flags win); undefined when neither is set. */
  get(spec: OptionSpec): Given | undefined;
  /** True when the switch's flag was given, or its variable is on (1/true; 0/false/empty is off). */
  on(spec: OptionSpec): boolean;
  /** True when the option's flag itself was given (not only its variable). */
  flagged(spec: OptionSpec): boolean;
}

/** What argv asks for besides serving. */
export type Early = "help" | "version";

/**
 * Reads argv (without node and script) against `specs`: `--flag value`, `--flag=value`,
 * switches, `--` ending the options, `--help`/`-h` and `--version` (returned as Early).
 * @throws UsageError on an unknown option, a missing value or a value given to a switch
 */
export function readOptions(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  specs: readonly OptionSpec[],
): ReadOptions | Early {
  const flags = new Map<string, string>();
  const directories: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === "--") {
      directories.push(...argv.slice(i + 1));
      break;
    }
    if (arg === "--help" || arg === "-h") return "help";
    if (arg === "--version") return "version";
    if (!arg.startsWith("-") || arg === "-") {
      directories.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    const name = eq === -1 ? arg : arg.slice(0, eq);
    const spec = specs.find((s) => s.flag === name);
    if (!spec) throw new UsageError(`${PACKAGE_NAME}: unknown option ${JSON.stringify(name)} (see --help)`);
    if (spec.kind === "switch") {
      if (eq !== -1) throw new UsageError(`${PACKAGE_NAME}: ${spec.flag} takes no value (got ${JSON.stringify(arg.slice(eq + 1))})`);
      flags.set(spec.flag, "1");
      continue;
    }
    if (eq !== -1) flags.set(spec.flag, arg.slice(eq + 1));
    else if (i + 1 < argv.length) flags.set(spec.flag, argv[++i] as string);
    else throw new UsageError(`${PACKAGE_NAME}: missing value for ${spec.flag} (expected ${spec.expects ?? "a value"})`);
  }
  return {
    directories,
    get(spec) {
      const flagged = flags.get(spec.flag);
      if (flagged !== undefined) return { value: flagged, source: spec.flag };
      const fromEnv = env[spec.env];
      return fromEnv === undefined ? undefined : { value: fromEnv, source: spec.env };
    },
    on(spec) {
      if (flags.has(spec.flag)) return true;
      return parseSwitch(spec.env, env[spec.env]);
    },
    flagged: (spec) => flags.has(spec.flag),
  };
}

/**
 * Parses a positive decimal integer (or, with `min` 0, a whole number).
 * @throws UsageError naming the source and the value
 */
export function parseWhole(given: Given, min = 1): number {
  const n = Number(given.value);
  if (!/^\d+$/.test(given.value) || !Number.isSafeInteger(n) || n < min) {
    const rule = min === 0 ? "a whole number" : "a positive whole number";
    throw new UsageError(`${PACKAGE_NAME}: invalid value for ${given.source}: ${JSON.stringify(given.value)} (expected ${rule})`);
  }
  return n;
}

/**
 * An on/off environment variable: unset, empty, 0 or false is off; 1 or true is on.
 * @throws UsageError naming the variable and the value otherwise
 */
function parseSwitch(source: string, value: string | undefined): boolean {
  if (value === undefined || /^(|0|false)$/i.test(value)) return false;
  if (/^(1|true)$/i.test(value)) return true;
  throw new UsageError(`${PACKAGE_NAME}: invalid value for ${source}: ${JSON.stringify(value)} (expected 1 or 0)`);
}

/** A usage error naming `given`'s source and value and what was expected. */
export function invalid(given: Given, expected: string): UsageError {
  return new UsageError(`${PACKAGE_NAME}: invalid value for ${given.source}: ${JSON.stringify(given.value)} (${expected})`);
}
