/**
 * What every tool handler receives and returns. Handlers keep upstream's
 * behaviour; the bounding layer (bounded.ts) runs them, lends them the call's
 * sink and window bound, and caps what they return.
 */
import type { ToolAnnotations } from "@modelcontextprotocol/server";
import type { z } from "zod";
import type { Bounds, Limits, ToolOutput } from "../kernel/bounded.js";
import type { ScanWorkers } from "../grep/index.js";
import type { CheckpointCache, MediaSlots, ReadOptions } from "../reading/index.js";
import type { FilePort, WalkPort } from "../sandbox/index.js";
import type { DescriptorBudget, WalkOptions } from "../walking/index.js";

/** The process resources the tools draw on, from the runtime (server/runtime.ts). */
export interface ToolRuntime {
  /** The checkpoint cache every reader of the process shares. */
  readonly cache: CheckpointCache;
  /** The descriptors every walk of the process shares. */
  readonly descriptors: DescriptorBudget;
  /** The scan workers kept idle between search calls. */
  readonly scanWorkers: ScanWorkers;
  /** How many media files are read into memory at once. */
  readonly media: MediaSlots;
  /** The main thread's heap, settled after each call and at a long walk's turns (server/heap-settle.ts). */
  readonly heap: { settle(): unknown };
}

/** Per-call context: limits, the call's sandbox and bounds, the runtime, cancellation and progress. */
export interface ToolContext {
  readonly limits: Limits;
  /** The allowed directories at call time, and every file operation confined to them: the tools' port. */
  readonly sandbox: FilePort;
  /** The same sandbox as the walkers reach it: the walkers' port, handed on by `walkOptions`. */
  readonly walks: WalkPort;
  /** The call's sink and window bound, created by the bounding layer. */
  readonly bounds: Bounds;
  readonly runtime: ToolRuntime;
  readonly signal: AbortSignal;
  /** Reports progress when the request carried a progressToken; otherwise does nothing. */
  progress(done: number, total?: number): void;
}

/** One tool: its public definition plus a handler whose output the bounding layer caps. */
export interface ToolDefinition<Shape extends z.ZodRawShape = z.ZodRawShape> {
  readonly name: string;
  readonly title: string;
  /** Built from the limits so the model reads the real cap and media limit. */
  readonly description: (limits: Limits) => string;
  readonly input: Shape;
  readonly annotations: ToolAnnotations;
  /** How to narrow the request when its result is cut (SPEC §3.1). */
  readonly advice: string;
  /**
   * Parameters this tool had in an earlier version and no longer takes, with why: a call that still
   * sends one (with a value other than false) is refused, rather than the key being dropped silently.
   */
  readonly retired?: Readonly<Record<string, string>>;
  handler(args: z.infer<z.ZodObject<Shape>>, ctx: ToolContext): Promise<ToolOutput>;
}

/** Keeps a definition's argument types for its handler, then erases them for the registry. */
export function defineTool<Shape extends z.ZodRawShape>(def: ToolDefinition<Shape>): ToolDefinition {
  return def as unknown as ToolDefinition;
}

/** Annotations of a tool that only reads (SPEC §4). */
export const READ_ONLY: ToolAnnotations = Object.freeze({ readOnlyHint: true, openWorldHint: false });

/** Read options for streaming readers, wired to the call's signal and progress. */
export function readOptions(ctx: ToolContext): ReadOptions {
  return { signal: ctx.signal, onProgress: (done, total) => ctx.progress(done, total) };
}

/** Walk options for the walkers, wired to the call's sandbox, signal and progress. */
export function walkOptions(ctx: ToolContext): WalkOptions {
  return {
    sandbox: ctx.walks,
    descriptors: ctx.runtime.descriptors,
    signal: ctx.signal,
    onProgress: (n) => ctx.progress(n),
    onTurn: () => void ctx.runtime.heap.settle(),
  };
}

/** Runs `fill` on the call's sink and tells the bounding layer to render it. */
export async function streamed(ctx: ToolContext, fill: (sink: Bounds["sink"]) => Promise<void>): Promise<ToolOutput> {
  await fill(ctx.bounds.sink);
  return { streamed: true };
}
