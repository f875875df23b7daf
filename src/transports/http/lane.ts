/**
 * Lane: the output of one HTTP session (or of all stateless requests) and
 * the gate in front of its request bodies. While its unsent output is over
 * OUTPUT_HIGH_WATER, or its requests waiting to start hold over
 * QUEUED_REQUEST_BYTES, the next POST body is not read — the HTTP form of
 * stdio's paused stdin (SPEC §13 backpressure, per session by §17).
 */
import { OUTPUT_HIGH_WATER } from "../wire-limits.js";
import type { Exchange } from "./exchange.js";

/** The open responses of a session and who waits for their output to drain. */
export class Lane {
  /** Responses still open. */
  readonly exchanges = new Set<Exchange>();
  private readonly listeners = new Set<() => void>();
  private readonly gates = new Set<() => boolean>();
  private waiters: (() => void)[] = [];
  private scheduled = false;

  constructor(private readonly highWater = OUTPUT_HIGH_WATER) {}

  /** Bytes handed to this lane's responses that the clients have not taken. */
  unsent(): number {
    let total = 0;
    for (const exchange of this.exchanges) total += exchange.held;
    return total;
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

  /** True while a request body may be read. */
  get open(): boolean {
    if (this.unsent() >= this.highWater) return false;
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
    if (this.scheduled) return;
    this.scheduled = true;
    queueMicrotask(() => {
      this.scheduled = false;
      for (const listener of this.listeners) listener();
      while (this.waiters.length > 0 && this.open) this.waiters.shift()?.();
    });
  }

  /** Lets every waiting body through (the server is closing them anyway). */
  release(): void {
    for (const resolve of this.waiters.splice(0)) resolve();
  }
}
