/**
 * Confinement through the built server (SPEC §5): every path-taking tool
 * refuses every escape attempt — `..` chains, absolute paths, `~`, symlinks
 * (file/dir, relative/absolute, chains, loops, dangling), NUL bytes, ≥ 64 KB
 * paths, newlines, quotes, percent signs, non-UTF-8 names — with an error that
 * says why, and nothing outside the allowed directory changes.
 *
 * Regression: a sibling directory whose name is the allowed one plus a
 * trailing space or quote (`/x/root `, `/x/root"`) was listed by
 * list_directory, directory_tree and get_file_info, because the real path was
 * checked after normalizePath trimmed it (fixed in lib.ts validatePathIn).
 */
import { link, lstat, mkdir, readFile, readdir, readlink, rename, rm, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { expectOk, expectRefused, expectSameSnapshot, snapshot, type EntryState, sandbox } from "../../support/hostile.js";
import { STRATEGIES } from "../../support/fixtures.js";
import { call, inProcess, textOf, type InProcess } from "../../support/in-process.js";

let base: string;
let root: string;
let outside: string;
let server: InProcess;
let removeBase: () => Promise<void>;
const SIBLING_SUFFIXES = [" ", '"', "'", "\n", "\t"];
const RAW_NAME = Buffer.from([0x62, 0x61, 0x64, 0x2d, 0xff, 0xfe, 0x2e, 0x74, 0x78, 0x74]); // "bad-\xff\xfe.txt"

/** A fresh allowed directory with every attack's fixture, and an outside sibling. */
async function setUp(): Promise<void> {
  ({ base, root, outside, remove: removeBase } = await sandbox("bfs-escape-"));
  await mkdir(path.join(root, "sub"), { recursive: true });
  await mkdir(path.join(outside, "deep"), { recursive: true });
  await writeFile(path.join(root, "inside.txt"), "inside secret");
  await writeFile(path.join(root, "mover.txt"), "mover");
  await writeFile(path.join(outside, "secret.txt"), "secret");
  await writeFile(path.join(outside, "deep", "deeper.txt"), "deeper secret");
  await writeFile(Buffer.from(`${outside}/${RAW_NAME.toString("latin1")}`, "latin1"), "raw outside");
  await writeFile(Buffer.concat([Buffer.from(`${root}/`), RAW_NAME]), "raw inside");
  for (const suffix of SIBLING_SUFFIXES) {
    await mkdir(root + suffix);
    await writeFile(path.join(root + suffix, "sibling-secret.txt"), "sibling");
  }
  const link = (target: string, name: string) => symlink(target, path.join(root, name));
  await link(path.join(outside, "secret.txt"), "file-abs");
  await link("../outside/secret.txt", "file-rel");
  await link(outside, "dir-abs");
  await link("../outside", "dir-rel");
  await link("chain-2", "chain-1");
  await link("chain-3", "chain-2");
  await link(outside, "chain-3");
  await link("sub/../file-rel", "chain-file");
  await link(path.join(root, "loop-b"), "loop-a");
  await link("loop-a", "loop-b");
  await link("self", "self");
  await link(path.join(outside, "not-yet.txt"), "dangling-file");
  await link("../outside/not-yet-dir", "dangling-dir");
  await link(`${root} `, "to-sibling");
}

const run = (name: string, args: Record<string, unknown>) => call(server.client, name, args);

/** Each path-taking tool (both ends of move_file) as a function of the attacked path. */
const TOOLS: ReadonlyArray<readonly [string, string, (p: string) => Record<string, unknown>]> = [
  ["read_text_file", "read_text_file", (p) => ({ path: p })],
  ["read_file", "read_file", (p) => ({ path: p })],
  ["read_text_file (tail)", "read_text_file", (p) => ({ path: p, tail: 2 })],
  ["read_media_file", "read_media_file", (p) => ({ path: p })],
  ["read_multiple_files", "read_multiple_files", (p) => ({ paths: ["inside.txt", p] })],
  ["write_file", "write_file", (p) => ({ path: p, content: "pwned" })],
  ["edit_file", "edit_file", (p) => ({ path: p, edits: [{ oldText: "secret", newText: "pwned" }] })],
  ["create_directory", "create_directory", (p) => ({ path: p })],
  ["move_file (source)", "move_file", (p) => ({ source: p, destination: "moved-here" })],
  ["move_file (destination)", "move_file", (p) => ({ source: "mover.txt", destination: p })],
  ["list_directory", "list_directory", (p) => ({ path: p })],
  ["list_directory_with_sizes", "list_directory_with_sizes", (p) => ({ path: p })],
  ["directory_tree", "directory_tree", (p) => ({ path: p })],
  ["search_files", "search_files", (p) => ({ path: p, pattern: "**" })],
  ["get_file_info", "get_file_info", (p) => ({ path: p })],
];

// The one uniform refusal (SPEC §13): it names the path as given, never where a link leads.
const OUTSIDE = /Access denied - path outside allowed directories: /;
const LINK_WOULD_LEAVE =
  /^Access denied - the symlink .* would lead outside the allowed directories \(.*\) from its new place: a link is moved as a link, its target text unchanged$/;
const LOOP = /too many symbolic links|ELOOP/;
const TOO_LONG = /ENAMETOOLONG|too long|Parent directory does not exist/;

interface Attack {
  label: string;
  /** Built lazily: the temp paths exist only after beforeAll. */
  target: () => string;
  reason: RegExp;
  /** Something the refusal must quote: the offending name (an outside refusal quotes the path as given instead). */
  names: () => string;
}

const attack = (label: string, target: () => string, reason: RegExp, names: () => string, _formerly?: () => string): Attack => ({
  label,
  target,
  reason,
  names,
});

const ATTACKS: Attack[] = [
  attack(
    "relative .. chain",
    () => "../outside/secret.txt",
    OUTSIDE,
    () => `${outside}/secret.txt`,
  ),
  attack(
    "dot-dot inside a subpath",
    () => "sub/../../outside/deep/deeper.txt",
    OUTSIDE,
    () => `${outside}/deep/deeper.txt`,
  ),
  attack(
    "absolute path with ..",
    () => `${root}/sub/../../outside/secret.txt`,
    OUTSIDE,
    () => `${outside}/secret.txt`,
  ),
  attack(
    "absolute path elsewhere",
    () => `${outside}/secret.txt`,
    OUTSIDE,
    () => `${outside}/secret.txt`,
  ),
  attack(
    "absolute directory elsewhere",
    () => outside,
    OUTSIDE,
    () => outside,
  ),
  attack(
    "new file elsewhere",
    () => `${outside}/new.txt`,
    OUTSIDE,
    () => `${outside}/new.txt`,
  ),
  attack(
    "the file-system root",
    () => "/",
    OUTSIDE,
    () => "/ not in",
  ),
  attack(
    "~ (home)",
    () => "~",
    OUTSIDE,
    () => outside,
  ),
  attack(
    "~/file",
    () => "~/secret.txt",
    OUTSIDE,
    () => `${outside}/secret.txt`,
  ),
  attack(
    "~/new file",
    () => "~/new.txt",
    OUTSIDE,
    () => `${outside}/new.txt`,
  ),
  attack(
    "66 KB of ../ then outside",
    () => `${"../".repeat(22_000)}${outside.slice(1)}/secret.txt`,
    OUTSIDE,
    () => `${outside}/secret.txt`,
  ),
  attack(
    "70 KB file name",
    () => "x".repeat(70_000),
    TOO_LONG,
    () => `${root}/xxxx`,
  ),
  attack(
    "66 KB of nested components",
    () => "a/".repeat(33_000),
    TOO_LONG,
    () => `${root}/a/a/a`,
  ),
  attack(
    "symlink to a file, absolute",
    () => "file-abs",
    OUTSIDE,
    () => `${outside}/secret.txt`,
    () => `${root}/file-abs`,
  ),
  attack(
    "symlink to a file, relative",
    () => "file-rel",
    OUTSIDE,
    () => `${outside}/secret.txt`,
    () => `${root}/file-rel`,
  ),
  attack(
    "symlink to a directory, absolute",
    () => "dir-abs",
    OUTSIDE,
    () => outside,
  ),
  attack(
    "symlink to a directory, relative",
    () => "dir-rel",
    OUTSIDE,
    () => outside,
  ),
  attack(
    "file through a directory symlink",
    () => "dir-abs/secret.txt",
    OUTSIDE,
    () => `${outside}/secret.txt`,
    () => "dir-abs/secret.txt",
  ),
  attack(
    "new file through a directory symlink",
    () => "dir-rel/new.txt",
    OUTSIDE,
    () => outside,
  ),
  attack(
    "deep file through a directory symlink",
    () => `${root}/dir-rel/deep/deeper.txt`,
    OUTSIDE,
    () => `${outside}/deep`,
    () => "deeper.txt",
  ),
  attack(
    "symlink chain to a directory",
    () => "chain-1",
    OUTSIDE,
    () => outside,
  ),
  attack(
    "new file through a symlink chain",
    () => "chain-1/new.txt",
    OUTSIDE,
    () => outside,
  ),
  attack(
    "symlink chain to a file",
    () => "chain-file",
    OUTSIDE,
    () => `${outside}/secret.txt`,
    () => `${root}/chain-file`,
  ),
  attack(
    "symlink loop",
    () => "loop-a",
    LOOP,
    () => `${root}/loop-a`,
  ),
  attack(
    "path under a symlink loop",
    () => "loop-b/x.txt",
    LOOP,
    () => `${root}/loop-b`,
  ),
  attack(
    "self-referencing symlink",
    () => "self",
    LOOP,
    () => `${root}/self`,
  ),
  attack(
    "symlink to a sibling named like the root plus a space",
    () => "to-sibling",
    OUTSIDE,
    () => `${root} `,
  ),
  attack(
    "NUL byte then ..",
    () => "inside.txt\0../../outside/secret.txt",
    /NUL byte/,
    () => "index 10",
  ),
  attack(
    "NUL byte at the end",
    () => `${outside}/secret.txt\0`,
    /NUL byte/,
    () => "secret.txt",
  ),
  attack(
    "trailing newline",
    () => `${outside}/secret.txt\n`,
    OUTSIDE,
    () => `${outside}/secret.txt`,
  ),
  attack(
    "quoted absolute path with .. inside the quotes",
    () => `${root}/../outside/secret.txt"`,
    OUTSIDE,
    () => outside,
  ),
  attack(
    "percent-encoded name elsewhere",
    () => `${outside}/%2e%2e/secret.txt`,
    OUTSIDE,
    () => `${outside}/%2e%2e`,
  ),
  attack(
    "non-UTF-8 name elsewhere (as decoded)",
    () => `${outside}/bad-\ufffd\ufffd.txt`,
    OUTSIDE,
    () => `${outside}/bad-`,
  ),
  // file:// URLs are read as the paths they name (MCP roots and resource links name files so), then checked as any path.
  attack(
    "file URL to a file outside",
    () => `file://${outside}/secret.txt`,
    OUTSIDE,
    () => `${outside}/secret.txt`,
  ),
  attack(
    "file URL climbing out with percent-encoded dots",
    () => `file://${root}/%2e%2e/outside/secret.txt`,
    OUTSIDE,
    () => "%2e%2e/outside/secret.txt",
  ),
  attack(
    "file URL with an encoded NUL",
    () => `file://${outside}/secret.txt%00`,
    /NUL byte/,
    () => "secret.txt%00",
  ),
  attack(
    "file URL without an authority (file:/…)",
    () => `file:${outside}/secret.txt`,
    OUTSIDE,
    () => `${outside}/secret.txt`,
  ),
  attack(
    "file URL with a host",
    () => `file://evil.example${outside}/secret.txt`,
    /is a file URL that names no path on this machine|Access denied/,
    () => "evil.example",
  ),
  ...SIBLING_SUFFIXES.map((suffix) =>
    attack(
      `sibling directory named root+${JSON.stringify(suffix)}`,
      () => root + suffix,
      OUTSIDE,
      () => root + suffix,
    ),
  ),
  ...SIBLING_SUFFIXES.map((suffix) =>
    attack(
      `file in sibling root+${JSON.stringify(suffix)}`,
      () => `${root + suffix}/sibling-secret.txt`,
      OUTSIDE,
      () => root + suffix,
    ),
  ),
];

/** What a refusal must look like; read_multiple_files reports per-file errors inside a successful result. */
function checkRefusal(tool: string, result: CallToolResult, a: Attack): void {
  const text = textOf(result);
  // A reason hidden behind the truncation notice is no reason: check the visible part.
  const visible = text.split("\n[Result truncated:")[0]!;
  const reason = a.reason;
  const given = a.target();
  // A path longer than the cap is cut inside the refusal that quotes it: its start must show.
  const name = reason === OUTSIDE ? given.slice(0, 1_000) : a.names();
  if (reason === OUTSIDE && !given.includes(outside) && !given.startsWith("~")) {
    // Nothing about what lies outside: neither where a link leads nor what is there.
    expect(visible, `${tool}: ${visible.slice(0, 300)}`).not.toContain(outside);
  }
  if (tool === "read_multiple_files") {
    expect(result.isError ?? false, text).toBe(false);
    expect(visible.startsWith("inside.txt:\ninside secret\n")).toBe(true);
    if (visible.length < text.length) {
      // The format quotes the requested path before its error, so a path longer than the cap pushes
      // the error past the cut; the notice then says the second file was not included.
      expect(text).toMatch(/; 1 of 2 requested files included in full\./);
      return;
    }
    expect(visible).toContain(": Error - ");
    expect(visible).toMatch(reason);
  } else {
    expectRefused(result, reason);
    expect(visible, text.slice(0, 300)).toMatch(reason);
  }
  expect(visible.includes(name) || visible.includes(JSON.stringify(name).slice(1, -1)), `${tool}: ${visible.slice(0, 300)}`).toBe(true);
}

// move_file moves a symlink itself, like mv (SPEC §13): one whose target is absolute leads where it led
// (nothing new is reached); a relative one that would lead outside from its new place is refused.
const MOVABLE_LINKS = new Set(["file-abs", "dir-abs", "to-sibling", "loop-a", "self"]);

/** The link `name` was moved to moved-here unchanged (then it is put back), or refused if it would lead outside. */
async function checkLinkMoved(name: string, result: CallToolResult): Promise<void> {
  const from = path.join(root, name);
  const to = path.join(root, "moved-here");
  if (!MOVABLE_LINKS.has(name)) {
    // Named as given, with the allowed directories; where it leads is not said.
    const text = expectRefused(result, LINK_WOULD_LEAVE, `the symlink ${name} would lead outside the allowed directories (${root})`);
    expect(text).not.toContain(outside);
    return;
  }
  expectOk(result);
  const target = await readlink(to);
  await rename(to, from);
  expect(await readlink(from)).toBe(target);
}

describe.each(STRATEGIES)("%s strategy", (name) => {
  beforeAll(async () => {
    await setUp();
    // HOME points outside so that `~` attempts land in the snapshotted directory.
    server = await inProcess([root], { env: { HOME: outside }, strategy: name });
  });

  afterAll(async () => {
    await server?.close();
    await removeBase?.();
  });

  describe("every path-taking tool refuses every escape attempt", () => {
    let before: Map<string, EntryState>;

    beforeEach(async () => {
      before = await snapshot(base);
    });

    it.each(ATTACKS.map((a) => [a.label, a] as const))("%s", async (_label, a) => {
      const target = a.target();
      // A move onto an existing name is refused as taken before anything follows the name: the
      // destination is resolved lexically, so a symlink there is itself the entry that exists.
      const takenName =
        !target.includes("/") &&
        (await lstat(path.join(root, target)).then(
          () => true,
          () => false,
        ));
      const isLink = takenName && (await lstat(path.join(root, target))).isSymbolicLink();
      for (const [label, tool, args] of TOOLS) {
        const result = await run(tool, args(target));
        try {
          if (label === "move_file (source)" && isLink) {
            await checkLinkMoved(target, result);
            continue;
          }
          if (label === "move_file (destination)" && takenName) {
            expectRefused(result, /^Destination already exists: /, path.join(root, target));
            continue;
          }
          checkRefusal(tool, result, a);
        } catch (error) {
          throw new Error(`${label}: ${(error as Error).message}`, { cause: error });
        }
      }
      // Nothing changed anywhere: outside, the siblings, and the allowed directory itself (whose
      // mtime a link moved there and back did change).
      const after = await snapshot(base);
      const rootKey = `./${Buffer.from("root").toString("hex")}`;
      if (isLink && MOVABLE_LINKS.has(target)) before.set(rootKey, { ...before.get(rootKey)!, mtimeNs: after.get(rootKey)!.mtimeNs });
      expectSameSnapshot(before, after);
    });

    it("read-only tools refuse system paths", async () => {
      for (const target of ["/etc/passwd", "/proc/self/environ", "/etc", "/proc/self/fd/0", "../../../../../../../../etc/shadow"]) {
        for (const tool of ["read_text_file", "read_media_file", "list_directory", "directory_tree", "get_file_info"]) {
          const text = expectRefused(await run(tool, { path: target }), OUTSIDE);
          expect(text).not.toContain("root:");
        }
      }
    });
  });

  describe("a file:// URL names the file it names", () => {
    it("reads, writes and lists through one, escapes decoded", async () => {
      const url = pathToFileURL(path.join(root, "via url é.txt")).href;
      expect(url).toContain("%20");
      expect(textOf(await run("write_file", { path: url, content: "by url\n" }))).toBe(`Successfully wrote to ${url}`);
      expect(await readFile(path.join(root, "via url é.txt"), "utf8")).toBe("by url\n");
      expect(textOf(await run("read_text_file", { path: url }))).toBe("by url\n");
      // RFC 8089's form without an authority names the same file; `file:name` is a name.
      expect(textOf(await run("read_text_file", { path: url.replace("file://", "file:") }))).toBe("by url\n");
      expect(textOf(await run("read_text_file", { path: "file:via url é.txt" }))).toMatch(/ENOENT/);
      expect(textOf(await run("list_directory", { path: pathToFileURL(root).href }))).toContain("[FILE] via url é.txt");
      await rm(path.join(root, "via url é.txt"));
    });
  });

  describe("dangling symlinks pointing outside are never written through", () => {
    it("write_file, edit_file, create_directory and move_file refuse them and create nothing outside", async () => {
      const before = await snapshot(base);
      // The uniform refusal, as for a link whose target exists: nothing says the target is missing.
      expectRefused(await run("write_file", { path: "dangling-file", content: "pwned" }), OUTSIDE, "dangling-file not in");
      expectRefused(await run("edit_file", { path: "dangling-file", edits: [{ oldText: "", newText: "x" }] }), OUTSIDE);
      expectRefused(await run("create_directory", { path: "dangling-dir" }), OUTSIDE, "dangling-dir not in");
      expectRefused(await run("create_directory", { path: "dangling-dir/inner" }), OUTSIDE, "dangling-dir/inner not in");
      expectRefused(await run("write_file", { path: "dangling-dir/new.txt", content: "pwned" }), OUTSIDE, "dangling-dir/new.txt not in");
      expectRefused(await run("move_file", { source: "mover.txt", destination: "dangling-file" }), /Destination already exists/, "dangling-file");
      expectRefused(await run("read_text_file", { path: "dangling-file" }), OUTSIDE, "dangling-file not in");
      expectSameSnapshot(before, await snapshot(base));
      expect(await readdir(outside)).not.toContain("not-yet.txt");
      expect(await readdir(outside)).not.toContain("not-yet-dir");
    });
  });

  describe("odd names inside the allowed directory stay inside", () => {
    const ODD = [
      "line\nbreak.txt",
      'double"quote.txt',
      "single'quote.txt",
      "%2e%2e%2f%2e%2e%2foutside%2fsecret.txt",
      "..%2f..%2foutside",
      "back\\slash.txt",
      "trailing space.txt ",
      " leading space.txt",
      "tab\tname.txt",
      "ünïcødé-😀.txt",
      "-dash.txt",
      "*glob?[x].txt",
    ];

    it.each(ODD.map((name) => [JSON.stringify(name), name] as const))("%s", async (_label, name) => {
      const outsideBefore = await snapshot(outside);
      expectOk(await run("write_file", { path: name, content: `content of ${name}` }));
      expect(await readFile(path.join(root, name), "utf8")).toBe(`content of ${name}`);
      expect(expectOk(await run("read_text_file", { path: name }))).toBe(`content of ${name}`);
      expectOk(await run("edit_file", { path: name, edits: [{ oldText: "content", newText: "$& $1 $$" }] }));
      expect(await readFile(path.join(root, name), "utf8")).toBe(`$& $1 $$ of ${name}`);
      expectOk(await run("move_file", { source: name, destination: `${name}.moved` }));
      expect(await readFile(path.join(root, `${name}.moved`), "utf8")).toBe(`$& $1 $$ of ${name}`);
      expectOk(await run("create_directory", { path: `dir ${name}/inner` }));
      expect(await readdir(path.join(root, `dir ${name}`))).toEqual(["inner"]);
      expectSameSnapshot(outsideBefore, await snapshot(outside));
    });
  });

  describe("non-UTF-8 names on disk", () => {
    it("walkers and listings complete and show the name lossily; writes to the lossy name touch nothing else", async () => {
      const lossy = RAW_NAME.toString("utf8");
      expect(lossy).toContain("\ufffd");
      const outsideBefore = await snapshot(outside);
      expect(expectOk(await run("list_directory", { path: root }))).toContain(`[FILE] ${lossy}`);
      expect(expectOk(await run("list_directory_with_sizes", { path: root }))).toContain(lossy);
      expect(expectOk(await run("directory_tree", { path: root }))).toContain(JSON.stringify(lossy));
      expect(expectOk(await run("search_files", { path: root, pattern: "bad-*" }))).toContain(lossy);
      // The decoded name is a different name: reading it finds nothing, writing it creates a new file.
      expect(textOf(await run("read_text_file", { path: lossy }))).toMatch(/ENOENT|no such file/);
      expectOk(await run("write_file", { path: lossy, content: "new" }));
      const raw = Buffer.concat([Buffer.from(`${root}/`), RAW_NAME]);
      expect(await readFile(raw, "utf8")).toBe("raw inside");
      expect(await readFile(path.join(root, lossy), "utf8")).toBe("new");
      expectSameSnapshot(outsideBefore, await snapshot(outside));
    });
  });

  describe("the allowed directory itself as a file operand", () => {
    it("is refused as a directory, not reported as 'outside' because its parent is", async () => {
      const before = await snapshot(base);
      for (const target of [root, ".", `${root}/sub/..`]) {
        const reason = /it is one of the allowed directories, not a file inside one/;
        expectRefused(await run("read_text_file", { path: target }), reason, root);
        expectRefused(await run("read_media_file", { path: target }), reason, root);
        expectRefused(await run("write_file", { path: target, content: "x" }), reason, root);
        expectRefused(await run("edit_file", { path: target, edits: [{ oldText: "", newText: "x" }] }), reason, root);
        expectRefused(await run("move_file", { source: target, destination: "moved-root" }), reason, root);
        expectRefused(await run("move_file", { source: "mover.txt", destination: target }), /^Destination already exists: /);
      }
      expectSameSnapshot(before, await snapshot(base));
    });
  });

  describe("hard links (out of scope for reads, see docs/SECURITY.md)", () => {
    it("write_file and edit_file replace the link and never change the outside name's content", async () => {
      const outsideFile = path.join(outside, "linked.txt");
      await writeFile(outsideFile, "outside original\n");
      await link(outsideFile, path.join(root, "hard.txt"));
      expectOk(await run("edit_file", { path: "hard.txt", edits: [{ oldText: "original", newText: "edited" }] }));
      expect(await readFile(path.join(root, "hard.txt"), "utf8")).toBe("outside edited\n");
      expectOk(await run("write_file", { path: "hard.txt", content: "rewritten\n" }));
      expect(await readFile(path.join(root, "hard.txt"), "utf8")).toBe("rewritten\n");
      expect(await readFile(outsideFile, "utf8")).toBe("outside original\n");
    });
  });
});
