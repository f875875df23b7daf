/**
 * Turns MCP roots (SPEC §2 Roots, §7, §9) into allowed directories: file URIs
 * or plain paths, `~` expanded, symlinks resolved, non-directories skipped.
 */
import fs from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Root } from "@modelcontextprotocol/server";
import { expandHome, normalizePath } from "./path-utils.js";

/** A directory argument or root resolved: its forms when usable, or why not. */
export type ResolvedDirectory =
  | { kind: "directory"; resolved: string; original: string }
  | { kind: "not-directory"; resolved: string }
  | { kind: "inaccessible"; reason: string };

function uriToPath(uri: string): string {
  if (!uri.startsWith("file://")) return uri;
  // Decode with the rules of the platform we serve, which tests may fake.
  return fileURLToPath(uri, { windows: process.platform === "win32" });
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Resolves a path or file URI (`~` expanded, made absolute, symlinks resolved) and says whether it
 * is a usable directory; `resolved` is the real path, `original` the normalized as-given form when
 * that names the same directory (else `resolved` again).
 */
export async function resolveDirectory(pathOrUri: string): Promise<ResolvedDirectory> {
  try {
    const flavour = process.platform === "win32" ? path.win32 : path.posix;
    const absolute = flavour.resolve(expandHome(uriToPath(pathOrUri)));
    const real = await fs.realpath(absolute);
    // normalizePath trims spaces and quotes, which is right for what a user typed but not for a
    // real path: `/x/dir ` must not turn into its sibling `/x/dir`.
    const resolved = process.platform === "win32" ? normalizePath(real) : real;
    const stats = await fs.stat(real);
    if (!stats.isDirectory()) return { kind: "not-directory", resolved };
    const original = normalizePath(absolute);
    const sameDirectory = original === resolved || (await fs.realpath(original).catch(() => undefined)) === real;
    return { kind: "directory", resolved, original: sameDirectory ? original : resolved };
  } catch (error) {
    return { kind: "inaccessible", reason: describe(error) };
  }
}

/**
 * Resolves each root to an existing directory, returning its real path and also its
 * as-given normalized path when a symlink makes them differ; skips the rest with a line on stderr.
 */
export async function getValidRootDirectories(requestedRoots: readonly Root[]): Promise<string[]> {
  const valid: string[] = [];
  for (const root of requestedRoots) {
    const dir = await resolveDirectory(root.uri);
    if (dir.kind === "inaccessible") console.error(`Skipping invalid path or inaccessible: ${root.uri} (${dir.reason})`);
    else if (dir.kind === "not-directory") console.error(`Skipping non-directory root: ${dir.resolved}`);
    // Clients keep using the symlinked spelling, so it must pass the lexical check too.
    else for (const form of [dir.resolved, dir.original]) if (!valid.includes(form)) valid.push(form);
  }
  return valid;
}
