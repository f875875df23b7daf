/**
 * Upstream-compatible headFile/tailFile (SPEC §7): same fs/promises call
 * pattern as upstream, but multi-byte characters split across chunks decode
 * correctly.
 */
import fs from "fs/promises";

const CHUNK_SIZE = 1024;
const LF = 0x0a;

/** The first `numLines` lines of the file (split on "\n"), joined with "\n". */
export async function headFile(filePath: string, numLines: number): Promise<string> {
  const handle = await fs.open(filePath, "r");
  try {
    const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
    const chunk = Buffer.alloc(CHUNK_SIZE);
    const lines: string[] = [];
    let pending = "";
    let position = 0;
    while (lines.length < numLines) {
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, position);
      if (bytesRead === 0) break;
      position += bytesRead;
      pending += decoder.decode(chunk.subarray(0, bytesRead), { stream: true });
      const cut = pending.lastIndexOf("\n");
      if (cut === -1) continue;
      for (const line of pending.slice(0, cut).split("\n")) {
        lines.push(line);
        if (lines.length >= numLines) break;
      }
      pending = pending.slice(cut + 1);
    }
    // At end of file a truncated sequence still becomes U+FFFD, as in readFile.
    if (lines.length < numLines) pending += decoder.decode();
    if (pending.length > 0 && lines.length < numLines) lines.push(pending);
    return lines.join("\n");
  } finally {
    await handle.close();
  }
}

/** The last `numLines` lines of the file with CRLF normalized, joined with "\n"; '' for an empty file. */
export async function tailFile(filePath: string, numLines: number): Promise<string> {
  const stats = await fs.stat(filePath);
  if (stats.size === 0) return "";
  const handle = await fs.open(filePath, "r");
  try {
    const chunk = Buffer.alloc(CHUNK_SIZE);
    const parts: Buffer[] = [];
    let position = stats.size;
    let newlines = 0;
    // Bytes are collected and decoded once at the end, so a character split
    // across two chunks is not turned into replacement characters.
    while (position > 0 && newlines < numLines) {
      const size = Math.min(CHUNK_SIZE, position);
      position -= size;
      const { bytesRead } = await handle.read(chunk, 0, size, position);
      if (!bytesRead) break;
      const piece = Buffer.from(chunk.subarray(0, bytesRead));
      let start = 0;
      for (let i = piece.length - 1; i >= 0; i--) {
        if (piece[i] === LF && ++newlines === numLines) {
          start = i + 1;
          break;
        }
      }
      parts.unshift(piece.subarray(start));
    }
    const text = new TextDecoder("utf-8", { ignoreBOM: true }).decode(Buffer.concat(parts));
    return text.replace(/\r\n/g, "\n");
  } finally {
    await handle.close();
  }
}
