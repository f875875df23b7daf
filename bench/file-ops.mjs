/**
 * The copy_file, delete_file and append_file rows (SPEC §15, §18): the big file
 * copied by the server against `cp` of the same file in the same run (time and
 * peak RSS of both), the 100,000-entry tree copied and deleted against `cp -r`
 * and `rm -r`, and what one append costs on the big file (a kernel copy of it).
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { timeCommand } from "./commands.mjs";
import { median, repeat, withServer } from "./server.mjs";

const TIME = "/usr/bin/time";

/** Runs `cmd args` and resolves with its wall time and, where GNU time is installed, its peak RSS in MiB. */
function timedWithRss(cmd, args) {
  if (!fs.existsSync(TIME)) return timeCommand(cmd, args).then(({ ms }) => ({ ms, rssMb: undefined }));
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(TIME, ["-f", "%M", cmd, ...args], { stdio: ["ignore", "ignore", "pipe"] });
    let err = "";
    child.stderr.on("data", (c) => (err += c.toString()));
    child.on("error", reject);
    child.on("close", (code) => {
      const ms = performance.now() - started;
      if (code !== 0) return reject(new Error(`${cmd} ${args.join(" ")} exited with ${code}: ${err}`));
      const kb = Number(err.trim().split("\n").pop());
      resolve({ ms, rssMb: Number.isFinite(kb) ? kb / 1024 : undefined });
    });
  });
}

const rm = (p) => fs.rmSync(p, { recursive: true, force: true });

/** Per run: `cp` of the big file, then copy_file of it; each copy checked for size and removed. */
export async function bigCopyScenario(fx, runs) {
  const viaCp = path.join(fx.root, "copy-by-cp.txt");
  const viaServer = path.join(fx.root, "copy-by-server.txt");
  const size = fs.statSync(fx.text).size;
  try {
    const { value, rssMb } = await withServer(fx.root, [], (s) =>
      repeat(runs, async () => {
        const cp = await timedWithRss("cp", [fx.text, viaCp]);
        rm(viaCp);
        const copy = await s.call("copy_file", { source: fx.text, destination: viaServer });
        const ok = fs.statSync(viaServer).size === size;
        rm(viaServer);
        return { cp, ms: copy.ms, chars: copy.text.length, ok };
      }),
    );
    const cpMs = median(value.map((v) => v.cp.ms));
    const ms = median(value.map((v) => v.ms));
    const cpRss = value[0].cp.rssMb;
    return [
      { name: `cp big file (peak RSS ${cpRss === undefined ? "?" : cpRss.toFixed(1)} MiB)`, ms: cpMs, chars: undefined },
      {
        name: `copy_file big file${value.every((v) => v.ok) ? "" : " (SIZE DIFFERS)"}`,
        ms,
        chars: value[0].chars,
        rssMb,
        ratio: { value: ms / cpMs, info: true, label: "vs cp" },
        ok: value.every((v) => v.ok),
      },
    ];
  } finally {
    rm(viaCp);
    rm(viaServer);
  }
}

/** One append_file of a line to a copy of the big file: the copy-then-swap's price. */
export async function bigAppendScenario(fx, runs) {
  const target = path.join(fx.root, "append-target.txt");
  const size = fs.statSync(fx.text).size;
  try {
    fs.copyFileSync(fx.text, target);
    const { value, rssMb } = await withServer(fx.root, [], (s) =>
      repeat(runs, () => s.call("append_file", { path: target, content: "one more line\n" })),
    );
    const ok = fs.statSync(target).size === size + runs * 14;
    return [
      {
        name: `append_file one line to the big file (a kernel copy of it)${ok ? "" : " (SIZE WRONG)"}`,
        ms: median(value.map((v) => v.ms)),
        chars: value[0].text.length,
        rssMb,
        ok,
      },
    ];
  } finally {
    rm(target);
  }
}

/** Per run: `cp -r` and copy_file of the tree, then `rm -r` of the one and delete_file of the other. */
export async function treeCopyDeleteScenario(fx, runs, entries) {
  const viaCp = path.join(fx.root, "tree-by-cp");
  const viaServer = path.join(fx.root, "tree-by-server");
  try {
    const { value, rssMb } = await withServer(fx.root, [], (s) =>
      repeat(runs, async () => {
        const cp = await timeCommand("cp", ["-r", fx.tree, viaCp]);
        const copy = await s.call("copy_file", { source: fx.tree, destination: viaServer, recursive: true });
        const rmr = await timeCommand("rm", ["-r", viaCp]);
        const del = await s.call("delete_file", { path: viaServer, recursive: true });
        return { cp: cp.ms, copy, rm: rmr.ms, del };
      }),
    );
    const m = (f) => median(value.map(f));
    const label = `(${String(entries).replace(/\B(?=(\d{3})+(?!\d))/g, ",")} entries)`;
    return [
      { name: `cp -r tree ${label}`, ms: m((v) => v.cp), chars: undefined },
      {
        name: "copy_file recursive tree",
        ms: m((v) => v.copy.ms),
        chars: value[0].copy.text.length,
        rssMb,
        ratio: { value: m((v) => v.copy.ms) / m((v) => v.cp), info: true, label: "vs cp -r" },
      },
      { name: `rm -r tree ${label}`, ms: m((v) => v.rm), chars: undefined },
      {
        name: "delete_file recursive tree",
        ms: m((v) => v.del.ms),
        chars: value[0].del.text.length,
        ratio: { value: m((v) => v.del.ms) / m((v) => v.rm), info: true, label: "vs rm -r" },
      },
    ];
  } finally {
    rm(viaCp);
    rm(viaServer);
  }
}
