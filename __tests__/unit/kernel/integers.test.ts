/**
 * The one integer check (src/integers.ts): a table of values it must refuse or
 * keep, one wording that names the parameter, the rule and the value, and the
 * readers and the content search using it.
 */
import { describe, expect, it } from "vitest";
import { TextSink } from "../../../src/kernel/bounded.js";
import { compileQuery, ContentSearch } from "../../../src/grep/index.js";
import { checkInteger } from "../../../src/kernel/integers.js";
import { CheckpointCache } from "../../../src/reading/index.js";
import { ScanWorkers } from "../../../src/grep/index.js";

// One shelf of idle scan workers for the searches of this file, as a runtime holds one.
const workers = new ScanWorkers();

describe("checkInteger", () => {
  it.each([
    [-1, 0, Infinity],
    [0.5, 0, Infinity],
    [Number.NaN, 0, Infinity],
    [Infinity, 0, Infinity],
    [2 ** 53, 0, Infinity],
    [0, 1, Infinity],
    [11, 0, 10],
  ])("refuses %s for the rule from %s to %s", (value, min, max) => {
    expect(() => checkInteger("count", value, min, max)).toThrow(RangeError);
  });

  it.each([
    [0, 0, Infinity],
    [1, 1, Infinity],
    [Number.MAX_SAFE_INTEGER, 0, Infinity],
    [10, 0, 10],
    [-3, -5, 0],
  ])("keeps %s for the rule from %s to %s", (value, min, max) => {
    expect(checkInteger("count", value, min, max)).toBe(value);
  });

  it("words every refusal alike: the parameter, the rule, the value", () => {
    expect(() => checkInteger("offset", -1, 0)).toThrow("offset must be an integer >= 0; got -1");
    expect(() => checkInteger("contextLines", 1.5, 0, 10)).toThrow("contextLines must be an integer from 0 to 10; got 1.5");
    expect(() => new CheckpointCache({ maxFiles: 0 })).toThrow("CheckpointCache option maxFiles must be an integer >= 1; got 0");
    const search = (options: { contextLines?: number; offset?: number }) =>
      new ContentSearch({ workers, query: compileQuery({ query: "a" }), sink: new TextSink(100), ...options });
    expect(() => search({ contextLines: 11 })).toThrow("contextLines must be an integer from 0 to 10; got 11");
    expect(() => search({ offset: -2 })).toThrow("offset must be an integer >= 0; got -2");
  });
});
