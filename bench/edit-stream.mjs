#!/usr/bin/env node
/**
 * Streaming edit engine figures (issue 10): time and peak RSS of an edit of a large generated
 * file (default 200 MiB), and the time of 200 whitespace-tolerant edits on a 6 MB file (the
 * case that froze the server for 21.7 s). Also the longest event-loop stall during each run.
 * The same two cases through the server (edit_file over stdio, server peak RSS)
 * are rows of `npm run bench` (bench/edit.mjs); this script stays apart for the
 * engine alone and its event-loop stalls. Run after `npm run build`:
 *
 *   node bench/edit-stream.mjs [--mib 200] [--dir /tmp]
 *   node bench/edit-stream.mjs --only big|tolerant   (one case per process, for a clean peak RSS)
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { execFileSync } from "node:child_process";
import { streamEdit } from "../dist/editing/stream.js";
import { applyEdits, createUnifiedDiff, fenceDiff } from "../dist/editing/index.js";

const { values } = parseArgs({
  options: {
    mib: { type: "string", default: "200" },
    dir: { type: "string", default: os.tmpdir() },
    only: { type: "string" },
    generate: { type: "string" },
    bytes: { type: "string" },
  },
});

const lineOf = (i) => `${i % 4 === 0 ? "    " : ""}line ${i} of the generated file, some words to fill it up\n`;

async function generate(file, bytes) {
  const out = fs.createWriteStream(file);
  let written = 0;
  let parts = [];
  for (let i = 0; written < bytes; i++) {
    const line = lineOf(i);
    parts.push(line);
    written += line.length;
    if (parts.length === 4096) {
      if (!out.write(parts.join(""))) await new Promise((r) => out.once("drain", r));
      parts = [];
    }
  }
  out.write(parts.join(""));
  await new Promise((r) => out.end(r));
}

/** Generates in a child process, so this process's peak RSS is the edit's alone. */
function generateApart(file, bytes) {
  execFileSync(process.execPath, [new URL(import.meta.url).pathname, "--generate", file, "--bytes", String(bytes)], {
    stdio: "inherit",
  });
}

function fileSource(handle, size) {
  return {
    size,
    read: async (position, length) => {
      const buffer = Buffer.allocUnsafe(length);
      const { bytesRead } = await handle.read(buffer, 0, length, position);
      return buffer.subarray(0, bytesRead);
    },
  };
}

/** Runs `fn` while measuring the longest gap between 1 ms timer ticks. */
async function withStallMeter(fn) {
  let last = performance.now();
  let worst = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last);
    last = now;
  }, 1);
  try {
    const start = performance.now();
    const result = await fn();
    return { result, ms: performance.now() - start, worstStallMs: worst };
  } finally {
    clearInterval(timer);
  }
}

const mib = (n) => `${(n / 1024 / 1024).toFixed(1)} MiB`;

async function bigCase() {
  const size = Number(values.mib) * 1024 * 1024;
  const file = path.join(dir, "big.txt");
  generateApart(file, size);
  const actual = fs.statSync(file).size;
  const lines = [10, 1_000_000, 2_000_000, 2_500_000].filter((i) => lineOf(i).length * i < actual);
  const edits = lines.map((i) => ({ oldText: lineOf(i), newText: `edited line ${i}\nand one more\n` }));
  // One whitespace-tolerant edit too: the indentation of the old text differs from the file's.
  edits.push({ oldText: `${lineOf(12).trim()}\n${lineOf(13)}`, newText: "tolerant\n" });
  const handle = await fs.promises.open(file, "r");
  const out = await fs.promises.open(path.join(dir, "big.out"), "w");
  const before = process.memoryUsage().rss;
  const { result, ms, worstStallMs } = await withStallMeter(() =>
    streamEdit({ source: fileSource(handle, actual), edits, path: file, write: async (c) => void (await out.write(c)) }),
  );
  await handle.close();
  await out.close();
  const peak = process.resourceUsage().maxRSS * 1024;
  const outSize = fs.statSync(path.join(dir, "big.out")).size;
  console.log(
    `big edit: ${mib(actual)} file, ${edits.length} edits: ${(ms / 1000).toFixed(2)} s, peak RSS ${mib(peak)} ` +
      `(RSS before ${mib(before)}), longest event-loop stall ${worstStallMs.toFixed(1)} ms, output ${mib(outSize)}, ` +
      `diff ${result.diff.length} chars`,
  );
}

async function tolerantCase() {
  const file = path.join(dir, "six.txt");
  await generate(file, 6 * 1000 * 1000);
  const text = fs.readFileSync(file, "utf8");
  const count = text.split("\n").length - 1;
  // 200 edits spread over the file, each with the indentation changed so only the tolerant match applies.
  const edits = Array.from({ length: 200 }, (_, k) => {
    const i = Math.floor(((k + 0.5) * count) / 200);
    return { oldText: `  ${lineOf(i).trim()}\n  ${lineOf(i + 1).trim()}`, newText: `  changed ${k}` };
  });
  const handle = await fs.promises.open(file, "r");
  const { result, ms, worstStallMs } = await withStallMeter(() => streamEdit({ source: fileSource(handle, text.length), edits, path: file }));
  await handle.close();
  const refStart = performance.now();
  const modified = applyEdits(text, edits);
  const refMs = performance.now() - refStart;
  const same = fenceDiff(createUnifiedDiff(text, modified, file)) === result.diff;
  console.log(
    `200 tolerant edits, 6 MB, dryRun: ${(ms / 1000).toFixed(2)} s (longest event-loop stall ${worstStallMs.toFixed(1)} ms, ` +
      `diff ${result.diff.length} chars, ${same ? "equal to" : "DIFFERENT from"} the in-memory diff); ` +
      `in-memory applyEdits alone: ${(refMs / 1000).toFixed(2)} s, never yielding`,
  );
}

let dir = "";
if (values.generate !== undefined) {
  await generate(values.generate, Number(values.bytes));
} else {
  dir = fs.mkdtempSync(path.join(values.dir, "edit-stream-bench-"));
  try {
    if (values.only !== "tolerant") await bigCase();
    if (values.only !== "big") await tolerantCase();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
