/**
 * The benchmark scenarios (SPEC §6). Each runs on a fresh server process and
 * returns table rows: { name, ms, chars, rssMb?, ratio?: { value, max | info, label? }, ok? }.
 * Rows derived from another row's server carry no rssMb, so a miss shows once.
 */
import { createHash } from "node:crypto";
import { decodeOnce } from "./decode.mjs";
import { median, repeat, startServer, timeFind, withServer } from "./server.mjs";
import { group } from "./table.mjs";

// A first window of a file larger than COUNT_BUDGET_BYTES (64 MiB) gives its total as a lower bound: "of at least N
// (the total is not counted yet: …)".
const NOTICE =
  /\n\[Result truncated: showing characters [\d,]+-[\d,]+ of (at least )?([\d,]+)(?: \([^)]*\))?\. Call again with offset=(\d+) to continue\.\]$/;

/** Splits a paged-read result into its text and the notice's figures (none on the last window); `total` only when exact. */
function parseWindow(text) {
  const m = NOTICE.exec(text);
  if (!m) return { body: text, next: undefined, total: undefined, notice: false };
  const total = m[1] === undefined ? Number(m[2].replaceAll(",", "")) : undefined;
  return { body: text.slice(0, m.index), next: Number(m[3]), total, notice: true };
}

const medianOf = (calls) => median(calls.map((c) => c.ms));

/** Windows at offset 0 (cold, then warm) and at 90% of the big file (warm); target deep/0 ≤ 2. */
export async function pagingScenario(fx, runs) {
  const path = fx.text;
  const { value, rssMb } = await withServer(fx.root, [], async (s) => {
    const cold = await s.call("read_text_file", { path, offset: 0 });
    const first = parseWindow(cold.text);
    if (!first.notice) throw new Error("the first window of the big file has no notice");
    // Past 64 MiB a first window does not count the whole file: the bench's own decode gives the total then.
    const total = first.total ?? (await decodeOnce(path)).chars;
    const warm0 = await repeat(runs, () => s.call("read_text_file", { path, offset: 0 }));
    const deepOffset = Math.floor(total * 0.9);
    const deep = await repeat(runs, () => s.call("read_text_file", { path, offset: deepOffset }));
    return { cold, warm0, deep, total };
  });
  const w0 = medianOf(value.warm0);
  const d = medianOf(value.deep);
  return [
    { name: "read_text_file offset=0 (cold, builds cache)", ms: value.cold.ms, chars: value.cold.text.length, rssMb },
    { name: "read_text_file offset=0 (warm)", ms: w0, chars: value.warm0[0].text.length, rssMb },
    {
      name: "read_text_file offset=90% (warm), vs offset=0",
      ms: d,
      chars: value.deep[0].text.length,
      rssMb,
      ratio: { value: d / w0, max: 2 },
    },
  ];
}

// Warm calls at offset 0 whose median is the walk's expected cost of a call.
const WARM_CALLS = 21;

/**
 * Reads the whole big file by following the notices with a large cap, checks
 * the reassembled text, and compares the total with one plain decode plus the
 * per-call cost (linear), and late calls with early ones (offset-independent).
 */
export async function walkScenario(fx, runs, maxChars) {
  const path = fx.text;
  const decodes = await repeat(runs, () => decodeOnce(path));
  const decodeMs = median(decodes.map((d) => d.ms));
  const { sha256: fileSha } = await decodeOnce(path, { hash: true });
  const { value, rssMb } = await withServer(fx.root, ["--max-result-chars", String(maxChars)], async (s) => {
    const sha = createHash("sha256");
    const perCall = [];
    let offset = 0;
    let chars = 0;
    for (;;) {
      const { text, ms } = await s.call("read_text_file", { path, offset });
      perCall.push(ms);
      const { body, next } = parseWindow(text);
      sha.update(body, "utf8");
      chars += body.length;
      if (next === undefined) break;
      if (next <= offset) throw new Error(`the walk made no progress at offset=${offset}`);
      offset = next;
    }
    // The expected total multiplies this median by every call of the walk (12,521 in the full bench): from three calls it
    // moved the ratio between 1.2 and 1.6 from run to run with the walk's own time unchanged, so it takes more.
    const warm = await repeat(Math.max(runs, WARM_CALLS), () => s.call("read_text_file", { path, offset: 0 }));
    return { perCall, chars, exact: sha.digest("hex") === fileSha, callMs: medianOf(warm) };
  });
  const { perCall, chars, exact, callMs } = value;
  const totalMs = perCall.reduce((a, b) => a + b, 0);
  const calls = perCall.length;
  // Call 0 is the cold pass; the last is a short tail window.
  const tenth = Math.max(1, Math.floor(calls / 10));
  const early = median(perCall.slice(1, 1 + tenth));
  const late = median(perCall.slice(Math.max(1, calls - 1 - tenth), calls - 1));
  const expected = decodeMs + calls * callMs;
  return [
    { name: "plain streaming decode of big file (bench process)", ms: decodeMs, chars: decodes[0].chars },
    {
      name: `walk big file by notices: ${calls} calls${exact ? "" : " (TEXT MISMATCH)"}`,
      ms: totalMs,
      chars,
      rssMb,
      ratio: { value: totalMs / expected, max: 1.5, label: "vs decode+calls×call" },
      ok: exact && chars === decodes[0].chars,
    },
    {
      name: "walk: per-call ms, last 10% / first 10%",
      ms: late,
      chars: undefined,
      ratio: { value: late / early, max: 2 },
    },
    { name: "walk: total / one plain decode", ms: totalMs, chars, ratio: { value: totalMs / decodeMs, info: true } },
  ];
}

/** A tool called `runs` times on one fresh server; one row with the median. */
export async function simpleScenario(fx, name, tool, args, runs) {
  const { value, rssMb } = await withServer(fx.root, [], (s) => repeat(runs, () => s.call(tool, args)));
  return [{ name, ms: medianOf(value), chars: value[0].text.length, rssMb }];
}

/** The first call (cold) and the median of the rest (warm) on one fresh server. */
export async function coldWarmScenario(fx, name, tool, args, runs) {
  const { value, rssMb } = await withServer(fx.root, [], (s) => repeat(runs + 1, () => s.call(tool, args)));
  const [cold, ...warm] = value;
  return [
    { name: `${name} (cold)`, ms: cold.ms, chars: cold.text.length, rssMb },
    { name: `${name} (warm)`, ms: medianOf(warm), chars: warm[0].text.length, rssMb },
  ];
}

/**
 * Walking tools over the tree, each on a fresh server of its own, compared with `find` on the same tree; target ≤ 1.5
 * (SPEC §23). After one untimed run of each, the runs alternate (find, then each tool once, `runs` rounds): run in blocks,
 * a slow minute of this shared machine fell on one side only and moved a ratio by 0.2-0.3 from pass to pass.
 */
export async function walksVsFindScenario(fx, walks, runs) {
  const servers = [];
  try {
    for (let i = 0; i < walks.length; i++) servers.push(await startServer(fx.root, []));
    await timeFind(fx.tree);
    for (const [i, w] of walks.entries()) await servers[i].call(w.tool, w.args);
    const findMs = [];
    const calls = walks.map(() => []);
    for (let r = 0; r < runs; r++) {
      findMs.push(await timeFind(fx.tree));
      for (const [i, w] of walks.entries()) calls[i].push(await servers[i].call(w.tool, w.args));
    }
    const find = median(findMs);
    return [
      { name: `find tree > /dev/null (${group(fx.treeEntries)} entries)`, ms: find, chars: undefined },
      ...walks.map((w, i) => ({
        name: w.name,
        ms: medianOf(calls[i]),
        chars: calls[i][0].text.length,
        rssMb: servers[i].peakRssMb(),
        ratio: { value: medianOf(calls[i]) / find, max: 1.5, label: "vs find" },
      })),
    ];
  } finally {
    for (const s of servers) await s.close();
  }
}
