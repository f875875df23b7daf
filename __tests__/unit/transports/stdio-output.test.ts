/**
 * The stdio transport and a client that reads no answers (SPEC §13): requests, light ones too, start only while the
 * answers not yet taken stay under OUTPUT_HIGH_WATER, each counted as at least UNSENT_MESSAGE_BYTES; once the client
 * reads again every request is answered.
 */
import { PassThrough, Writable } from "node:stream";
import type { JSONRPCMessage } from "@modelcontextprotocol/server";
import { expect, it } from "vitest";
import { BoundedStdioTransport } from "../../../src/transports/stdio/transport.js";
import { MAX_IN_FLIGHT, OUTPUT_HIGH_WATER, UNSENT_MESSAGE_BYTES } from "../../../src/transports/wire-limits.js";

it("5,000 pings from a client that reads nothing start about a mark's worth of answers, and all are answered once it reads", async () => {
  // 300,000 pings started at once, each answer's 40 bytes far under the mark, held 834 MB of requests' state.
  const held: Array<() => void> = [];
  let reading = false;
  let written = 0;
  const output = new Writable({
    highWaterMark: 1024,
    write(chunk: Buffer, _encoding, done) {
      written += chunk.toString("utf8").split("\n").length - 1;
      if (reading) done();
      else held.push(done);
    },
  });
  const input = new PassThrough();
  const transport = new BoundedStdioTransport(input, output, { log: () => undefined });
  let started = 0;
  transport.onmessage = (message) => {
    started++;
    if ("id" in message) void transport.send({ jsonrpc: "2.0", id: message.id, result: {} } as JSONRPCMessage);
  };
  await transport.start();
  const pings = 5000;
  input.write(Array.from({ length: pings }, (_, i) => `${JSON.stringify({ jsonrpc: "2.0", id: i, method: "ping" })}\n`).join(""));
  const bound = OUTPUT_HIGH_WATER / UNSENT_MESSAGE_BYTES + MAX_IN_FLIGHT;
  await expect.poll(() => started).toBeGreaterThan(bound / 2);
  await new Promise((resolve) => setTimeout(resolve, 200));
  expect(started).toBeLessThanOrEqual(bound);
  reading = true;
  for (const done of held.splice(0)) done();
  await expect.poll(() => written, { timeout: 10_000 }).toBe(pings);
  expect(started).toBe(pings);
  await transport.close();
});
