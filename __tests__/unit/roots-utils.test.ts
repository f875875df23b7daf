import { existsSync } from "node:fs";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import type { Root } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { getValidRootDirectories } from "../../src/roots-utils.js";

let tmp: string;
let errors: string[];

beforeEach(async () => {
  tmp = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), "roots-utils-")));
  errors = [];
  vi.spyOn(console, "error").mockImplementation((...args: unknown[]) => {
    errors.push(args.map(String).join(" "));
  });
});

afterEach(async () => {
  vi.restoreAllMocks();
  await fs.rm(tmp, { recursive: true, force: true });
});

const root = (uri: string): Root => ({ uri, name: "test root" });

describe("getValidRootDirectories", () => {
  it("accepts file URIs and plain paths, decoding percent-escapes", async () => {
    const spaced = path.join(tmp, "with space & 100%");
    const plain = path.join(tmp, "plain");
    await fs.mkdir(spaced);
    await fs.mkdir(plain);
    const uri = pathToFileURL(spaced).href;
    expect(uri).toContain("%20");

    const dirs = await getValidRootDirectories([root(uri), root(plain)]);
    expect(dirs).toEqual([spaced, plain]);
    expect(errors).toEqual([]);
  });

  it("normalizes a trailing slash and duplicate separators", async () => {
    const dir = path.join(tmp, "d");
    await fs.mkdir(dir);
    expect(await getValidRootDirectories([root(`${tmp}//d/`)])).toEqual([dir]);
  });

  it("returns a symlinked root in both its real and its given form", async () => {
    const real = path.join(tmp, "real");
    const link = path.join(tmp, "link");
    await fs.mkdir(real);
    await fs.symlink(real, link);

    expect(await getValidRootDirectories([root(pathToFileURL(link).href)])).toEqual([real, link]);
  });

  it("keeps a trailing space of a real directory name instead of allowing its trimmed sibling", async () => {
    const spaced = path.join(tmp, "d ");
    await fs.mkdir(spaced);
    await fs.mkdir(path.join(tmp, "d"));
    expect(await getValidRootDirectories([root(spaced)])).toEqual([spaced]);
  });

  it("lists a directory once even when two roots name it", async () => {
    const real = path.join(tmp, "real");
    const link = path.join(tmp, "link");
    await fs.mkdir(real);
    await fs.symlink(real, link);

    expect(await getValidRootDirectories([root(real), root(link)])).toEqual([real, link]);
  });

  it("skips missing paths and files with a line on stderr, keeping the rest", async () => {
    const file = path.join(tmp, "file.txt");
    const dir = path.join(tmp, "ok");
    await fs.writeFile(file, "x");
    await fs.mkdir(dir);
    const missing = path.join(tmp, "missing");

    const dirs = await getValidRootDirectories([root(missing), root(file), root(dir)]);
    expect(dirs).toEqual([dir]);
    expect(errors).toHaveLength(2);
    expect(errors[0]).toContain(missing);
    expect(errors[1]).toContain("non-directory");
    expect(errors[1]).toContain(file);
  });

  it("skips a dangling symlink", async () => {
    const link = path.join(tmp, "dangling");
    await fs.symlink(path.join(tmp, "nowhere"), link);
    expect(await getValidRootDirectories([root(link)])).toEqual([]);
    expect(errors.join("\n")).toContain(link);
  });

  it("skips a malformed file URI instead of throwing", async () => {
    expect(await getValidRootDirectories([root("file://remote-host/share/x")])).toEqual([]);
    expect(errors).toHaveLength(1);
  });

  it.skipIf(!existsSync(os.homedir()))("expands ~ to the home directory", async () => {
    const home = await fs.realpath(os.homedir());
    expect((await getValidRootDirectories([root("~")]))[0]).toBe(home);
  });

  it("folds dot segments of a file URI", async () => {
    const sub = path.join(tmp, "subdir");
    await fs.mkdir(sub);
    expect(await getValidRootDirectories([root(`file://${tmp}/./subdir/../subdir`)])).toEqual([sub]);
  });

  it("skips a URI holding NUL bytes", async () => {
    const dir = path.join(tmp, "ok");
    await fs.mkdir(dir);
    expect(await getValidRootDirectories([root("file://\0invalid\0path"), root(`${dir}\0`), root(dir)])).toEqual([dir]);
    expect(errors).toHaveLength(2);
  });

  it("returns an empty list for no roots", async () => {
    expect(await getValidRootDirectories([])).toEqual([]);
  });
});
