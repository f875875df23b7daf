/**
 * The one check of an integer parameter, and its one wording: the error names
 * the parameter, the rule and the value seen (SPEC §3.2, §5).
 */

/**
 * `value` itself when it is a safe integer from `min` to `max`.
 * @throws RangeError `<name> must be an integer >= <min>; got <value>` (or `from <min> to <max>`)
 */
export function checkInteger(name: string, value: number, min: number, max = Infinity): number {
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    const rule = max === Infinity ? `>= ${min}` : `from ${min} to ${max}`;
    throw new RangeError(`${name} must be an integer ${rule}; got ${String(value)}`);
  }
  return value;
}
