/**
 * read_media_file (SPEC §3.4): size checked on the open handle before any
 * byte is read, and counted again while reading, so a file that grows past
 * the limit is refused rather than returned.
 */
import type { FileHandle } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import type { CallToolResult } from "@modelcontextprotocol/server";
import { formatCount } from "../kernel/bounded.js";
import { escapeControls, type Shown } from "../kernel/escape.js";

const MIME_TYPES: Readonly<Record<string, string>> = {
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
  ".bmp": "image/bmp",
  ".svg": "image/svg+xml",
  ".mp3": "audio/mpeg",
  ".wav": "audio/wav",
  ".ogg": "audio/ogg",
  ".flac": "audio/flac",
};

/** MIME type by extension (case-insensitive); `application/octet-stream` when unknown. */
function mimeTypeFor(filePath: string): string {
  return MIME_TYPES[path.extname(filePath).toLowerCase()] ?? "application/octet-stream";
}

const CHUNK = 256 * 1024;

/** The refusal of a file over the media limit; `what` says how it is over. */
function tooLarge(path: Shown, what: string, maxBytes: number): Error {
  return new Error(`File too large for read_media_file: ${path} ${what}; the limit is ${formatCount(maxBytes)} bytes.`);
}

/**
 * Reads the opened file `realPath` as one media content block: `image`,
 * `audio`, or an embedded `resource` with a base64 blob. The caller closes `handle`.
 * @throws when the file is (or grows) over `maxBytes`
 */
export async function readMedia(
  handle: FileHandle,
  realPath: string,
  maxBytes: number,
  signal?: AbortSignal,
): Promise<CallToolResult["content"][number]> {
  const chunks: Buffer[] = [];
  const { size } = await handle.stat();
  if (size > maxBytes) {
    throw tooLarge(escapeControls(realPath), `is ${formatCount(size)} bytes`, maxBytes);
  }
  let total = 0;
  for (;;) {
    signal?.throwIfAborted();
    // Read one byte past the limit so growth beyond it is noticed.
    const buffer = Buffer.allocUnsafe(Math.min(CHUNK, maxBytes + 1 - total));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, total);
    if (bytesRead === 0) break;
    total += bytesRead;
    if (total > maxBytes) {
      throw tooLarge(escapeControls(realPath), `grew past ${formatCount(maxBytes)} bytes while being read`, maxBytes);
    }
    chunks.push(buffer.subarray(0, bytesRead));
  }
  const data = Buffer.concat(chunks).toString("base64");
  const mimeType = mimeTypeFor(realPath);
  const kind = mimeType.startsWith("image/") ? "image" : mimeType.startsWith("audio/") ? "audio" : undefined;
  // An image or audio block without data shows nothing and is no valid picture or sound to a model's client.
  if (kind !== undefined && total === 0) throw new Error(`Empty file: ${escapeControls(realPath)} is 0 bytes, so it holds no ${kind} to return.`);
  if (kind !== undefined) return { type: kind, data, mimeType };
  return { type: "resource", resource: { uri: pathToFileURL(realPath).href, mimeType, blob: data } };
}
