/**
 * How a tool call's arguments are read before the schema, and refused: an array some clients send as its JSON text
 * (`edits`) is taken as that array; a misnamed parameter (dry_run for dryRun), which the schema alone would
 * drop without a word and so change what the call does, is refused; so are the schema's issues, each named by its
 * parameter and the value given.
 */
import { z } from "zod";
import { formatCount } from "../kernel/bounded.js";
import { escapeControls, unitEscape } from "../kernel/escape.js";

// The issues a refusal names: past these, the same mistake over many items (an array of numbers for edits) says
// nothing more, and a model would read it 50,000 characters long.
const ISSUES_NAMED = 10;

/** The schema's issues as one line, each with the parameter it concerns and the value given (the first ten). */
export function describeIssues(tool: string, error: z.ZodError, args: unknown): string {
  const more = error.issues.length - ISSUES_NAMED;
  const parts = error.issues.slice(0, ISSUES_NAMED).map((issue) => {
    const where = issue.path.length > 0 ? issue.path.join(".") : "arguments";
    let seen: unknown = args;
    for (const key of issue.path) seen = seen && typeof seen === "object" ? (seen as Record<PropertyKey, unknown>)[key] : undefined;
    const shown = seen === undefined ? "" : ` (got ${JSON.stringify(seen)?.slice(0, 80) ?? String(seen)})`;
    return `${where}: ${issue.message}${shown}`;
  });
  return `Invalid arguments for ${tool}: ${parts.join("; ")}${more > 0 ? `; and ${formatCount(more)} more` : ""}`;
}

/** The most items an array parameter may hold: more would cost the schema's check seconds and gigabytes. */
const MAX_ITEMS = 10_000;

/** The refusal of an array parameter holding more than MAX_ITEMS items, checked before the schema; undefined when none does. */
export function tooManyItems(tool: string, shape: z.ZodRawShape, args: Readonly<Record<string, unknown>>): string | undefined {
  // The parameters only: other names are dropped unread, and a call may carry thousands.
  for (const key of Object.keys(shape)) {
    const value = args[key];
    if (Array.isArray(value) && value.length > MAX_ITEMS) {
      return (
        `Invalid arguments for ${tool}: ${escapeControls(key)} holds ${formatCount(value.length)} items; the limit is ` +
        `${formatCount(MAX_ITEMS)} a call. Nothing was done; split the work into calls.`
      );
    }
  }
  return undefined;
}

// A UTF-16 surrogate without its other half: no UTF-8 encodes it, and Node writes U+FFFD in its place.
const UNPAIRED = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * The refusal of a call one of whose text parameters (a path, a file's content, an edit's text, a query) holds an
 * unpaired UTF-16 surrogate, checked before the schema: written, it would become U+FFFD in the file without a word;
 * as a path or a query it names or finds nothing. undefined when none does.
 */
export function unpairedSurrogate(tool: string, shape: z.ZodRawShape, args: Readonly<Record<string, unknown>>): string | undefined {
  const found = (value: unknown, where: string, depth: number): string | undefined => {
    if (typeof value === "string") {
      const at = UNPAIRED.exec(value);
      if (at === null) return undefined;
      return (
        `Invalid arguments for ${tool}: ${where} holds an unpaired UTF-16 surrogate (${unitEscape(at[0])}, at character ${formatCount(at.index)}), ` +
        "which UTF-8 cannot encode: a file would get U+FFFD in its place, and a path or query would match nothing. Nothing was done; send valid Unicode."
      );
    }
    if (depth === 0 || value === null || typeof value !== "object") return undefined;
    for (const [key, item] of Object.entries(value)) {
      const refusal = found(item, Array.isArray(value) ? `${where}[${key}]` : `${where}.${escapeControls(key)}`, depth - 1);
      if (refusal !== undefined) return refusal;
    }
    return undefined;
  };
  // The parameters only, and their items and fields (edits[i].newText): other names are dropped unread.
  for (const key of Object.keys(shape)) {
    const refusal = found(args[key], escapeControls(key), 2);
    if (refusal !== undefined) return refusal;
  }
  return undefined;
}

// Hostile calls may carry thousands of keys or items: only this many are compared, and names up to this length.
const KEYS_LOOKED_AT = 64;
const ITEMS_LOOKED_AT = 64;
const LONGEST_NAME = 40;

/**
 * The refusal of a call one of whose argument names is not a parameter but nearly one that the call leaves out
 * (`dry_run`, `max_depth`, `output` for outputMode, `edits[0].replace_all`): ignored as the schema would, it would make
 * an edit meant as a dry run write, or a search meant to count list lines. Other unknown names are ignored, as upstream
 * does. undefined when there is none.
 */
export function misnamedParameter(tool: string, shape: z.ZodRawShape, args: Readonly<Record<string, unknown>>): string | undefined {
  const found = misnamedIn(shape, args);
  if (found === undefined) return undefined;
  const { list, within, given, meant, known } = found;
  const [what, whose] = list === "" ? [`a parameter of ${tool}`, "Its parameters"] : [`a field of ${list}' items`, `The fields of ${list}' items`];
  return (
    `Invalid arguments for ${tool}: ${within}${escapeControls(given)} is not ${what}; did you mean ${within}${meant}? ` +
    `Nothing was done. ${whose}: ${known.join(", ")}.`
  );
}

interface Misnamed {
  /** The array parameter whose item holds the name (edits), and that item (`edits[0].`); both "" for a parameter. */
  readonly list: string;
  readonly within: string;
  readonly given: string;
  readonly meant: string;
  readonly known: readonly string[];
}

function misnamedIn(shape: z.ZodRawShape, args: Readonly<Record<string, unknown>>, list = "", within = ""): Misnamed | undefined {
  const known = Object.keys(shape);
  for (const key of Object.keys(args).slice(0, KEYS_LOOKED_AT)) {
    const schema = shape[key];
    if (schema === undefined) {
      const meant = known.find((name) => !Object.hasOwn(args, name) && nearlyNamed(key, name));
      if (meant !== undefined) return { list, within, given: key, meant, known };
      continue;
    }
    const items = itemShape(schema);
    const value = args[key];
    if (items === undefined || !Array.isArray(value)) continue;
    for (const [i, item] of value.slice(0, ITEMS_LOOKED_AT).entries()) {
      if (item === null || typeof item !== "object" || Array.isArray(item)) continue;
      const found = misnamedIn(items, item as Record<string, unknown>, key, `${key}[${i}].`);
      if (found) return found;
    }
  }
  return undefined;
}

/** A parameter's schema without its optional and default wrappers. */
function unwrapped(schema: z.core.$ZodType): unknown {
  let inner: unknown = schema;
  while (inner instanceof z.ZodOptional || inner instanceof z.ZodDefault) inner = inner.unwrap();
  return inner;
}

/** The shape of an array parameter's object items (edit_file's edits), else undefined. */
function itemShape(schema: z.core.$ZodType): z.ZodRawShape | undefined {
  const inner = unwrapped(schema);
  if (!(inner instanceof z.ZodArray)) return undefined;
  const element: unknown = inner.element;
  return element instanceof z.ZodObject ? element.shape : undefined;
}

/**
 * The arguments with an array parameter sent as the JSON text of an array (`"edits": "[{…}]"`) taken as that array:
 * several clients send edit_file's edits so, and every such call failed with "expected array, received string".
 * Any other text is left for the schema to refuse (SPEC §3: a number sent as text is an error), and so is every other
 * kind of parameter. `args` itself when nothing is taken.
 */
export function textTaken(shape: z.ZodRawShape, args: Readonly<Record<string, unknown>>): Readonly<Record<string, unknown>> {
  let taken: Record<string, unknown> | undefined;
  for (const [key, schema] of Object.entries(shape)) {
    const given = args[key];
    if (typeof given !== "string" || !(unwrapped(schema) instanceof z.ZodArray) || !given.trimStart().startsWith("[")) continue;
    let value: unknown;
    try {
      value = JSON.parse(given);
    } catch {
      continue;
    }
    // No parameter's items nest deeper than an edit's fields; text nested deeper, which the message's own depth limit
    // never saw, is left as text (checked, it would overflow the stack where the refusal shows the value).
    if (!Array.isArray(value) || !value.every(flat)) continue;
    taken ??= { ...args };
    taken[key] = value;
  }
  return taken ?? args;
}

// A scalar, or an object or array of scalars.
const scalar = (v: unknown): boolean => v === null || typeof v !== "object";
const flat = (v: unknown): boolean => scalar(v) || Object.values(v as object).every(scalar);

/**
 * Whether `given` reads as a misspelling of `name`: the same but for case, `_` and `-`; one the start or end of the
 * other (4 letters at least: output for outputMode, depth for maxDepth); or within one edit (two from 8 letters:
 * caseInsensitive for caseSensitive).
 */
export function nearlyNamed(given: string, name: string): boolean {
  if (given.length > LONGEST_NAME) return false;
  const a = given.toLowerCase().replace(/[-_\s]/g, "");
  const b = name.toLowerCase();
  if (a === b) return true;
  const shorter = Math.min(a.length, b.length);
  if (shorter >= 4 && (a.startsWith(b) || b.startsWith(a) || a.endsWith(b) || b.endsWith(a))) return true;
  return shorter >= 4 && editDistance(a, b) <= (shorter >= 8 ? 2 : 1);
}

/** Levenshtein distance of two short strings (one row at a time). */
function editDistance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) {
      next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    row = next;
  }
  return row[b.length]!;
}
