/**
 * Runs the built server as another user (root only), for the owner and permission suites.
 * That user often cannot enter the checkout (a clone in a 0700 `mktemp -d` directory or in
 * root's home), so the server runs from a world-readable copy of what it needs at run time
 * (package.json, dist/ and the production dependencies) in a directory of its own.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { chmod, cp, lstat, mkdir, mkdtemp, readdir, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll } from "vitest";
import type { Connected } from "./spawn.js";

/** True when this process may switch to another user (root on POSIX). */
export const IS_ROOT = process.getuid?.() === 0;

/** uid and gid of `nobody` on Debian-like systems. */
export const NOBODY = { uid: 65534, gid: 65534 };

/** A user the server can be started as. */
interface User {
  uid: number;
  gid: number;
}

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

// Dropped by a tiny node prelude before anything else loads, since the SDK's stdio
// transport does not pass spawn's uid/gid options through.
const dropTo = (user: User): string => `process.setgroups([]); process.setgid(${user.gid}); process.setuid(${user.uid});`;

/**
 * Why the suites that run the server as `nobody` cannot run here (a `describe.skipIf`
 * title names it), or undefined when they can: they need root, and `nobody` must be able to
 * enter the temp directory, where both the runtime copy and the suites' files are made.
 */
export const NOBODY_UNAVAILABLE: string | undefined = whyNobodyCannotRun();

/** The title of a suite run as `nobody`: what it needs, or why it is skipped here. */
export const NOBODY_SUITE = `as user nobody (${NOBODY_UNAVAILABLE ?? "needs root to drop privileges"})`;

function whyNobodyCannotRun(): string | undefined {
  if (!IS_ROOT) return "needs root to drop privileges";
  const tmp = os.tmpdir();
  const probe = spawnSync(
    process.execPath,
    ["-e", `${dropTo(NOBODY)} require("node:fs").accessSync(${JSON.stringify(tmp)}, require("node:fs").constants.X_OK);`],
    { encoding: "utf8", timeout: 10_000 },
  );
  if (probe.status === 0) return undefined;
  const why = /\b(E[A-Z]+)\b/.exec(probe.stderr)?.[1] ?? `exit ${probe.status ?? probe.signal}`;
  return `user nobody cannot enter the temp directory ${tmp} (${why})`;
}

/** A server installation `nobody` can read, and its remover. */
interface Runtime {
  serverJs: string;
  remove(): Promise<void>;
}

// The packages npm installs for a production install, from the lock: top-level entries
// not marked dev (nested ones come with their parent's directory).
function productionPackages(): { dir: string; optional: boolean }[] {
  const lock = JSON.parse(readFileSync(path.join(ROOT, "package-lock.json"), "utf8")) as {
    packages: Record<string, { dev?: boolean; optional?: boolean }>;
  };
  const topLevel = (key: string) => key.startsWith("node_modules/") && !key.slice(13).includes("/node_modules/");
  return Object.entries(lock.packages)
    .filter(([key, entry]) => topLevel(key) && entry.dev !== true)
    .map(([dir, entry]) => ({ dir, optional: entry.optional === true }));
}

async function makeWorldReadable(entry: string): Promise<void> {
  const st = await lstat(entry);
  if (st.isSymbolicLink()) return;
  if (st.isDirectory()) {
    await chmod(entry, (st.mode & 0o7777) | 0o555);
    for (const name of await readdir(entry)) await makeWorldReadable(path.join(entry, name));
  } else await chmod(entry, (st.mode & 0o7777) | 0o444);
}

/**
 * Copies package.json, dist/ and the production dependencies into a fresh 0755 directory
 * under the temp directory, every file readable by all.
 * @throws when dist/ or a production dependency is missing (build or install first)
 */
async function readableRuntime(): Promise<Runtime> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "bfs-runtime-"));
  const remove = () => rm(dir, { recursive: true, force: true });
  try {
    // verbatimSymlinks: a link inside a package must not be rewritten to point back into the checkout.
    const copy = (rel: string) => cp(path.join(ROOT, rel), path.join(dir, rel), { recursive: true, verbatimSymlinks: true });
    await copy("package.json");
    await copy("dist");
    await mkdir(path.join(dir, "node_modules"));
    for (const pkg of productionPackages()) {
      // An optional dependency for another platform is in the lock but not on disk.
      if (pkg.optional && (await lstat(path.join(ROOT, pkg.dir)).catch(() => undefined)) === undefined) continue;
      await copy(pkg.dir);
    }
    await makeWorldReadable(dir);
    return { serverJs: path.join(dir, "dist", "index.js"), remove };
  } catch (error) {
    await remove();
    throw new Error(`could not copy the server's runtime into ${dir} for user nobody`, { cause: error });
  }
}

/** Starts `serverJs` as `user` (no supplementary groups) and connects an SDK client. */
async function connectAs(user: User, serverJs: string, args: string[]): Promise<Connected> {
  const prelude =
    `${dropTo(user)} process.argv.splice(1, 0, ${JSON.stringify(serverJs)}); ` + `await import(${JSON.stringify(pathToFileURL(serverJs).href)});`;
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ["--input-type=module", "-e", prelude, ...args],
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  const client = new Client({ name: "test-client", version: "1.0.0" });
  try {
    await client.connect(transport);
  } catch (error) {
    throw new Error(`the server as uid ${user.uid} closed before answering; its stderr:\n${stderr}`, { cause: error });
  }
  return { client, transport, stderr: () => stderr, close: () => client.close() };
}

/**
 * Inside a `describe`: before its tests, makes a world-writable `shared-dir` under `root()` and starts
 * the server there as `nobody`, from a runtime copy it can read; closes both afterwards. The getters
 * are valid inside the tests.
 */
export function serverAsNobody(root: () => string): { dir(): string; server(): Connected } {
  let dir = "";
  let runtime: Runtime | undefined;
  let nobody: Connected | undefined;
  beforeAll(async () => {
    dir = path.join(root(), "shared-dir");
    await mkdir(dir);
    await chmod(dir, 0o777);
    await chmod(root(), 0o755);
    runtime = await readableRuntime();
    nobody = await connectAs(NOBODY, runtime.serverJs, [dir]);
  });
  afterAll(async () => {
    try {
      await nobody?.close();
    } finally {
      await runtime?.remove();
    }
  });
  return {
    dir: () => dir,
    server: () => {
      if (nobody === undefined) throw new Error("serverAsNobody: used outside its describe's tests");
      return nobody;
    },
  };
}
