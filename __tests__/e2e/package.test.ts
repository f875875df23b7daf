/**
 * The package as users get it (SPEC §1): `npm pack` → install the tarball into
 * an empty project → run the bin the way client configs do (npx, bunx, and the
 * SDK's stdio client on node_modules/.bin). Needs the registry or the npm cache
 * for the runtime dependencies, and dist/ built (`npm test` builds first).
 */
import { spawn, spawnSync } from "node:child_process";
import { access, mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "../support/fixtures.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const BIN = "bounded-filesystem-mcp";
const NPM = process.platform === "win32" ? "npm.cmd" : "npm";
const NPX = process.platform === "win32" ? "npx.cmd" : "npx";
/**
 * Largest tarball we accept: ~40 kB in the first round, ~100 kB with content search, streaming edits and the
 * transport, ~165 kB with the HTTP mode, the three new file operations and bounded walks, ~256 kB with both
 * protocol eras and the fourth round's passes (262,282 bytes on 2026-12-06), 296,534 bytes on 2026-12-08 after the
 * reliability passes' refusals and notes (of it README.md 56,631; only dist/, README.md, LICENSE and package.json).
 * A jump past this means something unintended is packed (source maps, tests, a data file).
 */
const MAX_TARBALL_BYTES = 320 * 1024;
const TEXT = "abcdefghij".repeat(10);

/**
 * The environment a user's shell would give: no npm_* variables from the
 * `npm test` that runs us (npm_config_* would redirect the nested npm to this
 * repo), and no node_modules/.bin of this repo on PATH, so each bin is the
 * installed one. This node comes first, so `#!/usr/bin/env node` is it.
 */
function userEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined || /^npm_/i.test(key) || key === "INIT_CWD") continue;
    env[key] = value;
  }
  const dirs = (process.env.PATH ?? "").split(path.delimiter).filter((d) => d && !d.includes("node_modules"));
  env.PATH = [path.dirname(process.execPath), ...dirs].join(path.delimiter);
  return { ...env, ...extra };
}

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to completion, killing it after `timeoutMs`; never rejects on a non-zero exit. */
function run(command: string, args: string[], cwd: string, env: Record<string, string>, timeoutMs = 60_000): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

function ok(ran: Ran, what: string): string {
  if (ran.code !== 0) throw new Error(`${what} exited with ${ran.code}:\n${ran.stderr.slice(-2000)}`);
  return ran.stdout;
}

/** bun and bunx from the bun devDependency, if its platform binary installed and runs here. */
function findBun(): { bun: string; bunx: string } | undefined {
  const dir = path.join(ROOT, "node_modules", ".bin");
  const bun = path.join(dir, process.platform === "win32" ? "bun.exe" : "bun");
  const bunx = path.join(dir, process.platform === "win32" ? "bunx.exe" : "bunx");
  const probe = spawnSync(bun, ["--version"], { encoding: "utf8", timeout: 10_000 });
  return probe.status === 0 ? { bun, bunx } : undefined;
}
const BUN = findBun();

interface PackedFile {
  path: string;
  size: number;
  mode: number;
}

let work: { dir: string; remove: () => Promise<void> } | undefined;
let project: string;
let data: string;
let tarball: { filename: string; size: number; files: PackedFile[] };

beforeAll(async () => {
  work = await tempDir("bfs-pack-");
  // --ignore-scripts: `prepare` would rebuild dist/ under the feet of the other test files; npm test built it.
  const packed = ok(await run(NPM, ["pack", "--ignore-scripts", "--json", "--pack-destination", work.dir], ROOT, userEnv()), "npm pack");
  const [info] = JSON.parse(packed) as Array<{ filename: string; size: number; files: PackedFile[] }>;
  if (!info) throw new Error(`npm pack printed no package: ${packed}`);
  tarball = info;

  project = path.join(work.dir, "project");
  data = path.join(work.dir, "data");
  await mkdir(project);
  await mkdir(data);
  await writeFile(path.join(project, "package.json"), JSON.stringify({ name: "pack-smoke", version: "1.0.0", private: true }));
  await writeFile(path.join(data, "notes.txt"), TEXT);
  ok(
    await run(NPM, ["install", "--no-audit", "--no-fund", "--prefer-offline", path.join(work.dir, tarball.filename)], project, userEnv(), 90_000),
    "npm install <tarball>",
  );
}, 120_000);

afterAll(async () => {
  await work?.remove();
});

/** Connects the SDK's stdio client to `command args` as an MCP client config would start it. */
async function connectTo(command: string, args: string[], env: Record<string, string> = {}): Promise<Client> {
  const transport = new StdioClientTransport({ command, args, cwd: project, env: userEnv(env), stderr: "pipe" });
  const client = new Client({ name: "package-test", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

/** What every launcher must serve: the version, the allowed directory and a paged window. */
async function expectServes(client: Client): Promise<void> {
  try {
    expect(client.getServerVersion()).toMatchObject({ name: "bounded-filesystem", version: "0.1.0" });
    const allowed = (await client.callTool({ name: "list_allowed_directories", arguments: {} })) as CallToolResult;
    expect(allowed.content).toEqual([{ type: "text", text: `Allowed directories:\n${data}` }]);
    const read = (await client.callTool({
      name: "read_text_file",
      arguments: { path: "notes.txt", offset: 10, limit: 20 },
    })) as CallToolResult;
    expect(read.isError ?? false).toBe(false);
    expect(read.content).toEqual([
      {
        type: "text",
        text: `${TEXT.slice(10, 30)}\n[Result truncated: showing characters 11-30 of 100. Call again with offset=30 to continue.]`,
      },
    ]);
  } finally {
    await client.close();
  }
}

describe("npm pack", () => {
  it("ships only dist/, README.md, LICENSE and package.json, small", async () => {
    const names = tarball.files.map((f) => f.path).sort();
    const stray = names.filter((n) => !/^(package\.json|README\.md|LICENSE|dist\/.+\.js(\.map)?)$/.test(n));
    expect(stray).toEqual([]);
    expect(names).toEqual(expect.arrayContaining(["LICENSE", "README.md", "dist/index.js", "package.json"]));
    expect(tarball.size).toBeLessThan(MAX_TARBALL_BYTES);
    // A dist file without a source is stale output of a deleted module (or a test), not part of the product.
    for (const name of names.filter((n) => n.endsWith(".js"))) {
      await expect(access(path.join(ROOT, "src", `${name.slice("dist/".length, -".js".length)}.ts`))).resolves.toBeUndefined();
    }
    for (const map of names.filter((n) => n.endsWith(".map"))) expect(names).toContain(map.slice(0, -".map".length));
  });

  it("makes the bin an executable node script", async () => {
    const bin = tarball.files.find((f) => f.path === "dist/index.js");
    expect((bin?.mode ?? 0) & 0o111).toBe(0o111);
    const installed = path.join(project, "node_modules", BIN);
    expect((await readFile(path.join(installed, "dist", "index.js"), "utf8")).startsWith("#!/usr/bin/env node\n")).toBe(true);
    const manifest = JSON.parse(await readFile(path.join(installed, "package.json"), "utf8")) as Record<string, unknown>;
    expect(manifest).toMatchObject({ name: BIN, version: "0.1.0", type: "module", bin: { [BIN]: "dist/index.js" } });
  });

  it("installs the runtime dependencies and none of the dev tools", async () => {
    const modules = path.join(project, "node_modules");
    for (const dep of ["@modelcontextprotocol/server", "@modelcontextprotocol/node", "@modelcontextprotocol/client", "zod", "minimatch", "diff"]) {
      await expect(access(path.join(modules, dep, "package.json")), dep).resolves.toBeUndefined();
    }
    // SPEC §21: the SDK's 1.x line is no runtime dependency.
    for (const dev of ["typescript", "vitest", "fast-check", "bun", "@modelcontextprotocol/inspector", "@modelcontextprotocol/sdk"]) {
      await expect(access(path.join(modules, dev)), dev).rejects.toThrow();
    }
  });
});

describe("the installed package", () => {
  it("answers npx bounded-filesystem-mcp --version and --help", async () => {
    expect(ok(await run(NPX, [BIN, "--version"], project, userEnv()), "npx --version")).toBe("0.1.0\n");
    const help = ok(await run(NPX, [BIN, "--help"], project, userEnv()), "npx --help");
    expect(help).toMatch(/^Usage: bounded-filesystem-mcp \[options\] \[--\] DIR\.\.\./);
    expect(help).toContain("--max-result-chars N");
    // The client-config form from the README resolves to the installed copy.
    expect(ok(await run(NPX, ["-y", `${BIN}@0.1.0`, "--version"], project, userEnv()), "npx -y @0.1.0")).toBe("0.1.0\n");
  }, 60_000);

  it("serves MCP from node_modules/.bin through the SDK's stdio client", async () => {
    const bin = path.join(project, "node_modules", ".bin", BIN);
    await expectServes(await connectTo(bin, ["--max-result-chars", "40000", data]));
  }, 60_000);

  it("serves MCP through npx", async () => {
    await expectServes(await connectTo(NPX, [BIN, data]));
  }, 60_000);

  it.skipIf(!BUN)(
    "answers bunx bounded-filesystem-mcp --version and serves MCP through bunx (node runtime)",
    async () => {
      const bunx = BUN?.bunx ?? "";
      const env = userEnv({ BUN_INSTALL_CACHE_DIR: path.join(work?.dir ?? "", "bun-cache") });
      expect(ok(await run(bunx, [BIN, "--version"], project, env), "bunx --version")).toBe("0.1.0\n");
      await expectServes(await connectTo(bunx, [BIN, "--max-result-chars", "40000", data], env));
    },
    60_000,
  );

  it.skipIf(!BUN)(
    "serves MCP through bunx --bun (the Bun runtime)",
    async () => {
      const bunx = BUN?.bunx ?? "";
      await expectServes(await connectTo(bunx, ["--bun", BIN, data], { BUN_INSTALL_CACHE_DIR: path.join(work?.dir ?? "", "bun-cache") }));
    },
    60_000,
  );
});
