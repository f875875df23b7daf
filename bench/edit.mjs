/**
 * The edit_file rows (SPEC §12 "Any size", §23): two exact edits of a copy of the big file against
 * `cp` of the same file (target ≤ 2.5), a replaceAll against `sed -i` (target ≤ 1.2), each reference
 * timed in the same run, with the server's peak RSS; and 200 whitespace-tolerant edits of a 6 MB file (dryRun).
 */
import fs from "node:fs";
import path from "node:path";
import { timeCommand } from "./commands.mjs";
import { median, repeat, withServer } from "./server.mjs";

/** The first line of at least 40 bytes starting after `from`, without its terminator, and its byte position. */
function lineAfter(fd, from) {
  const buf = Buffer.alloc(64 * 1024);
  const n = fs.readSync(fd, buf, 0, buf.length, from);
  let start = buf.indexOf(0x0a, 0) + 1;
  while (start > 0 && start < n) {
    const end = buf.indexOf(0x0a, start);
    if (end < 0) break;
    const stop = buf[end - 1] === 0x0d ? end - 1 : end;
    if (stop - start >= 40) return { text: buf.toString("utf8", start, stop), at: from + start };
    start = end + 1;
  }
  throw new Error(`no line of 40 bytes or more within 64 KiB after byte ${from}`);
}

/** Whether `file` holds `text` (UTF-8) at byte `at`. */
function holds(file, at, text) {
  const want = Buffer.from(text, "utf8");
  const got = Buffer.alloc(want.length);
  const fd = fs.openSync(file, "r");
  try {
    fs.readSync(fd, got, 0, got.length, at);
  } finally {
    fs.closeSync(fd);
  }
  return got.equals(want);
}

/**
 * Per run: `cp` the big file (timed: the reference), then one edit_file call
 * with an exact edit near the middle and one near the end of the copy. Checks
 * each replacement landed where its line was.
 */
export async function bigEditScenario(fx, runs) {
  const copy = path.join(fx.root, "edit-copy.txt");
  const size = fs.statSync(fx.text).size;
  const fd = fs.openSync(fx.text, "r");
  let mid;
  let end;
  try {
    mid = lineAfter(fd, Math.floor(size / 2));
    end = lineAfter(fd, size - 1024 * 1024);
  } finally {
    fs.closeSync(fd);
  }
  const edits = [
    { oldText: mid.text, newText: `${mid.text} [edited near the middle]` },
    { oldText: end.text, newText: `${end.text} [edited near the end]` },
  ];
  const shift = Buffer.byteLength(edits[0].newText) - Buffer.byteLength(edits[0].oldText);
  try {
    const { value, rssMb } = await withServer(fx.root, [], (s) =>
      repeat(runs, async () => {
        const cp = await timeCommand("cp", [fx.text, copy]);
        const edit = await s.call("edit_file", { path: copy, edits });
        const landed = holds(copy, mid.at, edits[0].newText) && holds(copy, end.at + shift, edits[1].newText);
        return { cpMs: cp.ms, ms: edit.ms, chars: edit.text.length, landed };
      }),
    );
    const cpMs = median(value.map((v) => v.cpMs));
    const ms = median(value.map((v) => v.ms));
    const ok = value.every((v) => v.landed);
    return [
      { name: "cp big file (same file system)", ms: cpMs, chars: undefined },
      {
        name: `edit_file big file copy, 2 exact edits (middle, end)${ok ? "" : " (EDIT MISPLACED)"}`,
        ms,
        chars: value[0].chars,
        rssMb,
        ratio: { value: ms / cpMs, max: 2.5, label: "vs cp" },
        ok,
      },
    ];
  } finally {
    fs.rmSync(copy, { force: true });
  }
}

const lineOf = (i) => `${i % 4 === 0 ? "    " : ""}line ${i} of the generated file, some words to fill it up\n`;

/** A 6 MB file of numbered lines, every fourth indented; written once into the fixture directory. */
function sixMegabytes(root) {
  const file = path.join(root, "edit-tolerant.txt");
  const bytes = 6 * 1000 * 1000;
  const lines = [];
  let written = 0;
  for (let i = 0; written < bytes; i++) {
    lines.push(lineOf(i));
    written += lines[i].length;
  }
  if (!fs.existsSync(file) || fs.statSync(file).size !== written) fs.writeFileSync(file, lines.join(""));
  return { file, count: lines.length };
}

/** 200 edits spread over a 6 MB file whose indentation differs from the file's, so only the tolerant match applies. */
export async function tolerantEditScenario(fx, runs) {
  const { file, count } = sixMegabytes(fx.root);
  const edits = Array.from({ length: 200 }, (_, k) => {
    const i = Math.floor(((k + 0.5) * count) / 200);
    return { oldText: `  ${lineOf(i).trim()}\n  ${lineOf(i + 1).trim()}`, newText: `  changed ${k}` };
  });
  const { value, rssMb } = await withServer(fx.root, [], (s) => repeat(runs, () => s.call("edit_file", { path: file, edits, dryRun: true })));
  // The call fails when an edit finds no match; the (capped) diff must open with the first one (re-indented).
  const ok = value.every((v) => /^\+\s*changed 0$/m.test(v.text));
  return [
    {
      name: `edit_file 200 whitespace-tolerant edits, 6 MB, dryRun${ok ? "" : " (DIFF MISSING)"}`,
      ms: median(value.map((v) => v.ms)),
      chars: value[0].text.length,
      rssMb,
      ok,
    },
  ];
}

/** Occurrences of `needle` in `file`, read in 16 MiB pieces (disjoint, left to right, as replaceAll and sed take them). */
function countIn(file, needle) {
  const fd = fs.openSync(file, "r");
  const buf = Buffer.alloc(16 * 1024 * 1024 + needle.length);
  let count = 0;
  let carry = 0;
  try {
    for (let pos = 0; ; ) {
      const n = fs.readSync(fd, buf, carry, buf.length - carry, pos);
      if (n === 0) break;
      pos += n;
      const end = carry + n;
      let at = buf.indexOf(needle, 0);
      let next = 0;
      while (at !== -1 && at + needle.length <= end) {
        count++;
        next = at + needle.length;
        at = buf.indexOf(needle, next);
      }
      // Keep the bytes an occurrence cut at the piece's end may start in.
      const keepFrom = Math.max(next, end - needle.length + 1);
      buf.copy(buf, 0, keepFrom, end);
      carry = end - keepFrom;
    }
  } finally {
    fs.closeSync(fd);
  }
  return count;
}

/**
 * A phrase of two ASCII words from the middle of the big file (so sed needs no escaping) that occurs
 * between 100 and 50,000 times: each word alone occurs hundreds of thousands of times in this
 * fixture, past the 100,000 replacements a call makes.
 */
function phraseToReplace(file) {
  const size = fs.statSync(file).size;
  const fd = fs.openSync(file, "r");
  try {
    for (let from = Math.floor(size / 2); from < size; from += 4096) {
      const words = lineAfter(fd, from).text.split(" ");
      for (let i = 0; i + 1 < words.length; i++) {
        const phrase = `${words[i]} ${words[i + 1]}`;
        if (!/^[a-z]{3,} [a-z]{3,}$/.test(phrase)) continue;
        const count = countIn(file, Buffer.from(` ${phrase} `));
        if (count >= 100 && count <= 50_000) return { phrase: ` ${phrase} `, count };
      }
    }
  } finally {
    fs.closeSync(fd);
  }
  throw new Error("no two-word phrase occurring 100 to 50,000 times found in the big file");
}

/**
 * Per run: `sed -i 's/<phrase>/<PHRASE>/g'` on one copy of the big file (timed: the reference), then one
 * edit_file call with replaceAll of the same phrase on another copy; the two results must be byte-identical.
 */
export async function replaceAllScenario(fx, runs) {
  const bySed = path.join(fx.root, "replace-all-sed.txt");
  const byServer = path.join(fx.root, "replace-all-server.txt");
  const { phrase, count } = phraseToReplace(fx.text);
  const replacement = phrase.toUpperCase().replace(/ (?=\S)/g, " _");
  try {
    const { value, rssMb } = await withServer(fx.root, [], (s) =>
      repeat(runs, async () => {
        fs.copyFileSync(fx.text, bySed);
        fs.copyFileSync(fx.text, byServer);
        const sed = await timeCommand("sed", ["-i", `s/${phrase}/${replacement}/g`, bySed]);
        const edit = await s.call("edit_file", { path: byServer, edits: [{ oldText: phrase, newText: replacement, replaceAll: true }] });
        const same =
          (await timeCommand("cmp", ["-s", bySed, byServer]).then(
            () => true,
            () => false,
          )) && edit.text.startsWith(`edits[0]: replaced ${count.toLocaleString("en-US")} occurrences`);
        return { sedMs: sed.ms, ms: edit.ms, chars: edit.text.length, same, text: edit.text };
      }),
    );
    const sedMs = median(value.map((v) => v.sedMs));
    const ms = median(value.map((v) => v.ms));
    const ok = value.every((v) => v.same);
    if (!ok) console.error(`[bench] replaceAll result: ${value[0].text.slice(0, 300)}`);
    return [
      { name: `sed -i 's/…/…/g' on a copy of the big file (${count.toLocaleString("en-US")} occurrences)`, ms: sedMs, chars: undefined },
      {
        name: `edit_file replaceAll on a copy of the big file${ok ? "" : " (DIFFERS FROM SED)"}`,
        ms,
        chars: value[0].chars,
        rssMb,
        ratio: { value: ms / sedMs, max: 1.2, label: "vs sed" },
        ok,
      },
    ];
  } finally {
    fs.rmSync(bySed, { force: true });
    fs.rmSync(byServer, { force: true });
  }
}
