/**
 * How a tree content search reaches its files (SPEC §16): the sandbox's openWalkedSync hands over
 * the descriptor of the file it checked (confinement, symlinks, FIFOs), and walkFiles hands every
 * selected file over open, in walk order, each file object once.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { Sandbox } from "../../../src/sandbox/index.js";
import { walkFiles } from "../../../src/walking/index.js";
import { describeEachStrategy, tempDir, walkOptions } from "../../support/fixtures.js";

let tmp: string;
let remove: () => Promise<void>;
let root: string;
let outside: string;

beforeEach(async () => {
  ({ dir: tmp, remove } = await tempDir("walked-read-"));
  root = path.join(tmp, "root");
  outside = path.join(tmp, "outside");
  fs.mkdirSync(root);
  fs.mkdirSync(outside);
  fs.writeFileSync(path.join(outside, "secret.txt"), "secret\n");
});

afterEach(() => remove());

// How many regular files under `dir` this process holds open (through /proc/self/fd, whichever strategy opened them).
function filesOpenUnder(dir: string): number {
  let n = 0;
  for (const fd of fs.readdirSync("/proc/self/fd")) {
    let target: string;
    try {
      target = fs.readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      continue;
    }
    if (target.startsWith(dir + path.sep) && fs.statSync(target, { throwIfNoEntry: false })?.isFile()) n++;
  }
  return n;
}

// The text of an open file, which is then closed.
const contentOf = (fd: number): string => {
  try {
    return fs.readFileSync(fd, "utf8");
  } finally {
    fs.closeSync(fd);
  }
};

describeEachStrategy("openWalkedSync", (_, runtime) => {
  const open = (name: string, reach = root + path.sep) => {
    const [got] = new Sandbox(runtime, [root]).openWalkedSync(reach, [name], () => path.join(root, name));
    if (got === undefined || "error" in got) throw got?.error;
    return got;
  };

  it("hands over the descriptor of the file it checked, with its size and identity", () => {
    fs.writeFileSync(path.join(root, "a.txt"), "alpha\nbeta\n");
    fs.writeFileSync(path.join(root, "big"), "x".repeat(100_000));
    const got = open("a.txt");
    const st = fs.statSync(path.join(root, "a.txt"), { bigint: true });
    expect([BigInt(got.stat?.dev ?? -1), BigInt(got.stat?.ino ?? -1), got.size]).toEqual([st.dev, st.ino, 11]);
    expect(contentOf(got.fd)).toBe("alpha\nbeta\n");
    const big = open("big");
    expect(big.size).toBe(100_000);
    expect(contentOf(big.fd).length).toBe(100_000);
  });

  it("refuses a symlink, even to a file inside, and a FIFO without blocking, leaving no descriptor open", () => {
    fs.writeFileSync(path.join(root, "a.txt"), "a");
    fs.symlinkSync(path.join(root, "a.txt"), path.join(root, "link"));
    execFileSync("mkfifo", [path.join(root, "fifo")]);
    const before = fs.readdirSync("/proc/self/fd").length;
    expect(() => open("link")).toThrow(/link/);
    expect(() => open("fifo")).toThrow(/fifo/);
    expect(fs.readdirSync("/proc/self/fd").length).toBe(before);
  });

  it("refuses a file reached through a path that leads outside", () => {
    fs.symlinkSync(outside, path.join(root, "out"));
    expect(() => open("secret.txt", path.join(root, "out") + path.sep)).toThrow(/outside allowed directories/);
  });
});

describeEachStrategy("walkFiles", (_, runtime) => {
  it("hands over every file open, in walk order, under each name (a hard link too), a link to a file it takes by its own name counted, not followed, one leading outside counted", async () => {
    fs.mkdirSync(path.join(root, "sub"));
    fs.writeFileSync(path.join(root, "a.txt"), "a\n");
    fs.linkSync(path.join(root, "a.txt"), path.join(root, "hard.txt"));
    fs.writeFileSync(path.join(root, "sub", "c.txt"), "c\n");
    fs.writeFileSync(path.join(root, "big.txt"), "b".repeat(20_000));
    fs.symlinkSync(path.join(root, "sub", "c.txt"), path.join(root, "z-link"));
    fs.symlinkSync(path.join(outside, "secret.txt"), path.join(root, "y-out"));
    const seen: string[] = [];
    const skips: string[] = [];
    const closes: Promise<unknown>[] = [];
    await walkFiles(
      root,
      { excludePatterns: [], respectGitignore: false },
      (file, shown) => {
        seen.push(`${path.relative(root, shown)}:${file.size}:${fs.readFileSync(file.fd).length}`);
        closes.push(Promise.resolve(file.close()));
        return undefined;
      },
      (reason, n) => skips.push(`${reason}:${n}`),
      walkOptions(runtime, [root]),
    );
    await Promise.all(closes);
    // Checked, as replace_in_files' walk is: sizes known, each name (a file rewritten under one name no longer is the other).
    expect(seen).toEqual(["a.txt:2:2", "big.txt:20000:20000", "hard.txt:2:2", "sub/c.txt:2:2"]);
    expect(skips.sort()).toEqual(["innerLink:1", "outsideLink:1"]);
  });
});

describeEachStrategy("walkFiles handing files over unchecked", (strategy, runtime) => {
  it("hands a file its reach proves inside over without its fstat (procfd only), every name of it, and follows links only to files outside the walked directory, once each", async () => {
    const sub = path.join(root, "sub");
    fs.mkdirSync(path.join(sub, "deeper"), { recursive: true });
    fs.writeFileSync(path.join(root, "a.txt"), "a\n");
    fs.writeFileSync(path.join(sub, "c.txt"), "c\n");
    fs.linkSync(path.join(sub, "c.txt"), path.join(sub, "hard-c.txt"));
    fs.writeFileSync(path.join(sub, "deeper", "d.txt"), "dd\n");
    // Walking sub: two links to a file outside it (inside the allowed directory), one to a file inside it.
    fs.symlinkSync("../a.txt", path.join(sub, "x-up"));
    fs.symlinkSync(path.join(root, "a.txt"), path.join(sub, "y-up"));
    fs.symlinkSync("deeper/d.txt", path.join(sub, "z-in"));
    const seen = new Map<string, { size: number; ino?: number | bigint; text: string }>();
    const skips: string[] = [];
    await walkFiles(
      sub,
      { excludePatterns: [], respectGitignore: false, unchecked: true },
      (file, shown) => {
        seen.set(path.relative(sub, shown), { size: file.size, ino: file.stat?.ino, text: fs.readFileSync(file.fd, "utf8") });
        file.close();
        return undefined;
      },
      (reason, n) => skips.push(`${reason}:${n}`),
      walkOptions(runtime, [root]),
    );
    // Both names of c.txt, as grep -r searches them; a.txt once, by the first link to it (the second counted); d.txt by
    // its own name only (the link to it counted).
    expect([...seen.keys()].sort()).toEqual(["c.txt", "deeper/d.txt", "hard-c.txt", "x-up"]);
    expect([...seen.values()].map((f) => f.text).sort()).toEqual(["a\n", "c\n", "c\n", "dd\n"]);
    expect(skips).toEqual(["repeatLink:1", "innerLink:1"]);
    const unchecked = [...seen].filter(([, f]) => f.size === -1).map(([name]) => name);
    for (const [name, f] of seen) {
      // Unchecked: no size and no identity; checked: both, as the file is.
      if (f.size === -1) expect(f.ino).toBeUndefined();
      else expect([f.size, BigInt(f.ino ?? -1)]).toEqual([f.text.length, fs.statSync(path.join(sub, name), { bigint: true }).ino]);
    }
    // A link's target is opened by path and checked; under portable every file is.
    if (strategy === "portable") expect(unchecked).toEqual([]);
    else expect(unchecked.sort()).toEqual(["c.txt", "deeper/d.txt", "hard-c.txt"]);
  });

  it("follows a link to a file inside the walked directory when the walk would not take that file under its own name (pattern, excludes), once", async () => {
    fs.mkdirSync(path.join(root, "docs", "old"), { recursive: true });
    fs.mkdirSync(path.join(root, "vendor"));
    fs.writeFileSync(path.join(root, "docs", "notes.txt"), "notes\n");
    fs.writeFileSync(path.join(root, "docs", "keep.md"), "keep\n");
    fs.writeFileSync(path.join(root, "docs", "old", "gone.md"), "gone\n");
    fs.writeFileSync(path.join(root, "vendor", "lib.md"), "lib\n");
    // notes.md: its file does not match *.md; old.md and lib.md: their files lie under excluded directories;
    // keep-link.md: its file is taken by its own name; again.md: a second link to notes.txt.
    fs.symlinkSync("docs/notes.txt", path.join(root, "notes.md"));
    fs.symlinkSync("notes.txt", path.join(root, "docs", "again.md"));
    fs.symlinkSync("docs/old/gone.md", path.join(root, "old.md"));
    fs.symlinkSync("vendor/lib.md", path.join(root, "lib.md"));
    fs.symlinkSync("docs/keep.md", path.join(root, "keep-link.md"));
    const walk = async (excludePatterns: string[]) => {
      const seen: string[] = [];
      const skips: string[] = [];
      await walkFiles(
        root,
        { pattern: "**/*.md", excludePatterns, respectGitignore: false, unchecked: true },
        (file, shown) => {
          seen.push(`${path.relative(root, shown)}=${fs.readFileSync(file.fd, "utf8").trim()}`);
          file.close();
          return undefined;
        },
        (reason, n) => skips.push(`${reason}:${n}`),
        walkOptions(runtime, [root]),
      );
      return { seen: seen.sort(), skips: skips.sort() };
    };
    // notes.txt once, under the first link's name in walk order (notes.md counted); every other file under its own name.
    expect(await walk([])).toEqual({
      seen: ["docs/again.md=notes", "docs/keep.md=keep", "docs/old/gone.md=gone", "vendor/lib.md=lib"],
      skips: ["innerLink:1", "innerLink:1", "innerLink:1", "repeatLink:1"],
    });
    expect(await walk(["**/old", "vendor"])).toEqual({
      seen: ["docs/again.md=notes", "docs/keep.md=keep", "lib.md=lib", "old.md=gone"],
      skips: ["innerLink:1", "repeatLink:1"],
    });
  });

  it("checks the walk's first `checkedFirst` files all the same, with their size and identity, and only then hands files over unchecked", async () => {
    for (let i = 0; i < 12; i++) fs.writeFileSync(path.join(root, `f${String(i).padStart(2, "0")}.txt`), "x".repeat(i));
    const handed: { name: string; size: number; ino?: number | bigint }[] = [];
    await walkFiles(
      root,
      // One file opened at a time (no openAhead), so the first five are exactly the five checked.
      { excludePatterns: [], respectGitignore: false, unchecked: true, checkedFirst: 5 },
      (file, shown) => {
        handed.push({ name: path.basename(shown), size: file.size, ino: file.stat?.ino });
        file.close();
        return undefined;
      },
      () => {},
      walkOptions(runtime, [root]),
    );
    expect(handed.map((f) => f.name)).toEqual(Array.from({ length: 12 }, (_, i) => `f${String(i).padStart(2, "0")}.txt`));
    for (const [i, f] of handed.entries()) {
      if (i < 5 || strategy === "portable")
        expect([f.size, BigInt(f.ino ?? -1)]).toEqual([i, fs.statSync(path.join(root, f.name), { bigint: true }).ino]);
      else expect([f.size, f.ino]).toEqual([-1, undefined]);
    }
  });
});

describeEachStrategy("openWalkedSync, several names in one step", (_, runtime) => {
  it("opens each regular file as its own name, refuses a symlink, a FIFO and a missing name each in its place, and leaves the working directory and no descriptor behind", async () => {
    fs.writeFileSync(path.join(root, "a.txt"), "alpha\n");
    fs.writeFileSync(path.join(root, "b.txt"), "beta\n");
    fs.symlinkSync(path.join(outside, "secret.txt"), path.join(root, "link"));
    execFileSync("mkfifo", [path.join(root, "fifo")]);
    const names = ["a.txt", "link", "fifo", "missing", "b.txt"];
    const cwd = process.cwd();
    const before = fs.readdirSync("/proc/self/fd").length;
    const sandbox = new Sandbox(runtime, [root]);
    // Reached as a walk reaches it: on procfd through the fd of the directory read.
    const { listing, close } = await sandbox.openWalkRoot(root);
    try {
      const got = sandbox.openWalkedSync(listing.reach, names, (i) => `shown-${names[i]}`);
      expect(process.cwd()).toBe(cwd);
      const texts = got.map((g, i) =>
        "error" in g ? `refused, naming it: ${(g.error as Error).message.includes(`shown-${names[i]}`)}` : contentOf(g.fd),
      );
      expect(texts).toEqual(["alpha\n", "refused, naming it: true", "refused, naming it: true", "refused, naming it: true", "beta\n"]);
    } finally {
      await close();
    }
    expect(fs.readdirSync("/proc/self/fd").length).toBe(before);
  });
});

describeEachStrategy("openEntriesSync, a reach that cannot be entered", (_, runtime) => {
  it("opens name by name, each refused in its place, and leaves the working directory as it was", () => {
    const cwd = process.cwd();
    // An fd number no process holds: procfd cannot enter it, and falls back to each name's own open.
    const reach = "/proc/self/fd/999999/";
    const got = runtime.strategy.openEntriesSync(reach, ["a.txt", "b.txt"], fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
    expect(got.map((g) => ("error" in g ? (g.error as NodeJS.ErrnoException).code : g.fd))).toEqual(["ENOENT", "ENOENT"]);
    expect(process.cwd()).toBe(cwd);
  });
});

describeEachStrategy("walkFiles opening files ahead", (_, runtime) => {
  // 40 files with subdirectories, links, a FIFO, a hard link, and files left out by pattern, excludes and .gitignore among them.
  function layOut(): void {
    fs.writeFileSync(path.join(root, ".gitignore"), "ignored-*\n");
    for (let i = 0; i < 40; i++) {
      const name = `f${String(i).padStart(2, "0")}`;
      fs.writeFileSync(path.join(root, `${name}.txt`), `${name}\n`);
      if (i % 9 === 0) fs.mkdirSync(path.join(root, `${name}-dir`));
      if (i % 9 === 0) fs.writeFileSync(path.join(root, `${name}-dir`, "inner.txt"), "inner\n");
      if (i % 7 === 0) fs.writeFileSync(path.join(root, `${name}.log`), "log\n");
      if (i % 11 === 0) fs.writeFileSync(path.join(root, `ignored-${name}.txt`), "ignored\n");
      if (i % 13 === 0) fs.writeFileSync(path.join(root, `${name}-skip.txt`), "excluded\n");
    }
    fs.linkSync(path.join(root, "f03.txt"), path.join(root, "f03-hard.txt"));
    fs.symlinkSync(path.join(root, "f05.txt"), path.join(root, "f05-link.txt"));
    fs.symlinkSync(path.join(outside, "secret.txt"), path.join(root, "f06-out.txt"));
    execFileSync("mkfifo", [path.join(root, "f07-fifo.txt")]);
  }

  async function walk(openAhead: number, signal?: AbortSignal, stopAfter = Infinity) {
    const seen: string[] = [];
    const skips: string[] = [];
    const asked: string[] = [];
    // The most files under the root open at once, counted at each hand-over (the one handed over included).
    let mostOpen = 0;
    const opts = walkOptions(runtime, [root], { signal });
    const port = opts.sandbox;
    const openWalkedSync = port.openWalkedSync.bind(port);
    port.openWalkedSync = (reach, names, shownOf) => {
      asked.push(...names);
      return openWalkedSync(reach, names, shownOf);
    };
    const walked = walkFiles(
      root,
      { pattern: "**/*.txt", excludePatterns: ["**/*-skip.txt"], respectGitignore: true, openAhead },
      (file, shown) => {
        mostOpen = Math.max(mostOpen, filesOpenUnder(root));
        seen.push(`${path.relative(root, shown)}=${fs.readFileSync(file.fd, "utf8").trim()}`);
        void file.close();
        if (seen.length >= stopAfter) (signal as AbortSignal & { stop?: () => void }).stop?.();
        return undefined;
      },
      (reason, n) => skips.push(`${reason}:${n}`),
      opts,
    );
    const error = await walked.then(
      () => undefined,
      (e: unknown) => e,
    );
    return { seen, skips, asked, error, mostOpen };
  }

  it("hands over the same files in the same order with the same skips as one at a time, never opening a file left out", async () => {
    layOut();
    const one = await walk(0);
    const ahead = await walk(32);
    expect(ahead.seen).toEqual(one.seen);
    expect(ahead.skips.sort()).toEqual(one.skips.sort());
    // 40 files, 5 inner ones and the hard link; the link inside leads to a file handed over under its own name.
    expect(ahead.seen).toHaveLength(40 + 5 + 1);
    expect(ahead.seen).toContain("f03-hard.txt=f03");
    expect(ahead.skips).toContain("innerLink:1");
    // Opened ahead in batches, and only what the walk takes: no .log, no ignored-*, no *-skip.txt.
    expect(ahead.asked.length).toBe(one.asked.length);
    expect(ahead.asked.filter((n) => n.endsWith(".log") || n.startsWith("ignored-") || n.endsWith("-skip.txt"))).toEqual([]);
  });

  it("holds at most openAhead files opened ahead, past which it opens fewer at once", async () => {
    layOut();
    const got = await walk(4);
    expect(got.seen).toHaveLength(40 + 5 + 1);
    // Four waiting and the one handed over: batches of five over the root's 40 and more files.
    expect(got.mostOpen).toBe(4 + 1);
    expect((await walk(0)).mostOpen).toBe(1);
  });

  it("closes the files it opened ahead when the walk is cancelled", async () => {
    layOut();
    const before = fs.readdirSync("/proc/self/fd").length;
    const controller = new AbortController();
    const signal = Object.assign(controller.signal, { stop: () => controller.abort(new Error("stopped")) });
    const got = await walk(32, signal, 3);
    expect((got.error as Error).message).toBe("stopped");
    expect(got.seen.length).toBeLessThan(40);
    expect(fs.readdirSync("/proc/self/fd").length).toBe(before);
  });
});

describeEachStrategy("openFileOrDirectory", (_, runtime) => {
  it("resolves once: a file comes back opened, a directory as its real path, a link to outside refused as openFile refuses it", async () => {
    fs.mkdirSync(path.join(root, "sub"));
    fs.writeFileSync(path.join(root, "sub", "a.txt"), "alpha\n");
    fs.symlinkSync(path.join(root, "sub"), path.join(root, "to-sub"));
    fs.symlinkSync(outside, path.join(root, "out"));
    const sandbox = new Sandbox(runtime, [root]);
    const file = await sandbox.openFileOrDirectory(path.join(root, "sub", "a.txt"));
    try {
      expect(file.kind).toBe("file");
      if (file.kind === "file") expect([file.path, (await file.handle.readFile()).toString()]).toEqual([path.join(root, "sub", "a.txt"), "alpha\n"]);
    } finally {
      if (file.kind === "file") await file.handle.close();
    }
    expect(await sandbox.openFileOrDirectory(path.join(root, "to-sub"))).toEqual({ kind: "directory", path: path.join(root, "sub") });
    await expect(sandbox.openFileOrDirectory(path.join(root, "out"))).rejects.toThrow(/outside allowed directories/);
    // The refusal of a missing file is openFile's own, word for word.
    const missing = path.join(root, "missing.txt");
    const byOpen = await sandbox.openFile(missing).then(
      () => "opened",
      (e: Error) => e.message,
    );
    await expect(sandbox.openFileOrDirectory(missing)).rejects.toThrow(byOpen);
  });
});

describeEachStrategy("inspect", (_, runtime) => {
  it("describes a directory without a handle and a file with one open", async () => {
    fs.mkdirSync(path.join(root, "sub"));
    fs.writeFileSync(path.join(root, "a.txt"), "alpha\n");
    const sandbox = new Sandbox(runtime, [root]);
    const dir = await sandbox.inspect(path.join(root, "sub"));
    expect([dir.stats.isDirectory(), dir.handle]).toEqual([true, undefined]);
    const file = await sandbox.inspect(path.join(root, "a.txt"));
    try {
      expect([file.stats.size, (await file.handle?.readFile())?.toString()]).toEqual([6, "alpha\n"]);
    } finally {
      await file.handle?.close();
    }
  });

  // Root reads a file of mode 000, so only another user can meet one it may stat but not read.
  it.skipIf(process.getuid?.() === 0)("describes a file it may not read without a handle", async () => {
    fs.writeFileSync(path.join(root, "a.txt"), "alpha\n");
    const sandbox = new Sandbox(runtime, [root]);
    fs.chmodSync(path.join(root, "a.txt"), 0o000);
    const unreadable = await sandbox.inspect(path.join(root, "a.txt"));
    expect([unreadable.stats.isFile(), unreadable.handle]).toEqual([true, undefined]);
    fs.chmodSync(path.join(root, "a.txt"), 0o644);
  });
});
