/**
 * The version is written once, in package.json (SPEC §2: `--version` and `initialize`'s
 * serverInfo report the package version): the built server reports it, and a build whose
 * package.json says another version reports that one, so the number is read, not copied.
 */
import { cp, readFile, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { VERSION } from "../src/cli/config.js";
import { tempDir } from "./support/fixtures.js";
import { connect, runServer } from "./support/spawn.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const OTHER_VERSION = "9.8.7-version-test";

let manifest: { version: string };
let work: { dir: string; remove: () => Promise<void> };
let otherServer: string;

beforeAll(async () => {
  manifest = JSON.parse(await readFile(path.join(ROOT, "package.json"), "utf8")) as { version: string };
  work = await tempDir("bfs-version-");
  // The same build beside a package.json that says another version; node_modules is linked,
  // while dist/ is copied, since a module's own URL is its real path.
  const copy = path.join(work.dir, "package");
  await cp(path.join(ROOT, "dist"), path.join(copy, "dist"), { recursive: true });
  await writeFile(path.join(copy, "package.json"), JSON.stringify({ ...manifest, version: OTHER_VERSION }));
  await symlink(path.join(ROOT, "node_modules"), path.join(copy, "node_modules"));
  otherServer = path.join(copy, "dist", "index.js");
});
afterAll(() => work?.remove());

async function serverInfoOf(serverJs?: string): Promise<unknown> {
  const server = await connect([work.dir], { serverJs });
  try {
    return server.client.getServerVersion();
  } finally {
    await server.close();
  }
}

describe("the version", () => {
  it("is package.json's, in the sources", () => {
    expect(VERSION).toBe(manifest.version);
  });

  it("is package.json's in --version and serverInfo of the built server", async () => {
    expect(await runServer(["--version"])).toMatchObject({ code: 0, stdout: `${manifest.version}\n` });
    expect(await serverInfoOf()).toMatchObject({ name: "bounded-filesystem", version: manifest.version });
  });

  it("follows package.json: the same build beside another package.json reports that version", async () => {
    expect(await runServer(["--version"], { serverJs: otherServer })).toMatchObject({ code: 0, stdout: `${OTHER_VERSION}\n` });
    expect(await serverInfoOf(otherServer)).toMatchObject({ name: "bounded-filesystem", version: OTHER_VERSION });
  });
});
