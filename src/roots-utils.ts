/**
 * Turns MCP roots (SPEC §2 Roots, §7, §9) into allowed directories: file URIs
 * or plain paths, `~` expanded, symlinks resolved, non-directories skipped.
 */
import fs from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Root } from "@modelcontextprotocol/sdk/types.js";
import { expandHome, normalizePath } from "./path-utils.js";

interface ParsedRoot {
  resolved: string;
  original: string;
}

function uriToPath(uri: string): string {
  if (!uri.startsWith("file://")) return uri;
  // Decode with the rules of the platform we serve, which tests may fake.
  return fileURLToPath(uri, { windows: process.platform === "win32" });
}

async function parseRoot(uri: string): Promise<ParsedRoot | undefined> {
  try {
    const flavour = process.platform === "win32" ? path.win32 : path.posix;
    const absolute = flavour.resolve(expandHome(uriToPath(uri)));
    const real = await fs.realpath(absolute);
    return { resolved: normalizePath(real), original: normalizePath(absolute) };
  } catch {
    return undefined;
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Resolves each root to an existing directory, returning its real path and also its
 * as-given normalized path when a symlink makes them differ; skips the rest with a line on stderr.
 */
export async function getValidRootDirectories(requestedRoots: readonly Root[]): Promise<string[]> {
  const valid: string[] = [];
  const add = (dir: string): void => {
    if (!valid.includes(dir)) valid.push(dir);
  };

  for (const root of requestedRoots) {
    const parsed = await parseRoot(root.uri);
    if (parsed === undefined) {
      console.error(`Skipping invalid path or inaccessible: ${root.uri}`);
      continue;
    }
    try {
      const stats = await fs.stat(parsed.resolved);
      if (!stats.isDirectory()) {
        console.error(`Skipping non-directory root: ${parsed.resolved}`);
        continue;
      }
      add(parsed.resolved);
      // Clients keep using the symlinked spelling, so it must pass the lexical check too.
      if (parsed.original !== parsed.resolved) add(parsed.original);
    } catch (error) {
      console.error(`Skipping invalid directory: ${parsed.resolved} due to error: ${describe(error)}`);
    }
  }
  return valid;
}
