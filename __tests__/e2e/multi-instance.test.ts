/**
 * SPEC §21, many instances: three built servers behind nginx (deploy/nginx-mcp.conf, on
 * loopback ports, every nginx path in a temp folder), clients of each protocol era this
 * build's client libraries speak, reading, searching and editing shared files while one
 * instance is killed with SIGKILL. The run is bench/multi-instance.mjs, spawned; this file
 * checks the shared files itself, against the counts the clients were answered.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { tempDir } from "../support/fixtures.js";

const RUN = fileURLToPath(new URL("../../bench/multi-instance.mjs", import.meta.url));
const NGINX = ["/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/bin/nginx"].find((p) => fs.existsSync(p));
const WRITERS = 4;
const OPS = 24; // a third of them edits: 8 per writer

interface Summary {
  eras: string[];
  killed: string;
  calls: number;
  callsAfterKill: number;
  byEra: Record<string, number>;
  hangs: string[];
  gaveUp: string[];
  toolErrors: string[];
  wrongAnswers: string[];
  retried: string[];
  writers: { id: string; file: string; count: number }[];
  survivors: { name: string; health: number }[];
  challenge: { status: number; wwwAuthenticate: string };
}

describe.skipIf(NGINX === undefined)(
  `three instances behind nginx, one killed mid-run${NGINX ? "" : " (skipped: nginx is not installed; .ci/run installs it)"}`,
  () => {
    it("loses and tears no edit, leaves no call hanging, and the survivors keep answering", async () => {
      const { dir: root, remove } = await tempDir("bfs-multi-");
      try {
        const run = spawnSync(process.execPath, [RUN, "--json", "--root", root, "--writers", String(WRITERS), "--ops", String(OPS)], {
          encoding: "utf8",
          timeout: 240_000,
        });
        expect(run.status, run.stderr).toBe(0);
        const summary = JSON.parse(run.stdout) as Summary;

        expect(summary.eras).toContain("2025-11-25");
        expect(summary.killed).toBe("b");
        expect(summary.callsAfterKill).toBeGreaterThan(0);
        expect(summary.hangs).toEqual([]);
        expect(summary.gaveUp).toEqual([]);
        expect(summary.toolErrors).toEqual([]);
        expect(summary.wrongAnswers).toEqual([]);
        for (const era of summary.eras) expect(summary.byEra[era], era).toBeGreaterThan(0);

        // Every writer's every edit landed exactly once: its line holds the number of edits it made,
        // and each shared file holds exactly its writers' lines, whole.
        expect(summary.writers).toHaveLength(WRITERS * summary.eras.length);
        const byFile = new Map<string, { id: string; count: number }[]>();
        for (const w of summary.writers) {
          expect(w.count, w.id).toBe(OPS / 3);
          byFile.set(w.file, [...(byFile.get(w.file) ?? []), w]);
        }
        for (const [file, writers] of byFile) {
          const lines = fs.readFileSync(file, "utf8").split("\n");
          expect(lines.pop()).toBe("");
          expect(lines.sort()).toEqual(writers.map((w) => `slot ${w.id}: ${w.count}`).sort());
        }
        // No temp or lock file of the server is left beside them.
        expect(fs.readdirSync(path.dirname(summary.writers[0]?.file ?? root)).filter((n) => n.startsWith(".bfs-"))).toEqual([]);

        expect(summary.survivors.map((s) => [s.name, s.health])).toEqual([
          ["a", 200],
          ["c", 200],
        ]);
        // Through nginx, a request without a token is still refused by the instance, with its challenge.
        expect(summary.challenge.status).toBe(401);
        expect(summary.challenge.wwwAuthenticate).toMatch(/^Bearer /);
      } finally {
        await remove();
      }
    }, 260_000);
  },
);
