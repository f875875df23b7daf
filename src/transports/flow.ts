/**
 * RequestFlow: when received requests may start (SPEC §13, §17). A request
 * starts only while fewer than `maxInFlight` are unanswered and the output
 * not yet taken by the client is under `outputHighWater`; the others wait in
 * order. Both transports use it: stdio stops reading stdin while the waiting
 * requests pass `queuedRequestBytes`; HTTP stops reading request bodies.
 * A light request (anything but a tool call, and list_allowed_directories)
 * has a bound of its own, `maxInFlight` light requests, and does not wait for
 * tool calls: its cost and its answer are small, and a ping must not queue
 * behind `maxInFlight` searches (issue 28 row 13). It waits for the output as
 * any request does: from a client that reads no answers, about 70,000
 * tools/list (14 KB each) held 2.2-2.4 GB, and the process then ended.
 */
import type { RequestId } from "@modelcontextprotocol/server";
import { MAX_IN_FLIGHT, OUTPUT_HIGH_WATER, QUEUED_REQUEST_BYTES } from "./wire-limits.js";

/** The bounds of one flow; each defaults to the constant of the same meaning in wire-limits.ts. */
export interface FlowBounds {
  readonly maxInFlight?: number;
  readonly outputHighWater?: number;
  readonly queuedRequestBytes?: number;
}

interface Waiting<T> {
  readonly item: T;
  readonly id: RequestId;
  readonly key: string;
  readonly bytes: number;
  readonly light: boolean;
}

/** True for a request whose work and answer are small whatever its arguments: anything but a tool call, and the call of list_allowed_directories. */
export function isLightRequest(message: { method: string; params?: Record<string, unknown> }): boolean {
  return message.method !== "tools/call" || message.params?.name === "list_allowed_directories";
}

/** A request id as a map key that keeps `1` and `"1"` apart. */
export function requestKey(id: RequestId): string {
  return `${typeof id}:${id}`;
}

/** Admits requests (whatever the transport keeps of one, `T`) in order, within the bounds; the transport reports answers, cancels and drained output. */
export class RequestFlow<T> {
  private readonly waiting: Waiting<T>[] = [];
  /** The light requests waiting: they start past the tool calls waiting, within a bound of their own. */
  private readonly waitingLight: Waiting<T>[] = [];
  /** The keys of both queues, to tell a request id in use at once. */
  private readonly waitingKeys = new Set<string>();
  private waitingBytes = 0;
  private readonly running = new Map<string, RequestId>();
  /** The light ones among `running`: they count against a bound of their own (`maxInFlight` too), not the tool calls'. */
  private readonly light = new Set<string>();
  private readonly maxInFlight: number;
  private readonly outputHighWater: number;
  private readonly queuedRequestBytes: number;
  private wasFull = false;
  private stopped = false;

  /**
   * @param start hands a request to the protocol
   * @param unsent bytes of output the client has not taken yet
   * @param onFull called when the waiting requests pass `queuedRequestBytes`, and again (false) when they fall under it
   */
  constructor(
    private readonly start: (item: T) => void,
    private readonly unsent: () => number,
    bounds: FlowBounds = {},
    private readonly onFull: (full: boolean) => void = () => undefined,
  ) {
    this.maxInFlight = bounds.maxInFlight ?? MAX_IN_FLIGHT;
    this.outputHighWater = bounds.outputHighWater ?? OUTPUT_HIGH_WATER;
    this.queuedRequestBytes = bounds.queuedRequestBytes ?? QUEUED_REQUEST_BYTES;
  }

  /** Requests started and not yet answered. */
  get inFlight(): number {
    return this.running.size;
  }

  /** Requests received and not yet started. */
  get queued(): number {
    return this.waiting.length + this.waitingLight.length;
  }

  /** True when the waiting requests hold more than `queuedRequestBytes`: stop reading input. */
  get full(): boolean {
    return this.waitingBytes > this.queuedRequestBytes;
  }

  /** The requests started and not yet answered. */
  runningIds(): RequestId[] {
    return [...this.running.values()];
  }

  /** True while `id` has started and is not answered. */
  isRunning(id: RequestId): boolean {
    return this.running.has(requestKey(id));
  }

  /**
   * True while a request `id` waits or runs. A second request with its id is not admitted: it would run beside
   * the first uncounted (the flow knows a request by its id), so a client reusing one id could start any number.
   */
  inUse(id: RequestId): boolean {
    const key = requestKey(id);
    return this.running.has(key) || this.waitingKeys.has(key);
  }

  /**
   * Queues the received request `id` of `bytes` bytes and starts what may start (a `light` one past the tool calls
   * waiting). False, with nothing done, when `id` is in use (inUse): the transport refuses the request.
   */
  admit(id: RequestId, item: T, bytes: number, light = false): boolean {
    if (this.stopped) return true;
    if (this.inUse(id)) return false;
    const key = requestKey(id);
    (light ? this.waitingLight : this.waiting).push({ item, id, key, bytes, light });
    this.waitingKeys.add(key);
    this.waitingBytes += bytes;
    this.pump();
    return true;
  }

  /** Records that `id` was answered; the next request may start. */
  answered(id: RequestId): void {
    this.light.delete(requestKey(id));
    if (this.running.delete(requestKey(id))) queueMicrotask(this.pump);
  }

  /** A cancelled request gets no answer: drops it if it is waiting, stops counting it if it runs; true if it was known. */
  forget(id: RequestId): boolean {
    const key = requestKey(id);
    const wasRunning = this.running.delete(key);
    this.light.delete(key);
    let wasWaiting = false;
    if (this.waitingKeys.delete(key)) {
      for (const queue of [this.waiting, this.waitingLight]) {
        const at = queue.findIndex((w) => w.key === key);
        if (at !== -1) this.waitingBytes -= queue.splice(at, 1)[0]?.bytes ?? 0;
      }
      wasWaiting = true;
    }
    if (wasRunning || wasWaiting) queueMicrotask(this.pump);
    return wasRunning || wasWaiting;
  }

  /** Forgets everything; nothing starts after this. */
  stop(): void {
    this.stopped = true;
    this.waiting.length = 0;
    this.waitingLight.length = 0;
    this.waitingKeys.clear();
    this.waitingBytes = 0;
    this.running.clear();
    this.light.clear();
  }

  /** Starts waiting requests while the bounds allow; call it too when output drained. */
  readonly pump = (): void => {
    if (this.stopped) return;
    while (this.unsent() < this.outputHighWater) {
      const lightRoom = this.light.size < this.maxInFlight && this.waitingLight.length > 0;
      const next = lightRoom ? this.waitingLight.shift() : this.running.size - this.light.size < this.maxInFlight ? this.waiting.shift() : undefined;
      if (next === undefined) break;
      this.waitingKeys.delete(next.key);
      this.waitingBytes -= next.bytes;
      this.running.set(next.key, next.id);
      if (next.light) this.light.add(next.key);
      this.start(next.item);
    }
    const full = this.full;
    if (full !== this.wasFull) {
      this.wasFull = full;
      this.onFull(full);
    }
  };
}
