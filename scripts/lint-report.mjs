// The lint step of `npm test` while issue 16's branches are unmerged: the files already kept
// clean (tooling, config, test support) are enforced; everything else is counted and reported
// without failing. `npm run lint` is the enforcing form (package.json's "test" names which runs).
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const BIOME = path.join(ROOT, "node_modules", "@biomejs", "biome", "bin", "biome");
const KNIP = path.join(ROOT, "node_modules", "knip", "bin", "knip.js");

/** Paths that must already pass `biome check` (lint and format); the rest waits for the reformat. */
const CLEAN = [
  "scripts",
  "bench",
  "__tests__/support",
  "__tests__/instructions.test.ts",
  "__tests__/build.test.ts",
  "__tests__/docs.test.ts",
  "__tests__/version.test.ts",
  "biome.jsonc",
  "knip.jsonc",
  "package.json",
  "tsconfig.json",
  "tsconfig.build.json",
  "vitest.config.ts",
];

function run(script, args, stdio = "pipe") {
  const ran = spawnSync(process.execPath, [script, ...args], { cwd: ROOT, encoding: "utf8", stdio, maxBuffer: 64 * 1024 * 1024 });
  if (ran.error) throw ran.error;
  return ran;
}

function countBy(items, key) {
  const counts = new Map();
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
}

const enforced = run(BIOME, ["check", "--error-on-warnings", ...CLEAN], "inherit");
if (enforced.status !== 0) {
  console.error("lint: the files kept clean (scripts/lint-report.mjs CLEAN) fail biome check; fix them (npx biome check --write PATH)");
  process.exit(1);
}

const biome = run(BIOME, ["check", "--reporter=json", "--max-diagnostics=none", "."]);
const diagnostics = JSON.parse(biome.stdout).diagnostics;
const area = (file) => (file.startsWith("src/") ? "src" : file.startsWith("__tests__/") ? "tests" : "other");
console.log(`biome (report-only): ${diagnostics.length} findings outside the enforced files`);
for (const [rule, n] of countBy(diagnostics, (d) => `${d.category} [${d.severity}]`)) {
  const where = countBy(
    diagnostics.filter((d) => `${d.category} [${d.severity}]` === rule),
    (d) => area(d.location.path),
  );
  console.log(`  ${String(n).padStart(4)}  ${rule}  (${where.map(([a, k]) => `${a} ${k}`).join(", ")})`);
}

const knip = run(KNIP, ["--reporter", "json", "--no-exit-code"]);
const issues = JSON.parse(knip.stdout).issues;
const kinds = new Map();
for (const file of issues) {
  for (const [kind, list] of Object.entries(file)) {
    if (!Array.isArray(list) || list.length === 0) continue;
    const names = kinds.get(kind) ?? [];
    // "files" lists the unused file itself; every other kind lists named items in the file.
    for (const item of list) names.push(kind === "files" ? file.file : `${item.name} (${file.file})`);
    kinds.set(kind, names);
  }
}
const total = [...kinds.values()].reduce((n, names) => n + names.length, 0);
console.log(`knip (report-only): ${total} findings`);
for (const [kind, names] of kinds) console.log(`  ${String(names.length).padStart(4)}  ${kind}: ${names.join(", ")}`);
// The contract is edited beside the repository and copied in; say when the copy is behind.
const shared = path.join(ROOT, "..", "shared", "SPEC.md");
if (existsSync(shared) && readFileSync(shared, "utf8") !== readFileSync(path.join(ROOT, "docs", "SPEC.md"), "utf8")) {
  console.log("docs/SPEC.md differs from ../shared/SPEC.md: copy the contract in (cp ../shared/SPEC.md docs/SPEC.md)");
}
console.log("lint: report-only; `npm run lint` enforces (biome check --error-on-warnings . && knip)");
