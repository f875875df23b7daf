/**
 * The bench process's own baseline: one plain streaming UTF-8 decode of a
 * file, the cost a single full pass in the server cannot beat.
 */
import { createHash } from "node:crypto";
import fs from "node:fs/promises";

const CHUNK = 256 * 1024;

/** Decodes `file` once in chunks; returns the character count, the byte SHA-256 and the time in ms. */
export async function decodeOnce(file, { hash = false } = {}) {
  const started = performance.now();
  const handle = await fs.open(file, "r");
  const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
  const buffer = Buffer.allocUnsafe(CHUNK);
  const sha = hash ? createHash("sha256") : undefined;
  let chars = 0;
  try {
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, CHUNK, null);
      if (bytesRead === 0) break;
      const chunk = buffer.subarray(0, bytesRead);
      sha?.update(chunk);
      chars += decoder.decode(chunk, { stream: true }).length;
    }
    chars += decoder.decode().length;
  } finally {
    await handle.close();
  }
  return { chars, sha256: sha?.digest("hex"), ms: performance.now() - started };
}
