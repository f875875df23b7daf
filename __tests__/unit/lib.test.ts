import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { applyEdits, fenceDiff } from "../../src/editing/index.js";
import {
  applyFileEdits,
  createUnifiedDiff,
  formatSize,
  getAllowedDirectories,
  getFileStats,
  headFile,
  normalizeLineEndings,
  readFileContent,
  searchFilesWithValidation,
  setAllowedDirectories,
  tailFile,
  validatePath,
  validatePathIn,
  resolveRequestedPath,
  writeFileContent,
} from "../../src/lib.js";

const noSymlinks = process.platform === "win32";

let tmp: string;
let allowed: string;
let outside: string;

beforeEach(async () => {
  tmp = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), "lib-test-")));
  allowed = path.join(tmp, "allowed");
  outside = path.join(tmp, "outside");
  await fs.mkdir(allowed);
  await fs.mkdir(outside);
  setAllowedDirectories([allowed]);
});

afterEach(async () => {
  setAllowedDirectories([]);
  await fs.rm(tmp, { recursive: true, force: true });
});

const inAllowed = (...parts: string[]): string => path.join(allowed, ...parts);

describe("allowed directories", () => {
  it("stores and returns copies", () => {
    const dirs = ["/a", "/b"];
    setAllowedDirectories(dirs);
    dirs.push("/c");
    const got = getAllowedDirectories();
    got.push("/d");
    expect(getAllowedDirectories()).toEqual(["/a", "/b"]);
  });
});

describe("formatSize", () => {
  const rows: Array<[number, string]> = [
    [0, "0 B"],
    [-0, "0 B"],
    [0.5, "0.5 B"],
    [512, "512 B"],
    [1023.9, "1023.9 B"],
    [1024, "1.00 KB"],
    [1536, "1.50 KB"],
    [1_048_575, "1024.00 KB"],
    [1_048_576, "1.00 MB"],
    [1024 ** 3, "1.00 GB"],
    [1024 ** 4, "1.00 TB"],
    [1024 ** 5, "1024.00 TB"],
  ];
  it.each(rows)("%d → %j", (bytes, expected) => {
    expect(formatSize(bytes)).toBe(expected);
  });

  it("yields NaN text for a negative size (upstream arithmetic)", () => {
    expect(formatSize(-1)).toContain("NaN");
  });
});

describe("normalizeLineEndings / createUnifiedDiff", () => {
  it("turns CRLF into LF and keeps lone CR", () => {
    expect(normalizeLineEndings("a\r\nb\rc\r\n")).toBe("a\nb\rc\n");
  });

  it("produces original/modified headers and ignores CRLF-only differences", () => {
    const diff = createUnifiedDiff("a\nb\n", "a\nc\n", "f.txt");
    expect(diff).toContain("--- f.txt\toriginal");
    expect(diff).toContain("+++ f.txt\tmodified");
    expect(diff).toContain("-b\n+c");
    expect(createUnifiedDiff("a\r\nb\r\n", "a\nb\n")).not.toContain("@@");
    expect(createUnifiedDiff("x", "y")).toContain("--- file\toriginal");
  });
});

describe("validatePath", () => {
  it("returns the real path of an existing file inside", async () => {
    await fs.writeFile(inAllowed("f.txt"), "x");
    expect(await validatePath(inAllowed("sub", "..", "f.txt"))).toBe(inAllowed("f.txt"));
    expect(await validatePath(allowed)).toBe(allowed);
  });

  it("accepts a new file whose parent is allowed and returns its absolute path", async () => {
    expect(await validatePath(inAllowed("new.txt"))).toBe(inAllowed("new.txt"));
  });

  it("refuses a new file whose parent is missing", async () => {
    await expect(validatePath(inAllowed("no", "such", "f.txt"))).rejects.toThrow(`Parent directory does not exist: ${inAllowed("no", "such")}`);
  });

  it("refuses a sibling named like the allowed directory plus a space at the lexical check", async () => {
    await fs.mkdir(`${allowed} `);
    await expect(validatePath(`${allowed} `)).rejects.toThrow(/^Access denied - path outside allowed directories: /);
    await expect(resolveRequestedPath(`${allowed} `, [allowed])).rejects.toThrow(/^Access denied - path outside allowed directories: /);
  });

  it("refuses paths outside, including prefix look-alikes and .. chains", async () => {
    await fs.mkdir(`${allowed}-evil`);
    for (const p of [`${allowed}-evil/x`, `${allowed}2`, path.join(outside, "x"), `${allowed}/../outside/x`, "/etc/passwd"]) {
      await expect(validatePath(p)).rejects.toThrow(/^Access denied - path outside allowed directories: /);
    }
  });

  it.skipIf(noSymlinks)("refuses a symlink whose target is outside", async () => {
    await fs.writeFile(path.join(outside, "secret"), "s");
    await fs.symlink(path.join(outside, "secret"), inAllowed("link"));
    await expect(validatePath(inAllowed("link"))).rejects.toThrow(/^Access denied - symlink target outside allowed directories: /);
  });

  it.skipIf(noSymlinks)("refuses a new file under a symlinked directory that leads outside", async () => {
    await fs.symlink(outside, inAllowed("dirlink"));
    await expect(validatePath(inAllowed("dirlink", "new.txt"))).rejects.toThrow(/^Access denied - symlink target outside allowed directories: /);
  });

  it.skipIf(noSymlinks)("follows a symlink that stays inside", async () => {
    await fs.writeFile(inAllowed("target"), "t");
    await fs.symlink(inAllowed("target"), inAllowed("alias"));
    expect(await validatePath(inAllowed("alias"))).toBe(inAllowed("target"));
  });

  it("refuses a NUL byte, naming the parameter", async () => {
    await expect(validatePath(`${allowed}/a\x00b`)).rejects.toThrow(/path.*NUL byte at index/);
  });

  it("refuses everything when no directory is allowed", async () => {
    setAllowedDirectories([]);
    await expect(validatePath(allowed)).rejects.toThrow(/^Access denied - path outside/);
  });

  it("expands ~ before checking", async () => {
    setAllowedDirectories([]);
    await expect(validatePath("~/x")).rejects.toThrow(path.join(os.homedir(), "x"));
  });
});

describe("validatePath with relative paths (resolved against allowed dirs, not cwd)", () => {
  let second: string;
  beforeEach(async () => {
    second = path.join(tmp, "second");
    await fs.mkdir(second);
    setAllowedDirectories([allowed, second]);
  });

  it("uses the first allowed directory when one is configured", async () => {
    setAllowedDirectories([allowed]);
    await fs.writeFile(inAllowed("r.txt"), "r");
    expect(process.cwd()).not.toBe(allowed);
    expect(await validatePath("r.txt")).toBe(inAllowed("r.txt"));
    expect(await validatePath("./sub/../new.txt")).toBe(inAllowed("new.txt"));
  });

  it("prefers a directory where the path exists", async () => {
    await fs.writeFile(path.join(second, "only-here.txt"), "x");
    expect(await validatePath("only-here.txt")).toBe(path.join(second, "only-here.txt"));
  });

  it("then a directory where the parent exists", async () => {
    await fs.mkdir(path.join(second, "sub"));
    expect(await validatePath("sub/new.txt")).toBe(path.join(second, "sub", "new.txt"));
  });

  it("else the first directory", async () => {
    expect(await validatePath("fresh.txt")).toBe(inAllowed("fresh.txt"));
    await expect(validatePath("a/b/c.txt")).rejects.toThrow(`Parent directory does not exist: ${inAllowed("a", "b")}`);
  });

  it("still refuses relative escapes", async () => {
    await fs.writeFile(path.join(outside, "s"), "s");
    await expect(validatePath("../outside/s")).rejects.toThrow(/^Access denied - path outside allowed directories/);
  });
});

describe("validatePathIn", () => {
  it("checks against the given list, not the module-wide one", async () => {
    setAllowedDirectories([]);
    await fs.writeFile(path.join(outside, "o.txt"), "o");
    expect(await validatePathIn(path.join(outside, "o.txt"), [outside])).toBe(path.join(outside, "o.txt"));
    await expect(validatePathIn(inAllowed("x"), [outside])).rejects.toThrow(/^Access denied/);
    expect(await validatePathIn("o.txt", [outside])).toBe(path.join(outside, "o.txt"));
  });
});

describe("getFileStats / readFileContent", () => {
  it("reports size, type and permissions", async () => {
    const f = inAllowed("s.txt");
    await fs.writeFile(f, "12345");
    await fs.chmod(f, 0o640);
    const info = await getFileStats(f);
    expect(info).toMatchObject({ size: 5, isFile: true, isDirectory: false });
    expect(info.modified).toBeInstanceOf(Date);
    expect(info.created).toBeInstanceOf(Date);
    expect(info.accessed).toBeInstanceOf(Date);
    if (process.platform !== "win32") expect(info.permissions).toBe("640");
    expect((await getFileStats(allowed)).isDirectory).toBe(true);
  });

  it("reads text with utf-8 by default and honours another encoding", async () => {
    const f = inAllowed("t.txt");
    await fs.writeFile(f, "héllo 😀");
    expect(await readFileContent(f)).toBe("héllo 😀");
    expect(await readFileContent(f, "base64")).toBe(Buffer.from("héllo 😀").toString("base64"));
  });
});

async function siblings(): Promise<string[]> {
  return (await fs.readdir(allowed)).sort();
}

describe("writeFileContent", () => {
  it("creates a new file", async () => {
    await writeFileContent(inAllowed("n.txt"), "new ✓");
    expect(await fs.readFile(inAllowed("n.txt"), "utf-8")).toBe("new ✓");
  });

  it("replaces an existing file atomically and leaves no temp file behind", async () => {
    await fs.writeFile(inAllowed("e.txt"), "old content that is longer");
    await writeFileContent(inAllowed("e.txt"), "new");
    expect(await fs.readFile(inAllowed("e.txt"), "utf-8")).toBe("new");
    expect(await siblings()).toEqual(["e.txt"]);
  });

  it.skipIf(noSymlinks)("replaces a planted symlink instead of writing through it", async () => {
    const victim = path.join(outside, "victim");
    await fs.writeFile(victim, "precious");
    await fs.symlink(victim, inAllowed("planted"));
    await writeFileContent(inAllowed("planted"), "overwrite");
    expect(await fs.readFile(victim, "utf-8")).toBe("precious");
    expect((await fs.lstat(inAllowed("planted"))).isSymbolicLink()).toBe(false);
    expect(await fs.readFile(inAllowed("planted"), "utf-8")).toBe("overwrite");
  });

  it("removes the temp file when the rename fails", async () => {
    await fs.mkdir(inAllowed("adir"));
    await fs.writeFile(inAllowed("adir", "keep"), "k");
    await expect(writeFileContent(inAllowed("adir"), "x")).rejects.toThrow();
    expect(await siblings()).toEqual(["adir"]);
  });
});

describe("applyFileEdits", () => {
  const file = (): string => inAllowed("code.ts");

  it("applies edits in order, writes the file and returns a fenced diff", async () => {
    await fs.writeFile(file(), "const a = 1;\nconst b = 2;\n");
    const diff = await applyFileEdits(file(), [
      { oldText: "const a = 1;", newText: "const a = 10;" },
      { oldText: "a = 10", newText: "a = 11" },
    ]);
    expect(await fs.readFile(file(), "utf-8")).toBe("const a = 11;\nconst b = 2;\n");
    expect(diff.startsWith("```diff\n")).toBe(true);
    expect(diff.endsWith("```\n\n")).toBe(true);
    expect(diff).toContain("-const a = 1;\n+const a = 11;");
    expect(await siblings()).toEqual(["code.ts"]);
  });

  it("leaves the file untouched on dryRun", async () => {
    await fs.writeFile(file(), "x\n");
    const diff = await applyFileEdits(file(), [{ oldText: "x", newText: "y" }], true);
    expect(diff).toContain("+y");
    expect(await fs.readFile(file(), "utf-8")).toBe("x\n");
  });

  it("leaves the file untouched when a later edit fails", async () => {
    await fs.writeFile(file(), "one\ntwo\n");
    await expect(
      applyFileEdits(file(), [
        { oldText: "one", newText: "1" },
        { oldText: "three", newText: "3" },
      ]),
    ).rejects.toThrow("Could not find exact match for edit:\nthree");
    expect(await fs.readFile(file(), "utf-8")).toBe("one\ntwo\n");
    expect(await siblings()).toEqual(["code.ts"]);
  });

  it("inserts $ replacement patterns literally", async () => {
    await fs.writeFile(file(), "price: X;\n");
    await applyFileEdits(file(), [{ oldText: "X", newText: "$& $1 $$ $' $` $<n>" }]);
    expect(await fs.readFile(file(), "utf-8")).toBe("price: $& $1 $$ $' $` $<n>;\n");
  });

  it("normalizes a CRLF file and matches CRLF oldText", async () => {
    await fs.writeFile(file(), "a\r\nb\r\n");
    await applyFileEdits(file(), [{ oldText: "a\r\nb", newText: "c" }]);
    expect(await fs.readFile(file(), "utf-8")).toBe("c\n");
  });

  it("lengthens the fence past backtick runs in the diff", async () => {
    await fs.writeFile(file(), "````md\n");
    const diff = await applyFileEdits(file(), [{ oldText: "md", newText: "txt" }], true);
    expect(diff.startsWith("`````diff\n")).toBe(true);
    expect(diff.endsWith("\n`````\n\n")).toBe(true);
  });
});

describe("applyEdits (whitespace-tolerant matching)", () => {
  it("keeps the first line's indentation, and each later line the indentation of the line its old one matched", () => {
    const content = "function f() {\n    if (x) {\n        go();\n    }\n}\n";
    const out = applyEdits(content, [{ oldText: "if (x) {\n    go();\n}", newText: "if (y) {\n    stop();\n    go();\n}" }]);
    // Upstream's rule re-based them on the first line's: "    stop();\n    go();\n}", the block's nesting lost.
    expect(out).toBe("function f() {\n    if (y) {\n        stop();\n        go();\n    }\n}\n");
  });

  it("keeps Python's nesting when the old text differs only in a trailing space, and follows a tab-indented file", () => {
    const python = "def f():\n    if x:\n        y = 1\n    return y\n";
    const edited = applyEdits(python, [
      { oldText: "def f():\n    if x:\n        y = 1 ", newText: "def f():\n    if x:\n        y = 2\n    else:\n        y = 0" },
    ]);
    expect(edited).toBe("def f():\n    if x:\n        y = 2\n    else:\n        y = 0\n    return y\n");
    // Spaces in the old and new text, tabs in the file: each level in tabs, a new deeper one too.
    const tabs = "f() {\n\tif (x) {\n\t\treturn 1;\n\t}\n}\n";
    const out = applyEdits(tabs, [
      { oldText: "    if (x) {\n        return 1;\n    }", newText: "    if (y) {\n        if (z) {\n            return 2;\n        }\n    }" },
    ]);
    expect(out).toBe("f() {\n\tif (y) {\n\t\tif (z) {\n\t\t\treturn 2;\n\t\t}\n\t}\n}\n");
  });

  it("re-bases an indented new line relative to the indented old line", () => {
    const content = "  a\n    b\n";
    const out = applyEdits(content, [{ oldText: "a\n  b", newText: "A\n    B" }]);
    expect(out).toBe("  A\n      B\n");
  });

  it("matches lines whose only difference is surrounding whitespace", () => {
    expect(applyEdits("\tx = 1;  \ny\n", [{ oldText: "x = 1;\ny", newText: "x = 2;\ny" }])).toBe("\tx = 2;\ny\n");
  });

  it("replaces only the first exact occurrence", () => {
    expect(applyEdits("ab ab", [{ oldText: "ab", newText: "$&c" }])).toBe("$&c ab");
  });

  it("throws with the original oldText when nothing matches", () => {
    expect(() => applyEdits("a\n", [{ oldText: "b\r\nc", newText: "" }])).toThrow("Could not find exact match for edit:\nb\r\nc");
  });

  it("fenceDiff uses three backticks unless the diff holds a run that long", () => {
    expect(fenceDiff("x\n")).toBe("```diff\nx\n```\n\n");
    expect(fenceDiff("a ``` b ` c\n")).toBe("````diff\na ``` b ` c\n````\n\n");
  });
});

describe("headFile / tailFile", () => {
  const f = (): string => inAllowed("lines.txt");

  it("returns the first and last lines with upstream's newline semantics", async () => {
    await fs.writeFile(f(), "l1\nl2\r\nl3\nl4\n");
    expect(await headFile(f(), 2)).toBe("l1\nl2\r");
    expect(await headFile(f(), 10)).toBe("l1\nl2\r\nl3\nl4");
    expect(await headFile(f(), 0)).toBe("");
    expect(await tailFile(f(), 2)).toBe("l4\n");
    expect(await tailFile(f(), 4)).toBe("l2\nl3\nl4\n");
    expect(await tailFile(f(), 10)).toBe("l1\nl2\nl3\nl4\n");
  });

  it("handles a file without a trailing newline and an empty file", async () => {
    await fs.writeFile(f(), "only");
    expect(await headFile(f(), 1)).toBe("only");
    expect(await tailFile(f(), 1)).toBe("only");
    await fs.writeFile(f(), "");
    expect(await headFile(f(), 3)).toBe("");
    expect(await tailFile(f(), 3)).toBe("");
  });

  it("decodes a 4-byte character straddling the 1024-byte chunk boundary (head)", async () => {
    const line = `${"a".repeat(1022)}😀z`;
    await fs.writeFile(f(), `${line}\nsecond\n`);
    expect(Buffer.from(line).subarray(1022, 1026).toString()).toBe("😀");
    expect(await headFile(f(), 1)).toBe(line);
  });

  it("decodes a 4-byte character straddling the chunk boundary (tail)", async () => {
    const middle = `😀${"b".repeat(1017)}`;
    const content = `x\n${middle}\nlast`;
    expect(Buffer.byteLength(content)).toBe(1028);
    await fs.writeFile(f(), content);
    expect(await tailFile(f(), 2)).toBe(`${middle}\nlast`);
    expect(await tailFile(f(), 3)).toBe(content);
  });

  it("strips the CR of a CRLF split across the tail chunk boundary", async () => {
    const first = "c".repeat(3);
    const content = `${first}\r\n${"d".repeat(1023)}`;
    await fs.writeFile(f(), content);
    expect(await tailFile(f(), 2)).toBe(`${first}\n${"d".repeat(1023)}`);
  });

  it("agrees with a whole-file oracle on multi-chunk text of mixed-width characters", async () => {
    const alphabet = ["a", "é", "€", "😀", "\n", "\r\n", " ", "𝄞"];
    let seed = 7;
    const next = (): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed;
    };
    let text = "";
    while (Buffer.byteLength(text) < 5000) text += alphabet[next() % alphabet.length];
    await fs.writeFile(f(), text);

    const headLines = (text.endsWith("\n") ? text.slice(0, -1) : text).split("\n");
    const tailLines = normalizeLineEndings(text).split("\n");
    for (const n of [1, 2, 5, 17, 60, 10_000]) {
      expect(await headFile(f(), n)).toBe(headLines.slice(0, n).join("\n"));
      expect(await tailFile(f(), n)).toBe(tailLines.slice(-n).join("\n"));
    }
  });
});

describe("searchFilesWithValidation", () => {
  beforeEach(async () => {
    await fs.mkdir(inAllowed("src", "deep"), { recursive: true });
    await fs.mkdir(inAllowed("node_modules", "pkg"), { recursive: true });
    await fs.writeFile(inAllowed("src", "a.ts"), "");
    await fs.writeFile(inAllowed("src", "deep", "b.ts"), "");
    await fs.writeFile(inAllowed("src", ".hidden.ts"), "");
    await fs.writeFile(inAllowed("node_modules", "pkg", "c.ts"), "");
    await fs.writeFile(inAllowed("readme.md"), "");
  });

  it("matches the pattern against root-relative paths, dotfiles included", async () => {
    const hits = await searchFilesWithValidation(allowed, "**/*.ts", [allowed], { excludePatterns: ["node_modules"] });
    expect(hits.sort()).toEqual([inAllowed("src", ".hidden.ts"), inAllowed("src", "a.ts"), inAllowed("src", "deep", "b.ts")].sort());
  });

  it("records a matching directory before descending into it", async () => {
    const hits = await searchFilesWithValidation(allowed, "src{,/**}", [allowed]);
    expect(hits[0]).toBe(inAllowed("src"));
    expect(hits).toContain(inAllowed("src", "deep", "b.ts"));
    expect(hits.indexOf(inAllowed("src", "deep"))).toBeLessThan(hits.indexOf(inAllowed("src", "deep", "b.ts")));
  });

  it.skipIf(noSymlinks)("skips entries that fail validation, such as symlinks leading outside", async () => {
    await fs.writeFile(path.join(outside, "leak.ts"), "");
    await fs.symlink(outside, inAllowed("escape"));
    const hits = await searchFilesWithValidation(allowed, "**/*", [allowed]);
    expect(hits.some((h) => h.includes("escape"))).toBe(false);
    expect(hits).toContain(inAllowed("readme.md"));
  });
});
