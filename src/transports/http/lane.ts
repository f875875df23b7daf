/**
 * Lane: the output of one HTTP session (or of all stateless requests) and
 * the gate in front of its request bodies. While its unsent output is over
 * OUTPUT_HIGH_WATER, or its requests waiting to start hold over
 * QUEUED_REQUEST_BYTES, the next POST body is not read — the HTTP form of
 * stdio's paused stdin (SPEC §13 backpressure, per session by §17). Across
 * lanes, HttpMemory counts what they all hold: past its bound a lane that has
 * not been read reads no further body either.
 */
import { OUTPUT_HIGH_WATER } from "../wire-limits.js";
import type { Exchange } from "./exchange.js";
import type { HttpMemory } from "./memory.js";

/** The open responses of a session and who waits for their output to drain. */
export class Lane {
  /** Responses still open. */
  readonly exchanges = new Set<Exchange>();
  private readonly listeners = new Set<() => void>();
  private readonly gates = new Set<() => boolean>();
  private waiters: (() => void)[] = [];
  private scheduled = false;
  private readonly untrack: () => void;

  /**
   * @param memory the server-wide account this lane counts in
   * @param shared true for a lane of unrelated clients (stateless or 2026-07-28 requests): one of them not
   *   reading says nothing about the others, so "not read" is judged per response
   */
  constructor(
    readonly memory: HttpMemory,
    readonly shared = false,
    private readonly highWater = OUTPUT_HIGH_WATER,
  ) {
    this.untrack = memory.track(this);
  }

  /** Bytes handed to this lane's responses that the clients have not taken. */
  unsent(): number {
    let total = 0;
    for (const exchange of this.exchanges) total += exchange.held;
    return total;
  }

  /** Request bodies waiting for the gate to open. */
  get waiting(): number {
    return this.waiters.length;
  }

  /** Largest unsent byte count of any one open response. */
  largestHeld(): number {
    let most = 0;
    for (const exchange of this.exchanges) most = Math.max(most, exchange.held);
    return most;
  }

  /** Calls `listener` (soon, once per burst) whenever output drained or a response ended. */
  onDrain(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Adds a condition that also closes the gate while it is true (a flow whose waiting requests are too many). */
  closeWhile(condition: () => boolean): () => void {
    this.gates.add(condition);
    return () => this.gates.delete(condition);
  }

  /** True when the client of `exchange` has not taken what it was sent (its session's output, or that response's). */
  lagging(exchange: Exchange | undefined): boolean {
    return this.shared ? (exchange?.held ?? 0) > 0 : this.unsent() > 0;
  }

  /** What a session's start gate compares with the high-water mark: its unsent bytes, or no room at all while it lags past the server's bound. */
  gateBytes(): number {
    const unsent = this.unsent();
    return !this.shared && unsent > 0 && this.memory.over ? Number.POSITIVE_INFINITY : unsent;
  }

  /** True while a request body may be read. */
  get open(): boolean {
    if (this.gateBytes() >= this.highWater) return false;
    for (const closed of this.gates) if (closed()) return false;
    return true;
  }

  /** Resolves when a request body may be read. */
  room(): Promise<void> {
    if (this.open) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Reports that output drained; listeners and waiting bodies are told in a microtask, coalesced. */
  drained(): void {
    this.recheck();
    this.memory.drained();
  }

  /** Tells listeners and waiting bodies to look again (in a microtask, coalesced). */
  recheck(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    queueMicrotask(() => {
      this.scheduled = false;
      for (const listener of this.listeners) listener();
      while (this.waiters.length > 0 && this.open) this.waiters.shift()?.();
    });
  }

  /** Lets every waiting body through (the server is closing them anyway) and stops counting this lane. */
  release(): void {
    for (const resolve of this.waiters.splice(0)) resolve();
    this.untrack();
  }
}
