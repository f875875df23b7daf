/**
 * A scan worker's count job (scan-worker.ts, served here on the calling thread): each file is read as it was
 * when the walk opened it, to the size it had then (its limit), whether it grew or shrank since, small files
 * (read whole at once) and larger ones (scanned chunk by chunk) alike.
 */
import { closeSync, openSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { DEFAULT_CHUNK } from "../../../src/grep/file-scan.js";
import { packFiles, unpackOutcomes, type FileOutcome, type ScanJob, type WorkerReply } from "../../../src/grep/protocol.js";
import type { QuerySpec } from "../../../src/grep/query.js";
import { serveScans } from "../../../src/grep/scan-worker.js";
import { tempDir } from "../../support/fixtures.js";

let dir: string;
let remove: () => Promise<void>;

beforeAll(async () => {
  ({ dir, remove } = await tempDir("bfs-scan-worker-"));
});
afterAll(() => remove());

/** Runs one count job of `spec` over `files` (each a path and the size the walk saw when it opened it); each file's outcome. */
async function countOutcomes(
  files: { file: string; size: number }[],
  spec: QuerySpec = { query: "hit", regex: false, caseSensitive: true },
): Promise<FileOutcome[]> {
  const fds = files.map((f) => openSync(f.file, "r"));
  try {
    const replies: WorkerReply[] = [];
    let take: (job: ScanJob) => void = () => {};
    serveScans({ postMessage: (reply) => replies.push(reply), on: (_event, listener) => (take = listener) });
    const job: ScanJob = {
      id: 1,
      kind: "count",
      spec,
      files: packFiles(files.map((f, i) => ({ fd: fds[i] as number, size: f.size }))),
      occurrences: true,
    };
    take(job);
    for (let turn = 0; turn < 100 && !replies.some((r) => r.type === "counted"); turn++) await new Promise((resolve) => setImmediate(resolve));
    const counted = replies.find((r) => r.type === "counted");
    if (counted?.type !== "counted") throw new Error(`no count came back: ${JSON.stringify(replies)}`);
    return unpackOutcomes(counted);
  } finally {
    for (const fd of fds) closeSync(fd);
  }
}

/** The matching lines of each file of a count job over `files`. */
async function countJob(files: { file: string; size: number }[]): Promise<number[]> {
  return (await countOutcomes(files)).map((o) => ("error" in o ? -1 : o.matchingLines));
}

describe("a scan worker's count job", () => {
  it("reads each file to the size it had when opened: grown since, shrunk since, or of no size given", async () => {
    const lines = (n: number): string => "hit\n".repeat(n);
    const small = path.join(dir, "small.txt");
    const big = path.join(dir, "big.txt");
    writeFileSync(small, lines(100)); // 400 bytes: read whole at once
    writeFileSync(big, lines(5000)); // 20,000 bytes: past the probe, scanned in chunks
    expect(
      await countJob([
        { file: small, size: 200 }, // grew from 200 bytes since
        { file: small, size: 1000 }, // shrank from 1,000
        { file: small, size: 400 },
        { file: small, size: 0 }, // no size (as /proc files say): read to its end
        { file: big, size: 4000 }, // grew from 4,000 bytes (a small file then) past the probe
        { file: big, size: 12_000 },
        { file: big, size: 40_000 },
      ]),
    ).toEqual([50, 100, 100, 100, 1000, 3000, 5000]);
  });

  it("counts a literal across a line longer than its chunk in pieces of the chunk, every occurrence once; a regex keeps the line whole", async () => {
    // One 3 MiB line holding 40,000 occurrences, some across every chunk boundary, then two short lines.
    const unit = "xx hit y".repeat(10); // 80 bytes, 10 occurrences
    const long = unit.repeat(4000);
    const file = path.join(dir, "minified.js");
    writeFileSync(file, `${long.repeat(10)}\nhit\nnone\n`);
    const size = long.length * 10 + 9;
    const alloc = vi.spyOn(Buffer, "allocUnsafe");
    try {
      const [literal] = await countOutcomes([{ file, size }]);
      expect(literal).toMatchObject({ binary: false, matchingLines: 2, occurrences: 400_001, bytes: size });
      // No buffer past the chunk: the line was not gathered whole (each doubling copied it).
      expect(Math.max(0, ...alloc.mock.calls.map(([n]) => n))).toBeLessThanOrEqual(DEFAULT_CHUNK);
      alloc.mockClear();
      const [regex] = await countOutcomes([{ file, size }], { query: "^xx hit|hit$", regex: true, caseSensitive: true });
      // The anchors see the line as it is: the long line starts with "xx hit" (once), the short one is "hit".
      expect(regex).toMatchObject({ binary: false, matchingLines: 2, occurrences: 2 });
      expect(Math.max(0, ...alloc.mock.calls.map(([n]) => n))).toBeGreaterThan(DEFAULT_CHUNK);
    } finally {
      alloc.mockRestore();
    }
  });
});
