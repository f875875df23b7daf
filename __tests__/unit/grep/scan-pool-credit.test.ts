/**
 * A regex call's budget and the files handed over unchecked (SPEC §16): their bytes are not known when the walk
 * hands them over, so the worker credits them once it has checked them, before it scans them. Here the pool's
 * worker is a stand-in the test answers for, so what the budget sees is the test's to say.
 */
import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import { packFiles, packOutcomes, type ScanJob, type WorkerReply } from "../../../src/grep/protocol.js";
import { RegexTooCostlyError, ScanPool, ScanWorkers } from "../../../src/grep/scan-pool.js";
import type { ScanThread } from "../../../src/grep/scan-thread.js";

/** A scan worker that only takes jobs: the test posts its replies. */
class Answered extends EventEmitter implements ScanThread {
  readonly jobs: ScanJob[] = [];

  constructor() {
    super();
    setImmediate(() => this.reply({ type: "ready" }));
  }

  reply(reply: WorkerReply): void {
    this.emit("message", reply);
  }

  postMessage(job: ScanJob): void {
    this.jobs.push(job);
  }

  terminate(): Promise<number> {
    this.emit("exit", 1);
    return Promise.resolve(1);
  }

  ref(): void {}

  unref(): void {}
}

const settle = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

// A pool with a budget of 30 ms plus a second a KiB, and the job it sent for one file handed over unchecked.
async function countOneUnchecked(): Promise<{ pool: ScanPool; thread: Answered; job: ScanJob; counting: Promise<unknown> }> {
  let thread: Answered | undefined;
  const pool = new ScanPool(new ScanWorkers(), { baseMs: 30, perKiBMs: 1000, perFileMs: 0 }, "the files", () => (thread = new Answered()));
  const counting = pool.count({ spec: { query: "a+b", regex: true } }, packFiles([{ fd: 0, size: -1 }]), false);
  counting.catch(() => undefined);
  for (let turn = 0; turn < 100 && thread?.jobs.length !== 1; turn++) await settle(1);
  const job = thread?.jobs[0];
  if (thread === undefined || job === undefined) throw new Error("the pool sent no job");
  return { pool, thread, job, counting };
}

describe("a regex call's budget and files handed over unchecked", () => {
  it("asks the worker for credit, and a job busy past the base but within what it credited is not too costly", async () => {
    const { pool, thread, job, counting } = await countOneUnchecked();
    expect(job).toMatchObject({ kind: "count", credit: true });
    thread.reply({ type: "credit", id: job.id, bytes: 10 * 1024 });
    // Busy past the base of 30 ms: the budget's checks (every 20 ms) see it, against 10 s more.
    await settle(150);
    thread.reply({ type: "counted", id: job.id, ms: 150, ...packOutcomes([{ binary: false, matchingLines: 1, occurrences: 1, bytes: 4 }]) });
    await expect(counting).resolves.toEqual([{ binary: false, matchingLines: 1, occurrences: 1, bytes: 4 }]);
    await pool.close();
  });

  it("without the credit, the same job is too costly once past the base", async () => {
    const { pool, counting } = await countOneUnchecked();
    await expect(counting).rejects.toThrow(RegexTooCostlyError);
    await expect(counting).rejects.toThrow(/used up its 30 ms/);
    await pool.close();
  });

  it("asks no credit of a call without a budget (a literal query)", async () => {
    let thread: Answered | undefined;
    const pool = new ScanPool(new ScanWorkers(), undefined, "the files", () => (thread = new Answered()));
    const counting = pool.count({ spec: { query: "ab" } }, packFiles([{ fd: 0, size: -1 }]), false);
    for (let turn = 0; turn < 100 && thread?.jobs.length !== 1; turn++) await settle(1);
    const job = thread?.jobs[0];
    expect(job).toMatchObject({ kind: "count", credit: false });
    thread?.reply({ type: "counted", id: job?.id ?? 0, ms: 1, ...packOutcomes([{ binary: false, matchingLines: 0, occurrences: 0, bytes: 0 }]) });
    await counting;
    await pool.close();
  });
});
