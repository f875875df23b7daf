/**
 * Resolution from inside (src/sandbox/lookup.ts) and the one escaping
 * (src/escape.ts), in process: nothing outside the allowed directories is ever
 * looked at, and escaping leaves no control character behind.
 */
import fs from "node:fs/promises";
import path from "node:path";
import fc from "fast-check";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { escapeControls, jsonName, jsonNameLength } from "../../../src/kernel/escape.js";
import { __testing } from "../../../src/sandbox/index.js";
import { tempDir } from "../../support/fixtures.js";

const { resolveFromInside, followLinkBoth } = __testing;

let base: string;
let root: string;
let outside: string;
let remove: () => Promise<void>;

beforeAll(async () => {
  ({ dir: base, remove } = await tempDir("bfs-inside-"));
  root = path.join(base, "root");
  outside = path.join(base, "outside");
  await fs.mkdir(path.join(root, "sub", "deep"), { recursive: true });
  await fs.mkdir(path.join(outside, "dir"), { recursive: true });
  await fs.writeFile(path.join(root, "sub", "f.txt"), "f");
  await fs.writeFile(path.join(outside, "secret.txt"), "s");
  await fs.symlink(path.join(outside, "secret.txt"), path.join(root, "to-file"));
  await fs.symlink("../outside/dir", path.join(root, "to-dir"));
  await fs.symlink(path.join(outside, "missing"), path.join(root, "to-missing"));
  await fs.symlink("../outside/nodir/x", path.join(root, "to-missing-dir"));
  await fs.symlink("sub/deep/..", path.join(root, "to-sub"));
  await fs.symlink("to-sub/f.txt", path.join(root, "chain"));
  await fs.symlink("loop", path.join(root, "loop"));
  // Inside, but through a link whose `..` steps out of the allowed directory (real path semantics).
  await fs.symlink(".", path.join(root, "here"));
  await fs.symlink("here/../outside/secret.txt", path.join(root, "sneaky"));
});

afterAll(() => remove());
afterEach(() => vi.restoreAllMocks());

describe("resolveFromInside", () => {
  it("looks at nothing outside, and ends the same for the four kinds of outside link", async () => {
    const looked: string[] = [];
    const lstat = fs.lstat.bind(fs);
    const readlink = fs.readlink.bind(fs);
    vi.spyOn(fs, "lstat").mockImplementation(((p: string) => {
      looked.push(p);
      return lstat(p);
    }) as typeof fs.lstat);
    vi.spyOn(fs, "readlink").mockImplementation(((p: string) => {
      looked.push(p);
      return readlink(p);
    }) as typeof fs.readlink);
    for (const name of ["to-file", "to-dir", "to-missing", "to-missing-dir", "sneaky"]) {
      for (const suffix of ["", "/x", "/x/y"]) {
        expect(await resolveFromInside(path.join(root, name) + suffix, [root]), name + suffix).toEqual({ kind: "outside" });
      }
    }
    expect(looked.length).toBeGreaterThan(0);
    for (const p of looked) expect(p === root || p.startsWith(`${root}/`), p).toBe(true);
  });

  it("follows links inside with real-path semantics for ..", async () => {
    expect(await resolveFromInside(path.join(root, "chain"), [root])).toMatchObject({ kind: "found", real: path.join(root, "sub", "f.txt") });
    expect(await resolveFromInside(path.join(root, "to-sub", "new.txt"), [root])).toEqual({
      kind: "missing",
      path: path.join(root, "sub", "new.txt"),
    });
    expect(await resolveFromInside(path.join(root, "sub", "no", "new.txt"), [root])).toEqual({ kind: "noParent" });
    expect(await resolveFromInside(path.join(root, "sub", "f.txt", "x"), [root])).toEqual({ kind: "notDir" });
    expect(await resolveFromInside(path.join(root, "loop"), [root])).toEqual({ kind: "loop" });
    expect(await resolveFromInside(outside, [root])).toEqual({ kind: "outside" });
  });
});

describe("followLink, through the thread pool and synchronously (a walk's)", () => {
  it("tells every kind of link the same way by both drivers of the one resolution", async () => {
    const at = (name: string): string => path.join(root, name);
    const expected: Record<string, string> = {
      "to-file": "outside",
      "to-dir": "outside",
      "to-missing": "outside",
      "to-missing-dir": "outside",
      sneaky: "outside",
      "to-sub": "inside",
      chain: "inside",
      here: "inside",
      loop: "loop",
    };
    for (const [name, kind] of Object.entries(expected)) {
      const { async, sync } = await followLinkBoth(at(name), [root]);
      expect(sync, name).toEqual(async);
      expect(sync.kind, name).toBe(kind);
    }
    const chain = await followLinkBoth(at("chain"), [root]);
    expect(chain.sync).toMatchObject({ kind: "inside", target: { real: path.join(root, "sub", "f.txt"), size: 1, isDir: false } });
    // Reached through a directory that is itself a link (as a walk reaches it, through /proc/self/fd on Linux): from its real path.
    const through = await followLinkBoth(path.join(root, "here", "chain"), [root]);
    expect(through.sync).toEqual(through.async);
    expect(through.sync).toMatchObject({ kind: "inside", target: { real: path.join(root, "sub", "f.txt") } });
    expect((await followLinkBoth(at("to-sub"), [root])).sync).toMatchObject({
      kind: "inside",
      target: { real: path.join(root, "sub"), isDir: true },
    });
    // A link in a directory that is not there: its directory cannot be resolved, by either driver.
    const gone = await followLinkBoth(path.join(root, "no-such-dir", "link"), [root]);
    expect(gone.sync).toEqual(gone.async);
    expect(gone.sync).toEqual({ kind: "unresolved", code: "ENOENT" });
  });
});

describe("escapeControls and jsonName", () => {
  it("leave no control character or line separator, keep everything else, and are idempotent", () => {
    expect(escapeControls("a\nb\tc\rd\x1b[0m\x7f\u0085\u2028é\\n")).toBe("a\\nb\\tc\\rd\\x1b[0m\\x7f\\x85\\u2028é\\n");
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), (s) => {
        const shown = escapeControls(s);
        expect(shown).not.toMatch(/[\p{Cc}\u2028\u2029]/u);
        expect(escapeControls(shown)).toBe(shown);
        if (!/[\p{Cc}\u2028\u2029]/u.test(s)) expect(shown).toBe(s);
        const json = jsonName(s);
        expect(JSON.parse(json)).toBe(s);
        expect(jsonNameLength(s)).toBe(json.length);
        expect(json).not.toMatch(/[\p{Cc}\u2028\u2029]/u);
      }),
    );
  });
});
