/**
 * What every tool handler receives and returns. Handlers keep upstream's
 * behaviour; the bounding layer (bounded.ts) is applied around them by server.ts.
 */
import type { ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";
import type { z } from "zod";
import { TextSink, type ToolOutput } from "../bounded.js";
import type { Limits } from "../config.js";
import type { CheckpointCache, ReadOptions } from "../paged-read.js";

/** Per-call context: limits, the allowed directories at call time, cancellation and progress. */
export interface ToolContext {
  readonly limits: Limits;
  readonly allowedDirs: readonly string[];
  readonly cache: CheckpointCache;
  readonly signal: AbortSignal;
  /** Reports progress when the request carried a progressToken; otherwise does nothing. */
  progress(done: number, total?: number): void;
}

/** One tool: its public definition plus a handler that returns unbounded output. */
export interface ToolDefinition<Shape extends z.ZodRawShape = z.ZodRawShape> {
  readonly name: string;
  readonly title: string;
  /** Built from the limits so the model reads the real cap and media limit. */
  readonly description: (limits: Limits) => string;
  readonly input: Shape;
  readonly annotations: ToolAnnotations;
  /** How to narrow the request when its result is cut (SPEC §3.1). */
  readonly advice: string;
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

/** Walk options for the walkers, wired to the call's signal and progress. */
export function walkOptions(ctx: ToolContext): { allowedDirs: readonly string[]; signal: AbortSignal; onProgress: (n: number) => void } {
  return { allowedDirs: ctx.allowedDirs, signal: ctx.signal, onProgress: (n) => ctx.progress(n) };
}

/** Runs `fill` on a fresh sink of the call's cap and hands the sink to the bounding layer. */
export async function streamed(ctx: ToolContext, fill: (sink: TextSink) => Promise<void>): Promise<ToolOutput> {
  const sink = new TextSink(ctx.limits.maxResultChars);
  await fill(sink);
  return { sink };
}
