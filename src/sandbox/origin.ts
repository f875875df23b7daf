/**
 * What a new version of a file was made from (rewrite.ts, append.ts; SPEC §12): which of its stretches
 * are copies of the old file's bytes, and a digest of the old bytes it did not copy. After the swap, a
 * writer that touched the old file is told apart (a pure append, or a change in place) by comparing
 * the old file with the new one stretch by stretch, hashing only what was not copied, so a large edit
 * no longer hashes every byte it reads: the few replaced ranges are hashed, the rest is compared only
 * when a late writer is seen, which is rare.
 */
import { createHash, type Hash } from "node:crypto";
import type { BigIntStats } from "node:fs";
import fs, { type FileHandle } from "node:fs/promises";
import { readAt } from "../kernel/read-at.js";
import { READ_FLAGS } from "./flags.js";
import { sameFile } from "./identity.js";

const CHUNK = 1024 * 1024;

/** Hashes bytes [from, to) of `handle` in chunks; false when the file ends before `to`. */
async function hashRange(hash: Hash, handle: FileHandle, from: number, to: number): Promise<boolean> {
  for (let at = from; at < to; ) {
    const chunk = await readAt(handle, at, Math.min(CHUNK, to - at));
    if (chunk.length === 0) return false;
    hash.update(chunk);
    at += chunk.length;
  }
  return true;
}

/** Output bytes [at, at + length) are the old file's bytes [from, from + length). */
interface Copied {
  at: number;
  from: number;
  length: number;
}

/** The stretches of a new version copied from the old file, and the digest of the old bytes between them. */
export class Origin {
  private readonly copies: Copied[] = [];
  private gapDigest: string | undefined;

  /** Records that output bytes [at, at + length) are a copy of the old file's bytes from `from`. */
  copied(at: number, from: number, length: number): void {
    if (length <= 0) return;
    const last = this.copies[this.copies.length - 1];
    // Adjacent pieces (a copy made in several reads) are one stretch.
    if (last !== undefined && last.at + last.length === at && last.from + last.length === from) last.length += length;
    else this.copies.push({ at, from, length });
  }

  /**
   * Hashes the old bytes [0, size) no copy covers, from `old`; called once the new version is written, before the swap.
   * Bytes not copied were read by the engine anyway: a replaced range is short, an engine that copies nothing pays one read.
   */
  async seal(old: FileHandle, size: number): Promise<void> {
    this.copies.sort((a, b) => a.from - b.from);
    const hash = createHash("sha256");
    await this.eachGap(size, async (from, to) => {
      await hashRange(hash, old, from, to);
    });
    this.gapDigest = hash.digest("hex");
  }

  /**
   * Whether the old file's first `size` bytes are still those the new version was made from: each copied stretch
   * equal to the new file's (read through `at`, which must still hold `written`), the rest to the digest taken at `seal`.
   */
  async unchanged(old: FileHandle, size: number, at: string, written: BigIntStats): Promise<boolean> {
    if (this.gapDigest === undefined) throw new Error("Origin.unchanged before seal");
    const now = await fs.open(at, READ_FLAGS);
    try {
      if (!sameFile(await now.stat({ bigint: true }), written)) return false;
      for (const c of this.copies) {
        const end = Math.min(c.from + c.length, size);
        for (let from = c.from; from < end; ) {
          const length = Math.min(CHUNK, end - from);
          const [was, is] = await Promise.all([readAt(old, from, length), readAt(now, c.at + from - c.from, length)]);
          if (was.length !== length || !was.equals(is)) return false;
          from += length;
        }
      }
      const hash = createHash("sha256");
      let whole = true;
      await this.eachGap(size, async (from, to) => {
        whole &&= await hashRange(hash, old, from, to);
      });
      return whole && hash.digest("hex") === this.gapDigest;
    } finally {
      await now.close();
    }
  }

  // Calls `visit` for each range of [0, size) that no copy covers, in order (copies sorted by `from`).
  private async eachGap(size: number, visit: (from: number, to: number) => Promise<void>): Promise<void> {
    let covered = 0;
    for (const c of this.copies) {
      if (c.from > covered) await visit(covered, Math.min(c.from, size));
      covered = Math.max(covered, c.from + c.length);
      if (covered >= size) return;
    }
    if (covered < size) await visit(covered, size);
  }
}
