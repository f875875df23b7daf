/**
 * A scan worker's count job (scan-worker.ts, served here on the calling thread): each file is read as it was
 * when the walk opened it, to the size it had then (its limit), whether it grew or shrank since, small files
 * (read whole at once) and larger ones (scanned chunk by chunk) alike; in lines mode it shows ahead the lines
 * of the files with matches, within its room.
 */
import { execFileSync } from "node:child_process";
import { closeSync, constants, mkdirSync, openSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { DEFAULT_CHUNK } from "../../../src/grep/file-scan.js";
import {
  packFiles,
  packOutcomes,
  unpackOutcomes,
  type FileOutcome,
  type ScanJob,
  type ShowAhead,
  type WorkerReply,
} from "../../../src/grep/protocol.js";
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
  files: { file: string; size: number; flags?: number }[],
  spec: QuerySpec = { query: "hit", regex: false, caseSensitive: true },
  show?: ShowAhead,
): Promise<FileOutcome[]> {
  const counted = (await countReplies(files, spec, undefined, show)).find((r) => r.type === "counted");
  if (counted?.type !== "counted") throw new Error("no count came back");
  return unpackOutcomes(counted);
}

/** Runs one count job (asking for credit when `credit`) as `countOutcomes` does; every reply the worker posted, in order. */
async function countReplies(
  files: { file: string; size: number; flags?: number }[],
  spec: QuerySpec,
  credit?: boolean,
  show?: ShowAhead,
): Promise<WorkerReply[]> {
  const fds = files.map((f) => openSync(f.file, f.flags ?? "r"));
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
      credit,
      show,
    };
    take(job);
    for (let turn = 0; turn < 100 && !replies.some((r) => r.type === "counted"); turn++) await new Promise((resolve) => setImmediate(resolve));
    if (!replies.some((r) => r.type === "counted")) throw new Error(`no count came back: ${JSON.stringify(replies)}`);
    return replies;
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

  it("reads a small file handed over unchecked to its end; checks a larger one as the walk would, read to its size now; refuses a directory or FIFO", async () => {
    const file = path.join(dir, "unchecked.txt");
    writeFileSync(file, "hit\n".repeat(10));
    // Past the first read's 8 KiB: checked by its fstat, then scanned in chunks.
    const large = path.join(dir, "unchecked-large.txt");
    writeFileSync(large, `${"hay\n".repeat(3000)}hit\n`);
    const empty = path.join(dir, "unchecked-empty.txt");
    writeFileSync(empty, "");
    const sub = path.join(dir, "a-directory");
    mkdirSync(sub, { recursive: true });
    const fifo = path.join(dir, "a-fifo");
    execFileSync("mkfifo", [fifo]);
    const outcomes = await countOutcomes([
      { file, size: -1 },
      { file: large, size: -1 },
      { file: empty, size: -1 },
      { file: sub, size: -1 },
      { file: fifo, size: -1, flags: constants.O_RDONLY | constants.O_NONBLOCK },
      { file, size: 8 }, // checked by the walk: read to the size it gave, no check of its own
      { file, size: -1 }, // a second small file of the job: its own place in the job's reads
    ]);
    const whole = { binary: false, matchingLines: 10, occurrences: 10, bytes: 40, checked: { size: 40 } };
    expect(outcomes).toEqual([
      whole,
      { binary: false, matchingLines: 1, occurrences: 1, bytes: 12_004, checked: { size: 12_004 } },
      { binary: false, matchingLines: 0, occurrences: 0, bytes: 0, checked: { size: 0 } },
      { error: "not a regular file", code: "EINVAL" },
      { error: "not a regular file", code: "EINVAL" },
      { binary: false, matchingLines: 2, occurrences: 2, bytes: 8 },
      whole,
    ]);
  });

  it("sends a check's size back exactly, and leaves it out for a file the walk checked", () => {
    const outcomes: FileOutcome[] = [0, 8191, 2 ** 40, Number.MAX_SAFE_INTEGER].map((size, i) => ({
      binary: i === 1,
      matchingLines: i,
      occurrences: 2 * i,
      bytes: 10 * i,
      ...(i === 2 ? {} : { checked: { size } }),
    }));
    expect(unpackOutcomes(packOutcomes(outcomes))).toEqual(outcomes);
  });

  it("shows ahead, in lines mode, the lines of each file with matches under no name, while the job's texts fit its room", async () => {
    const small = path.join(dir, "ahead-small.txt");
    const big = path.join(dir, "ahead-big.txt");
    const none = path.join(dir, "ahead-none.txt");
    writeFileSync(small, "hit one\nhay\nhay\nhay\nhit two\n");
    // Past the probe, so scanned chunk by chunk: its match far down, its context around it.
    writeFileSync(big, `${"hay\n".repeat(5000)}hit three\nhay\n`);
    writeFileSync(none, "hay\n".repeat(10));
    const files = [small, none, big, small].map((file) => ({ file, size: statSync(file).size }));
    const texts = (outcomes: FileOutcome[]): (string | undefined)[] => outcomes.map((o) => ("error" in o ? "error" : o.lines));
    const smallText = "\n1:hit one\n2-hay\n--\n4-hay\n5:hit two\n";
    const bigText = "\n5000-hay\n5001:hit three\n5002-hay\n";
    expect(texts(await countOutcomes(files, undefined, { room: 10_000, contextLines: 1 }))).toEqual([smallText, undefined, bigText, smallText]);
    // The room is the job's: the third file's text no longer fits after the first's, and nothing is shown after it.
    const room = smallText.length + bigText.length - 1;
    expect(texts(await countOutcomes(files, undefined, { room, contextLines: 1 }))).toEqual([smallText, undefined, undefined, undefined]);
    // Without `show`, a count shows nothing; its figures are the same either way.
    const plain = await countOutcomes(files);
    expect(texts(plain)).toEqual([undefined, undefined, undefined, undefined]);
    const figures = (outcomes: FileOutcome[]): unknown[] => outcomes.map((o) => ("error" in o ? o : { ...o, lines: undefined }));
    expect(figures(await countOutcomes(files, undefined, { room, contextLines: 1 }))).toEqual(figures(plain));
    // Texts come back beside the figures, at their files' places.
    const outcomes: FileOutcome[] = [
      { binary: false, matchingLines: 0, occurrences: 0, bytes: 3 },
      { binary: false, matchingLines: 2, occurrences: 2, bytes: 9, lines: "\n1:a\n2:a\n" },
      { error: "gone", code: "ENOENT" },
    ];
    expect(unpackOutcomes(packOutcomes(outcomes))).toEqual(outcomes);
  });

  it("credits a budgeted job with the bytes of the files it read or checked, before it counts any; an unbudgeted job is not", async () => {
    const a = path.join(dir, "credit-a.txt");
    const b = path.join(dir, "credit-b.txt");
    // a is read whole by the worker's first read; b, past it, is checked by its fstat.
    writeFileSync(a, "hit\n".repeat(10));
    writeFileSync(b, "hit\n".repeat(3000));
    const files = [
      { file: a, size: -1 },
      { file: b, size: -1 },
      { file: a, size: 40 },
    ];
    const spec: QuerySpec = { query: "h.t", regex: true, caseSensitive: true };
    const credited = await countReplies(files, spec, true);
    // The walk's own check (the third file) was charged when it was handed over.
    expect(credited.map((r) => r.type)).toEqual(["ready", "credit", "counted"]);
    expect(credited[1]).toMatchObject({ type: "credit", id: 1, bytes: 40 + 12_000 });
    expect((await countReplies(files, spec, false)).map((r) => r.type)).toEqual(["ready", "counted"]);
  });
});
