/**
 * Per-file memory of where decoding can restart (SPEC §6, §11): char ↔ byte ↔
 * line checkpoints and the total length, so a window deep in a file seen
 * before decodes only from the nearest checkpoint, not from the start.
 */
import type { FileHandle } from "node:fs/promises";
import { checkInteger } from "../kernel/integers.js";
import { sameVersion, versionOf, type FileVersion } from "../sandbox/index.js";
import type { RestartPoint } from "./scan.js";

/** What identifies one version of a file's content (the sandbox's rule). */
export type FileIdentity = FileVersion;

/** The identity of the file behind `handle`, from fstat. */
export async function identify(handle: FileHandle): Promise<FileIdentity> {
  return versionOf(await handle.stat({ bigint: true }));
}

/** True when both identities describe the same file content. */
export const sameIdentity = (a: FileIdentity, b: FileIdentity): boolean => sameVersion(a, b);

/** Checkpoints of one file, appended in byte order by forward scans; at most `max` kept. */
export class FileCheckpoints {
  private readonly bytes: number[] = [0];
  private readonly chars: number[] = [0];
  private readonly lines: number[] = [0];
  /** Exact length of the decoded file, once a scan reached its end. */
  total: number | undefined;
  /** Number of "\n" in the file, once a scan reached its end. */
  totalLines: number | undefined;
  /** The restart point a window read last stopped near, so walking by `end` stays linear. */
  hint: RestartPoint | undefined;

  constructor(
    readonly id: FileIdentity,
    private spacing: number,
    private readonly max: number,
  ) {}

  /** Number of checkpoints held (including the one at 0). */
  get count(): number {
    return this.bytes.length;
  }

  /** Bytes between consecutive checkpoints; doubles whenever the list is thinned. */
  get spacingBytes(): number {
    return this.spacing;
  }

  /** Records `point` if it lies at least the spacing past the last checkpoint. */
  add(point: RestartPoint): void {
    const last = this.bytes[this.bytes.length - 1] ?? 0;
    if (point.byte < last + this.spacing) return;
    this.bytes.push(point.byte);
    this.chars.push(point.char);
    this.lines.push(point.line);
    if (this.bytes.length > this.max) this.thin();
  }

  /** The last restart point recorded: where a pass that counted only part of the file can count on from. */
  furthest(): RestartPoint {
    return this.at(this.bytes.length - 1);
  }

  /** The known restart point with the largest char ≤ `offset`. */
  nearest(offset: number): RestartPoint {
    let lo = 0;
    let hi = this.chars.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((this.chars[mid] ?? 0) <= offset) lo = mid;
      else hi = mid - 1;
    }
    const best = this.at(lo);
    const hint = this.hint;
    return hint !== undefined && hint.char <= offset && hint.char > best.char ? { ...hint } : best;
  }

  /** The known restart point with the most line feeds before it, fewer than `feeds` (the origin when `feeds` is 0). */
  beforeLine(feeds: number): RestartPoint {
    let lo = 0;
    let hi = this.lines.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((this.lines[mid] ?? 0) < feeds) lo = mid;
      else hi = mid - 1;
    }
    return this.at(lo);
  }

  private at(i: number): RestartPoint {
    return { byte: this.bytes[i] ?? 0, char: this.chars[i] ?? 0, line: this.lines[i] ?? 0 };
  }

  // Keeping every other checkpoint bounds memory for huge files at the cost
  // of twice the decoding before a deep window.
  private thin(): void {
    let kept = 0;
    for (let i = 0; i < this.bytes.length; i += 2) {
      this.bytes[kept] = this.bytes[i] ?? 0;
      this.chars[kept] = this.chars[i] ?? 0;
      this.lines[kept] = this.lines[i] ?? 0;
      kept++;
    }
    this.bytes.length = kept;
    this.chars.length = kept;
    this.lines.length = kept;
    this.spacing *= 2;
  }
}

/** Options of a `CheckpointCache`. */
export interface CheckpointCacheOptions {
  /** Files remembered; the least recently used is dropped. @default 1024 */
  maxFiles?: number;
  /** Checkpoints remembered across all files (24 bytes each); bounds the cache's memory. @default 131072 */
  maxTotalCheckpoints?: number;
  /** Checkpoints kept per file before they are thinned out. @default 4096 */
  maxCheckpointsPerFile?: number;
  /** Initial bytes between checkpoints. @default 262144 */
  checkpointEveryBytes?: number;
}

const option = (name: string, value: number | undefined, fallback: number, min: number): number =>
  checkInteger(`CheckpointCache option ${name}`, value ?? fallback, min);

/** A bounded LRU map from a file's real path to its checkpoints, validated by fstat identity. */
export class CheckpointCache {
  private readonly entries = new Map<string, FileCheckpoints>();
  private readonly passes = new Map<string, { id: FileIdentity; done: Promise<void> }>();
  /** Complete passes begun over files the cache did not know; concurrent cold reads share one. */
  coldPasses = 0;
  private readonly maxFiles: number;
  private readonly maxTotal: number;
  private readonly maxCheckpoints: number;
  private readonly spacing: number;

  /** @throws when an option is not a positive integer (maxCheckpointsPerFile at least 2) */
  constructor(opts: CheckpointCacheOptions = {}) {
    // Many files: read_multiple_files over a few hundred files should stay warm between calls.
    this.maxFiles = option("maxFiles", opts.maxFiles, 1024, 1);
    this.maxTotal = option("maxTotalCheckpoints", opts.maxTotalCheckpoints, 128 * 1024, 1);
    this.maxCheckpoints = option("maxCheckpointsPerFile", opts.maxCheckpointsPerFile, 4096, 2);
    this.spacing = option("checkpointEveryBytes", opts.checkpointEveryBytes, 256 * 1024, 1);
  }

  /** Forgets every file. */
  clear(): void {
    this.entries.clear();
  }

  /** Number of files remembered. */
  get size(): number {
    return this.entries.size;
  }

  /** The entry for `key` if it still matches `id` (complete, or partial: no `total` yet); a stale one is dropped. */
  get(key: string, id: FileIdentity): FileCheckpoints | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    this.entries.delete(key);
    if (!sameIdentity(entry.id, id)) return undefined;
    this.entries.set(key, entry);
    return entry;
  }

  /** A new empty entry for a file with identity `id`, not yet remembered. */
  create(id: FileIdentity): FileCheckpoints {
    return new FileCheckpoints(id, this.spacing, this.maxCheckpoints);
  }

  /** Remembers `entry` under `key`, evicting least recently used files beyond the file or checkpoint limits. */
  store(key: string, entry: FileCheckpoints): void {
    this.entries.delete(key);
    this.entries.set(key, entry);
    let total = 0;
    for (const e of this.entries.values()) total += e.count;
    while (this.entries.size > 1 && (this.entries.size > this.maxFiles || total > this.maxTotal)) {
      const oldest = this.entries.entries().next();
      if (oldest.done === true) break;
      total -= oldest.value[1].count;
      this.entries.delete(oldest.value[0]);
    }
  }

  /** Checkpoints held across all files. */
  get checkpointCount(): number {
    let total = 0;
    for (const e of this.entries.values()) total += e.count;
    return total;
  }

  /**
   * Claims the cold pass over `key` at `id`: a release to call once the pass
   * stored its entry (or failed), or the running pass to wait for instead.
   */
  claimPass(key: string, id: FileIdentity): { release: () => void } | { running: Promise<void> } {
    const running = this.passes.get(key);
    if (running !== undefined && sameIdentity(running.id, id)) return { running: running.done };
    let release = (): void => {};
    const done = new Promise<void>((resolve) => {
      release = () => {
        if (this.passes.get(key)?.done === done) this.passes.delete(key);
        resolve();
      };
    });
    this.passes.set(key, { id, done });
    this.coldPasses++;
    return { release };
  }

  /** Forgets `key`. */
  delete(key: string): void {
    this.entries.delete(key);
  }
}
