/**
 * replace_in_files (SPEC §22) in process, under both platform strategies, against a naive model: every
 * occurrence replaced line by line in each text file (binary ones skipped), CRLF kept, the report's
 * per-file counts and totals; dryRun writes nothing and lists the same; each name of a hard link rewritten,
 * a link to a file taken by its own name counted, others changed through once, links leading outside never followed; files that change between the count and the
 * write; the replacement limit, refused before anything is written. Counts run in the built worker.
 */
import fs from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { afterEach, beforeEach, expect, it } from "vitest";
import { MAX_FILE_REPLACEMENTS, replaceInFiles, type ReplaceFilesArgs } from "../../../src/editing/replace-files.js";
import { TextSink } from "../../../src/kernel/bounded.js";
import { Sandbox, type RewriteEngine, type Rewritten } from "../../../src/sandbox/index.js";
import type { RewriteOptions } from "../../../src/sandbox/rewrite.js";
import { describeEachStrategy, tempDir, currentRuntime } from "../../support/fixtures.js";

let base: string;
let root: string;
let outside: string;
let remove: () => Promise<void>;
beforeEach(async () => {
  const made = await tempDir("bfs-replace-");
  base = made.dir;
  remove = made.remove;
  root = path.join(base, "root");
  outside = path.join(base, "outside");
  fs.mkdirSync(root);
  fs.mkdirSync(outside);
});
afterEach(() => remove());

type Args = Partial<ReplaceFilesArgs> & { query: string; replacement: string };

async function run(
  args: Args,
  sandbox: Sandbox = new Sandbox(currentRuntime(), [root]),
  limit?: number,
): Promise<{ text: string; isError: boolean }> {
  const sink = new TextSink(1e9);
  try {
    const full: ReplaceFilesArgs = { path: root, excludePatterns: [], respectGitignore: true, dryRun: false, ...args };
    await replaceInFiles(sandbox, full, sink, { sandbox, descriptors: currentRuntime().descriptors, workers: currentRuntime().scanWorkers, limit });
    return { text: sink.render("x"), isError: false };
  } catch (error) {
    return { text: (error as Error).message, isError: true };
  }
}

const escapeRegex = (s: string): string => s.replace(/[\\^$.*+?()[\]{}|/]/g, "\\$&");

/** The naive model: each line (without its `\r\n`/`\n`) through String#replace, the endings put back. */
function model(text: string, args: Args): { text: string; count: number } {
  const core = args.regex ? args.query : escapeRegex(args.query);
  const source = args.wholeWord ? `(?<![A-Za-z0-9_])(?:${core})(?![A-Za-z0-9_])` : core;
  const re = new RegExp(source, `g${args.caseSensitive === false ? "i" : ""}`);
  const replacement = args.regex ? args.replacement : args.replacement.replaceAll("$", "$$$$");
  let count = 0;
  const lines = text.split("\n").map((raw, i, all) => {
    const crlf = i < all.length - 1 && raw.endsWith("\r");
    const line = crlf ? raw.slice(0, -1) : raw;
    count += [...line.matchAll(re)].length;
    const out = line.replace(re, replacement);
    // A replacement's line breaks take the line's ending.
    return crlf ? `${out.replace(/\r?\n/g, "\r\n")}\r` : out;
  });
  return { text: lines.join("\n"), count };
}

const WORDS = ["foo", "Foo", "foobar", "a_foo", "foo.", "$1", " ", "x", "é"];
const fileArb = fc.record({
  dir: fc.constantFrom("", "a", "a/b", "c"),
  name: fc.stringMatching(/^[a-z]{1,5}$/),
  lines: fc.array(
    fc.array(fc.constantFrom(...WORDS), { maxLength: 6 }).map((w) => w.join("")),
    { maxLength: 8 },
  ),
  crlf: fc.boolean(),
  binary: fc.boolean(),
});
const argsArb = fc.oneof(
  fc
    .record({
      query: fc.constantFrom("foo", "Foo", "o.", "$1"),
      replacement: fc.constantFrom("bar", "$1", "", "x\ny", "$&"),
      caseSensitive: fc.boolean(),
      wholeWord: fc.boolean(),
    })
    // A replacement equal to a case-sensitive query is refused (tested below).
    .filter((a) => !(a.caseSensitive && a.query === a.replacement)),
  fc
    .record({
      // Each query with the replacements whose groups it has (one naming a group it lacks is refused: tested below).
      pair: fc.constantFrom(
        ...[
          ["f(o+)", ["[$1]", "$&$&", "-", "$$1$`"]],
          ["(?<w>[a-z]+)_", ["[$1]", "<$<w>>", "$&$&", "-"]],
          ["^x", ["$&$&", "-", "$'"]],
          ["o$", ["$&$&", "-"]],
        ].flatMap(([query, replacements]) => (replacements as string[]).map((replacement) => ({ query: query as string, replacement }))),
      ),
      regex: fc.constant(true),
      caseSensitive: fc.boolean(),
      wholeWord: fc.boolean(),
    })
    .map(({ pair, ...rest }) => ({ ...pair, ...rest })),
);

function layOut(
  files: fc.Arbitrary<unknown> extends never ? never : { dir: string; name: string; lines: string[]; crlf: boolean; binary: boolean }[],
): Map<string, string> {
  const written = new Map<string, string>();
  for (const f of files) {
    const dir = path.join(root, f.dir);
    fs.mkdirSync(dir, { recursive: true });
    const p = path.join(dir, `${f.name}.txt`);
    const text = f.lines.join(f.crlf ? "\r\n" : "\n") + (f.binary ? "\0foo" : "");
    fs.writeFileSync(p, text);
    written.set(p, text);
  }
  return written;
}

function clear(): void {
  for (const name of fs.readdirSync(root)) fs.rmSync(path.join(root, name), { recursive: true, force: true });
}

const countLine = (p: string, n: number): string => `${p}: ${n} replacement${n === 1 ? "" : "s"}`;

describeEachStrategy("replace_in_files against a naive replace", (_, runtime) => {
  it("random trees: the same files afterwards, binary ones untouched, the same counts; dryRun lists the same and writes nothing", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fileArb, { minLength: 1, maxLength: 12 }), argsArb, async (files, args) => {
        clear();
        const written = layOut(files);
        const want = new Map<string, { text: string; count: number }>();
        for (const [p, text] of written) want.set(p, text.includes("\0") ? { text, count: 0 } : model(text, args));
        const changed = [...want].filter(([, w]) => w.count > 0);
        const total = changed.reduce((n, [, w]) => n + w.count, 0);
        const binary = [...written.values()].filter((t) => t.includes("\0")).length;
        const dry = await run({ ...args, dryRun: true });
        expect(dry.isError).toBe(false);
        for (const [p, text] of written) expect(fs.readFileSync(p, "utf8")).toBe(text);
        const done = await run(args);
        expect(done.isError).toBe(false);
        for (const [p, w] of want) expect(fs.readFileSync(p, "utf8"), p).toBe(w.text);
        const listed = (text: string) => text.split("\n").filter((l) => l.startsWith(root));
        const expectedList = changed.map(([p, w]) => countLine(p, w.count)).sort();
        expect(listed(dry.text).sort()).toEqual(expectedList);
        expect(listed(done.text).sort()).toEqual(expectedList);
        if (total === 0) expect(done.text).toMatch(/^No occurrences found; searched \d+ files?; nothing was written\./);
        else {
          expect(done.text.split("\n")[0]).toBe(
            `Replaced ${total.toLocaleString("en-US")} occurrence${total === 1 ? "" : "s"} in ${changed.length} file${changed.length === 1 ? "" : "s"}; ` +
              `searched ${written.size - binary} file${written.size - binary === 1 ? "" : "s"}.`,
          );
          expect(dry.text.split("\n")[0]).toContain(`would make ${total.toLocaleString("en-US")} replacement`);
        }
        if (binary > 0) expect(done.text).toContain(`Not searched: ${binary} file${binary === 1 ? "" : "s"} (${binary} binary)`);
        expect(fs.readdirSync(root, { recursive: true }).filter((n) => String(n).includes(".bfs-"))).toEqual([]);
      }),
      { numRuns: Number(process.env.RUNS ?? 40) },
    );
  }, 120_000);

  it("links: a file reached by a link inside is changed once, through to its target; a link leading outside is skipped and its target untouched", async () => {
    fs.writeFileSync(path.join(root, "real.txt"), "foo foo\n");
    fs.symlinkSync("real.txt", path.join(root, "alias.txt"));
    fs.writeFileSync(path.join(outside, "secret.txt"), "foo\n");
    fs.symlinkSync(path.join(outside, "secret.txt"), path.join(root, "out.txt"));
    fs.symlinkSync(outside, path.join(root, "outdir"));
    const done = await run({ query: "foo", replacement: "bar" });
    expect(done.isError).toBe(false);
    expect(fs.readFileSync(path.join(root, "real.txt"), "utf8")).toBe("bar bar\n");
    expect(fs.lstatSync(path.join(root, "alias.txt")).isSymbolicLink()).toBe(true);
    expect(fs.readFileSync(path.join(outside, "secret.txt"), "utf8")).toBe("foo\n");
    expect(done.text).toContain("Replaced 2 occurrences in 1 file");
    // The link to a file outside and the one to a directory outside; the link to real.txt, which is changed under its own name.
    expect(done.text).toContain(
      "Not searched: 3 files (2 symlinks leading outside the allowed directories; " +
        "1 symlink to a file inside the searched directory, not followed: each file is searched under its own name)",
    );
    expect(done.text.split("\n").filter((l) => l.endsWith(": 2 replacements"))).toHaveLength(1);
    expect(done.text).not.toContain(outside);
    // Named directly, a link leading outside is refused like any path outside.
    const direct = await run({ path: path.join(root, "out.txt"), query: "foo", replacement: "bar" });
    expect(direct.isError).toBe(true);
    expect(fs.readFileSync(path.join(outside, "secret.txt"), "utf8")).toBe("foo\n");
  });

  it("hard links: each name is rewritten once, as sed -i over grep -rl's list does, a name the call does not reach said to keep the old text (also by a dry run); a link to a file outside the searched directory is changed through, once", async () => {
    // foo -> foofoo: a name rewritten twice, or a name left out, shows in its text.
    fs.writeFileSync(path.join(root, "a.txt"), "foo\n");
    fs.linkSync(path.join(root, "a.txt"), path.join(root, "b-hard.txt"));
    fs.mkdirSync(path.join(root, "sub"));
    fs.linkSync(path.join(root, "a.txt"), path.join(root, "sub", "c-hard.txt"));
    fs.writeFileSync(path.join(root, "other.txt"), "foo foo\n");
    fs.symlinkSync("../other.txt", path.join(root, "sub", "to-other.txt"));
    fs.symlinkSync(path.join(root, "other.txt"), path.join(root, "sub", "to-other-again.txt"));
    const done = await run({ path: path.join(root, "sub"), query: "foo", replacement: "foofoo" });
    expect(done.isError).toBe(false);
    expect(done.text.split("\n")[0]).toBe("Replaced 3 occurrences in 2 files; searched 2 files.");
    expect(done.text).toContain("1 symlink to a file already searched through another symlink");
    expect(fs.readFileSync(path.join(root, "sub", "c-hard.txt"), "utf8")).toBe("foofoo\n");
    expect(fs.readFileSync(path.join(root, "other.txt"), "utf8")).toBe("foofoo foofoo\n");
    expect(fs.lstatSync(path.join(root, "sub", "to-other.txt")).isSymbolicLink()).toBe(true);
    // The whole root: a.txt, b-hard.txt and four more names, still one file object, are each rewritten once (sub/c-hard.txt
    // no longer matches). One after another: a name's swap changes the object's ctime, which a rewrite of another name
    // open meanwhile took for another writer ("File changed during edit").
    const names = ["a.txt", "b-hard.txt", "d1.txt", "d2.txt", "d3.txt", "d4.txt"];
    for (const name of names.slice(2)) fs.linkSync(path.join(root, "a.txt"), path.join(root, name));
    const all = await run({ query: "^foo$", replacement: "bar", regex: true });
    expect(all.text.split("\n")[0]).toBe("Replaced 6 occurrences in 6 files; searched 8 files.");
    for (const name of names) expect(fs.readFileSync(path.join(root, name), "utf8")).toBe("bar\n");
    // Every name was reached: no line says another keeps the old text.
    expect(all.text).not.toContain("other name");
    // Two names of one file, the call reaching one of them (pattern): its line says the other keeps the old text.
    fs.writeFileSync(path.join(root, "p.txt"), "foo\n");
    fs.linkSync(path.join(root, "p.txt"), path.join(root, "q.log"));
    // The dry run says the same of the file it would change; of a name it would reach too, nothing; nothing written.
    const dry = await run({ query: "foo", replacement: "baz", pattern: "p.txt", dryRun: true });
    expect(dry.text).toBe(
      `Dry run, nothing written: would make 1 replacement in 1 file; searched 1 file.\n${root}/p.txt: 1 replacement; 1 other name (a hard link) would keep the previous text`,
    );
    const dryFile = await run({ path: path.join(root, "p.txt"), query: "foo", replacement: "baz", dryRun: true });
    expect(dryFile.text).toContain(`${root}/p.txt: 1 replacement; 1 other name (a hard link) would keep the previous text`);
    const dryBoth = await run({ query: "foo", replacement: "baz", pattern: "{p.txt,q.log}", dryRun: true });
    expect(dryBoth.text).toContain("would make 2 replacements in 2 files");
    expect(dryBoth.text).not.toContain("other name");
    expect(fs.readFileSync(path.join(root, "p.txt"), "utf8")).toBe("foo\n");
    const one = await run({ query: "foo", replacement: "baz", pattern: "p.txt" });
    expect(one.text).toBe(
      `Replaced 1 occurrence in 1 file; searched 1 file.\n${root}/p.txt: 1 replacement; 1 other name (a hard link) keeps the previous text`,
    );
    expect(fs.readFileSync(path.join(root, "q.log"), "utf8")).toBe("foo\n");
  });

  it("a file with a line over 16 MiB is left unchanged, named with the line and what can replace in it; the others are changed", async () => {
    const long = Buffer.concat([Buffer.alloc(17 * 1024 * 1024, "x"), Buffer.from("foo\nfoo\n")]);
    fs.writeFileSync(path.join(root, "long.txt"), long);
    fs.writeFileSync(path.join(root, "short.txt"), "foo\n");
    const done = await run({ query: "foo", replacement: "bar" });
    expect(done.text.split("\n")[0]).toBe(
      "Replaced 1 occurrence in 1 file; searched 2 files. Not changed: 1 file that held occurrences when counted (listed first).",
    );
    expect(done.text).toContain(
      `${root}/long.txt: not changed: ${root}/long.txt has a line over 16,777,216 bytes (line 1); not changed ` +
        "(edit_file with replaceAll replaces an exact text in lines of any length)",
    );
    expect(fs.readFileSync(path.join(root, "long.txt")).equals(long)).toBe(true);
    expect(fs.readFileSync(path.join(root, "short.txt"), "utf8")).toBe("bar\n");
  });

  it("a file changed between the count and its write: its new occurrences are replaced and the drift said; one left without any is not rewritten", async () => {
    fs.writeFileSync(path.join(root, "grows.txt"), "foo\n");
    fs.writeFileSync(path.join(root, "empties.txt"), "foo\n");
    const before = fs.statSync(path.join(root, "empties.txt"));
    // The sandbox hears each rewrite first: a writer gets there just before it.
    class Meddling extends Sandbox {
      override rewrite<T>(requested: string, options: RewriteOptions, engine: RewriteEngine<T>): Promise<Rewritten<T>> {
        if (requested.endsWith("grows.txt")) fs.writeFileSync(requested, "foo foo\nfoo\n");
        if (requested.endsWith("empties.txt")) fs.writeFileSync(requested, "bar\n");
        return super.rewrite(requested, options, engine);
      }
    }
    const done = await run({ query: "foo", replacement: "baz" }, new Meddling(runtime, [root]));
    expect(fs.readFileSync(path.join(root, "grows.txt"), "utf8")).toBe("baz baz\nbaz\n");
    expect(fs.readFileSync(path.join(root, "empties.txt"), "utf8")).toBe("bar\n");
    expect(fs.statSync(path.join(root, "empties.txt")).ino).toBe(before.ino);
    expect(done.text).toContain(`${root}/grows.txt: 3 replacements (1 when counted: the file changed meanwhile)`);
    expect(done.text).toContain(`${root}/empties.txt: not changed: no occurrence left`);
    expect(done.text.split("\n")[0]).toBe(
      "Replaced 3 occurrences in 1 file; searched 2 files. Not changed: 1 file that held occurrences when counted (listed first).",
    );
  });

  it("a file that fails is named as not changed, the others are changed", async () => {
    fs.writeFileSync(path.join(root, "ok.txt"), "foo\n");
    fs.writeFileSync(path.join(root, "bad.txt"), Buffer.concat([Buffer.from("foo \xff\n", "latin1")]));
    const done = await run({ query: "foo", replacement: "bar" });
    expect(fs.readFileSync(path.join(root, "ok.txt"), "utf8")).toBe("bar\n");
    expect(fs.readFileSync(path.join(root, "bad.txt"))).toEqual(Buffer.from("foo \xff\n", "latin1"));
    expect(done.text).toContain(`${root}/bad.txt: not changed: ${root}/bad.txt is not valid UTF-8 at line 1; not changed`);
    expect(done.text).toContain(`${root}/ok.txt: 1 replacement`);
  });

  it(`refuses past ${MAX_FILE_REPLACEMENTS.toLocaleString("en-US")} replacements before writing anything, naming the limit, and takes a call at it`, async () => {
    fs.writeFileSync(path.join(root, "a.txt"), "x\n".repeat(MAX_FILE_REPLACEMENTS - 1));
    fs.writeFileSync(path.join(root, "b.txt"), "x x\n");
    const over = await run({ query: "x", replacement: "y" });
    expect(over.isError).toBe(true);
    expect(over.text).toBe(
      "replace_in_files would make 100,001 replacements in 2 files, more than the limit of 100,000 a call; nothing was written. " +
        "Narrow path, pattern or the query, or split the change into calls.",
    );
    expect(fs.readFileSync(path.join(root, "b.txt"), "utf8")).toBe("x x\n");
    fs.writeFileSync(path.join(root, "b.txt"), "x\n");
    const at = await run({ query: "x", replacement: "y" });
    expect(at.text.split("\n")[0]).toBe("Replaced 100,000 occurrences in 2 files; searched 2 files.");
    expect(fs.readFileSync(path.join(root, "a.txt"), "utf8")).toBe("y\n".repeat(MAX_FILE_REPLACEMENTS - 1));
  }, 60_000);

  it("a small limit: refused naming it; a file that grew past it after the count is refused alone, the others changed", async () => {
    fs.writeFileSync(path.join(root, "a.txt"), "foo foo foo\n");
    const refused = await run({ query: "foo", replacement: "bar" }, undefined, 2);
    expect(refused.text).toContain("more than the limit of 2 a call; nothing was written");
    expect(fs.readFileSync(path.join(root, "a.txt"), "utf8")).toBe("foo foo foo\n");
    // Counted 2 of a limit of 3; one file then grows by two, past the one replacement of room: it alone is refused.
    fs.writeFileSync(path.join(root, "a.txt"), "foo\n");
    fs.writeFileSync(path.join(root, "b.txt"), "foo\n");
    class Growing extends Sandbox {
      override rewrite<T>(requested: string, options: RewriteOptions, engine: RewriteEngine<T>): Promise<Rewritten<T>> {
        if (requested.endsWith("a.txt")) fs.writeFileSync(requested, "foo foo foo\n");
        return super.rewrite(requested, options, engine);
      }
    }
    const grown = await run({ query: "foo", replacement: "bar" }, new Growing(runtime, [root]), 3);
    expect(fs.readFileSync(path.join(root, "a.txt"), "utf8")).toBe("foo foo foo\n");
    expect(fs.readFileSync(path.join(root, "b.txt"), "utf8")).toBe("bar\n");
    expect(grown.text).toContain(`${root}/a.txt: not changed: it would pass the limit of 3 replacements a call (the file grew after it was counted)`);
    expect(grown.text).toContain(`${root}/b.txt: 1 replacement`);
    expect(grown.text.split("\n")[0]).toMatch(/^Replaced 1 occurrence in 1 file; searched 2 files\. Not changed: 1 file/);
  });

  it("refuses a replacement that would change no occurrence, writing nothing; one that would in another case runs", async () => {
    fs.writeFileSync(path.join(root, "a.txt"), "foo Foo\n");
    const same = await run({ query: "foo", replacement: "foo" });
    expect(same).toEqual({
      isError: true,
      text: "replacement equals query, so no occurrence would change; nothing was written. Put the new text in replacement.",
    });
    const whole = await run({ query: "f(o)o", replacement: "$&", regex: true });
    expect(whole.isError).toBe(true);
    expect(whole.text).toMatch(/^replacement \$& puts back each match as it is, so no occurrence would change; nothing was written\./);
    expect(fs.readFileSync(path.join(root, "a.txt"), "utf8")).toBe("foo Foo\n");
    // Case-insensitive, the query's own spelling replaces the other's.
    const folded = await run({ query: "foo", replacement: "foo", caseSensitive: false });
    expect(folded.text.split("\n")[0]).toBe("Replaced 2 occurrences in 1 file; searched 1 file.");
    expect(fs.readFileSync(path.join(root, "a.txt"), "utf8")).toBe("foo foo\n");
  });

  it("refuses a query with a line break, an empty query and an invalid regex, naming them", async () => {
    fs.writeFileSync(path.join(root, "a.txt"), "foo\n");
    expect((await run({ query: "a\nb", replacement: "" })).text).toMatch(/query holds a line break.*edit_file/);
    expect((await run({ query: "", replacement: "" })).text).toBe("query must not be empty");
    expect((await run({ query: "(", replacement: "", regex: true })).text).toMatch(/^query is not a valid regular expression/);
    expect(fs.readFileSync(path.join(root, "a.txt"), "utf8")).toBe("foo\n");
  });

  it("refuses a regex replacement naming a group the query lacks, or written as sed's, naming it and writing nothing", async () => {
    // JavaScript writes each of these as it stands (or, `$<x>` with other named groups, as nothing), in every file.
    fs.writeFileSync(path.join(root, "a.txt"), "a1 b2\n");
    const refused: Array<[string, string, RegExp]> = [
      ["([a-z])([0-9])", "\\2\\1", /^replacement: \\2 is sed's way to insert a group.*nothing was written\. Write \$2 for the group/],
      ["([a-z])", "<$3>", /^replacement: \$3 names no group \(the query has 1 group, \$1\) and would be written as it stands; nothing was written\./],
      ["[a-z]", "$1", /^replacement: \$1 names no group \(the query has no group\)/],
      ["([a-z])([0-9])", "$9", /^replacement: \$9 names no group \(the query has 2 groups, \$1 to \$2\)/],
      ["([a-z])", "$0", /^replacement: \$0 would be written as it stands; nothing was written\. Write \$& for the whole match/],
      ["([a-z])", "$<x>", /^replacement: \$<x> names no group \(the query names none\)/],
      ["(?<l>[a-z])(?<d>[0-9])", "$<x>", /^replacement: \$<x> names no group \(the query's are \$<l>, \$<d>\) and would insert nothing/],
      // A long name is cut at 40 characters, a control character in it escaped.
      ["([a-z])", `$<${"n".repeat(50)}\n>`, new RegExp(`^replacement: \\$<${"n".repeat(40)}…> names no group \\(the query names none\\)`)],
    ];
    for (const [query, replacement, message] of refused) {
      const result = await run({ query, replacement, regex: true });
      expect(result.isError).toBe(true);
      expect(result.text).toMatch(message);
    }
    expect(fs.readFileSync(path.join(root, "a.txt"), "utf8")).toBe("a1 b2\n");
    // What JavaScript reads as written: $$, $&, $` and $', two digits naming a group, else one and a digit; ${…}
    // and a $< never closed are text; a backslash before anything but a digit is text.
    const accepted: Array<[string, string]> = [
      ["(?<l>[a-z])(?<d>[0-9])", "$<d>$<l>$$1$&$`$'$<"],
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the text ${x}, as a template literal in a replaced file holds it.
      ["([a-z])", "${x}$1"],
      ["([a-z])", "$10$01"],
      ["([a-z])", "\\n\\$1"],
    ];
    for (const [query, replacement] of accepted) {
      fs.writeFileSync(path.join(root, "a.txt"), "a1 b2\n");
      const result = await run({ query, replacement, regex: true });
      expect(result.isError).toBe(false);
      expect(fs.readFileSync(path.join(root, "a.txt"), "utf8")).toBe(`${"a1 b2".replace(new RegExp(query, "g"), replacement)}\n`);
    }
    // Without regex the replacement is text, whatever it holds.
    fs.writeFileSync(path.join(root, "a.txt"), "a1 b2\n");
    expect((await run({ query: "a1", replacement: "\\1$3$0" })).isError).toBe(false);
    expect(fs.readFileSync(path.join(root, "a.txt"), "utf8")).toBe("\\1$3$0 b2\n");
  });

  it("one file named by path; pattern and excludePatterns choose the files", async () => {
    fs.mkdirSync(path.join(root, "src"));
    fs.writeFileSync(path.join(root, "src", "a.ts"), "foo\n");
    fs.writeFileSync(path.join(root, "src", "b.md"), "foo\n");
    fs.writeFileSync(path.join(root, "c.ts"), "foo\n");
    const one = await run({ path: path.join(root, "c.ts"), query: "foo", replacement: "bar" });
    expect(one.text).toBe(`Replaced 1 occurrence in 1 file; searched 1 file.\n${root}/c.ts: 1 replacement`);
    const ts = await run({ query: "foo", replacement: "baz", pattern: "**/*.ts", excludePatterns: ["c.ts"] });
    expect(ts.text).toBe(`Replaced 1 occurrence in 1 file; searched 1 file.\n${root}/src/a.ts: 1 replacement`);
    expect(fs.readFileSync(path.join(root, "src", "b.md"), "utf8")).toBe("foo\n");
  });
});
