import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { LineScanner } from "../src/transports/line-scan.js";

/** Nesting depth of a parsed JSON value, as the scanner counts it (a scalar is 0). */
function depthOf(value: unknown): number {
  if (value === null || typeof value !== "object") return 0;
  const children = Array.isArray(value) ? value : Object.values(value);
  return 1 + Math.max(0, ...children.map(depthOf));
}

/** Feeds `text` to a fresh scanner in pieces cut at `cuts` (byte offsets). */
function scan(text: string, cuts: readonly number[] = []): LineScanner {
  const bytes = Buffer.from(text);
  const scanner = new LineScanner();
  let from = 0;
  for (const cut of [...cuts].sort((a, b) => a - b)) {
    const at = Math.min(cut, bytes.length);
    scanner.feed(bytes.subarray(from, at));
    from = at;
  }
  scanner.feed(bytes.subarray(from));
  return scanner;
}

const idArb = fc.oneof(fc.string(), fc.integer(), fc.constantFrom('a"b', "\\", "é\u2028", "𝄞"));

describe("LineScanner", () => {
  it("finds the top-level id and method and the depth however the line is cut", () => {
    fc.assert(
      fc.property(idArb, fc.string(), fc.jsonValue({ maxDepth: 6 }), fc.boolean(), fc.array(fc.nat(400)), (id, method, params, idLast, cuts) => {
        const message = idLast ? { jsonrpc: "2.0", method, params, id } : { id, jsonrpc: "2.0", method, params };
        const text = JSON.stringify(message);
        const scanner = scan(text, cuts);
        const head = scanner.head();
        expect(head.method).toBe(Buffer.byteLength(JSON.stringify(method)) <= 256 ? method : undefined);
        if (Buffer.byteLength(JSON.stringify(id)) <= 256) expect(head.id).toBe(id);
        expect(scanner.maxDepth).toBe(depthOf(message));
      }),
      { numRuns: 300 },
    );
  });

  it("ignores id and method keys below the top level and in strings, and ids that are not strings or integers", () => {
    expect(scan('{"params":{"id":1,"method":"x"},"note":"\\"id\\":2"}').head()).toEqual({});
    expect(scan('{"id":1.5,"method":7}').head()).toEqual({});
    expect(scan('{"id":{"a":1},"method":"m"}').head()).toEqual({ method: "m" });
    expect(scan('[{"id":1}]').head()).toEqual({});
  });

  it("counts depth past any limit without recursion and forgets everything on reset", () => {
    const scanner = scan(`{"id":3,"a":${"[".repeat(200_000)}${"]".repeat(200_000)}}`);
    expect(scanner.maxDepth).toBe(200_001);
    expect(scanner.head()).toEqual({ id: 3 });
    scanner.reset();
    expect(scanner.maxDepth).toBe(0);
    expect(scanner.head()).toEqual({});
  });
});
