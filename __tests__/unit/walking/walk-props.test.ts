import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TextSink } from "../../../src/kernel/bounded.js";
import { escapeControls } from "../../../src/kernel/escape.js";
import { searchFilesWithValidation, setAllowedDirectories } from "../../../src/lib.js";
import { searchInto, treeInto } from "../../../src/walking/index.js";
import { GlobOutcome } from "../../../src/walking/patterns.js";
import { createRuntime } from "../../../src/server/runtime.js";
import { walkOptions } from "../../support/fixtures.js";
import { bigSink, buildTreeInMemory, capWithEntries, lineEnds, searchReference, searchText } from "../../support/walk-reference.js";

const runtime = createRuntime();

type Node =
  | { kind: "file"; name: string }
  | { kind: "link"; name: string; to: "inside" | "outside" | "sibling" | "quoted" | "dangling" | "loop" }
  | { kind: "dir"; name: string; children: Node[] };

// Characters that stress JSON escaping and glob matching; "/" and NUL cannot occur in names.
const UNITS = ["a", "b", "x", ".", "-", " ", '"', "\\", "\n", "\t", "\u2028", "é", "\u{1F600}", "*", "?", "[", "{", ",", "#", "'"];
const nameArb = fc.string({ unit: fc.constantFrom(...UNITS), minLength: 1, maxLength: 6 }).filter((n) => n !== "." && n !== "..");

const leafArb: fc.Arbitrary<Node> = fc.oneof(
  { weight: 4, arbitrary: nameArb.map((name): Node => ({ kind: "file", name })) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("link" as const),
      name: nameArb,
      to: fc.constantFrom("inside" as const, "outside" as const, "sibling" as const, "quoted" as const, "dangling" as const, "loop" as const),
    }),
  },
);

function nodeArb(depth: number): fc.Arbitrary<Node> {
  if (depth === 0) return leafArb;
  return fc.oneof(leafArb, dirArb(depth - 1));
}

function dirArb(depth: number): fc.Arbitrary<Node> {
  return fc.record({
    kind: fc.constant("dir" as const),
    name: nameArb,
    children: fc.uniqueArray(nodeArb(depth), { selector: (n) => n.name, maxLength: 5 }),
  });
}

const childrenArb = fc.uniqueArray(nodeArb(3), { selector: (n) => n.name, maxLength: 6 });

function namesOf(nodes: Node[]): string[] {
  return nodes.flatMap((n) => [n.name, ...(n.kind === "dir" ? namesOf(n.children) : [])]);
}

const patternArb = (nodes: Node[]): fc.Arbitrary<string> => {
  const fixed = fc.constantFrom("*", "**", "**/*", "*a*", "**/.*", "**/*x", "*/**", "**/[ab]*", "{a,b}", "#c");
  const names = namesOf(nodes);
  if (names.length === 0) return fixed;
  const name = fc.constantFrom(...names);
  return fc.oneof(
    fixed,
    name,
    name.map((n) => `**/${n}`),
    name.map((n) => `${n}*`),
  );
};

let tmp: string;
let outside: string;
let run = 0;

beforeAll(() => {
  tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "walk-props-")));
  outside = path.join(tmp, "outside");
  fs.mkdirSync(outside);
});

afterAll(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

function materialize(root: string, dir: string, nodes: Node[]): void {
  for (const node of nodes) {
    const p = path.join(dir, node.name);
    if (node.kind === "file") fs.writeFileSync(p, "");
    else if (node.kind === "dir") {
      fs.mkdirSync(p);
      materialize(root, p, node.children);
    } else {
      // "sibling" is `<root> ` and "quoted" `<root>"`: outside, but equal to the root once
      // trailing whitespace or a quote is trimmed.
      const target = {
        inside: root,
        outside,
        sibling: `${root} `,
        quoted: `${root}"`,
        dangling: path.join(dir, "~missing~"),
        loop: p,
      }[node.to];
      fs.symlinkSync(target, p);
    }
  }
}

function freshRoot(nodes: Node[]): string {
  const root = path.join(tmp, `r${run++}`);
  fs.mkdirSync(root);
  fs.mkdirSync(`${root} `);
  fs.mkdirSync(`${root}"`);
  materialize(root, root, nodes);
  return root;
}

describe("streamed walks equal the in-memory reference", () => {
  it("directory_tree JSON, whole and capped", async () => {
    await fc.assert(
      fc.asyncProperty(
        childrenArb.chain((nodes) => fc.tuple(fc.constant(nodes), fc.array(patternArb(nodes), { maxLength: 3 }), fc.nat({ max: 2000 }))),
        async ([nodes, excludes, rawMax]) => {
          const root = freshRoot(nodes);
          // The tool also writes the controls JSON leaves raw (DEL, C1, U+2028/9) as \u escapes (SPEC §13).
          const expected = JSON.stringify(await buildTreeInMemory(root, excludes), null, 2).replace(
            /[\u007f-\u009f\u2028\u2029]/g,
            (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`,
          );
          const whole = bigSink();
          await treeInto(root, excludes, whole, walkOptions(runtime, [root]));
          expect(whole.render("advice")).toBe(expected);

          const max = Math.max(1, Math.min(rawMax, expected.length + 1));
          const capped = new TextSink(max);
          await treeInto(root, excludes, capped, walkOptions(runtime, [root]));
          expect(capped.total).toBe(expected.length);
          const ends = [...expected.matchAll(/"children": \[|"file"\n *\}|"depthLimited": true\n *\}/g)].map((m) => m.index + m[0].length);
          expect(capped.render("advice")).toBe(capWithEntries(expected, max, "advice", ends));
        },
      ),
      { numRuns: 60 },
    );
  });

  it("search_files results equal upstream's algorithm and lib.ts's searchFilesWithValidation, whole and capped", async () => {
    await fc.assert(
      fc.asyncProperty(
        childrenArb.chain((nodes) =>
          fc.tuple(fc.constant(nodes), patternArb(nodes), fc.array(patternArb(nodes), { maxLength: 2 }), fc.nat({ max: 500 })),
        ),
        async ([nodes, pattern, excludes, rawMax]) => {
          const root = freshRoot(nodes);
          const reference = await searchReference(root, pattern, excludes, [root]);
          setAllowedDirectories([root]);
          const fromLib = await searchFilesWithValidation(root, pattern, [root], { excludePatterns: excludes });
          expect(searchText(fromLib)).toBe(searchText(reference));
          // The tool shows control characters in names escaped (SPEC §13); lib.ts keeps upstream's raw paths.
          // The tool ends with a note on the pattern: here, whether a slash-free one left out a deeper entry that **\/pattern
          // matches by upstream's own algorithm (not one it matched itself, as ** does, nor a link, which may lead outside);
          // with no match, the pattern's form.
          const anyDepth = pattern.includes("/") || pattern === "" ? [] : await searchReference(root, `**/${pattern}`, excludes, [root]);
          const matched = new Set(reference);
          const deeper = anyDepth.some((p) => !matched.has(p) && path.dirname(p) !== root && !fs.lstatSync(p).isSymbolicLink());
          const note = deeper
            ? `\nNote: pattern holds no /, so it is matched against the entries directly inside the directory searched; **/${escapeControls(pattern)} matches deeper ones too.`
            : reference.length > 0
              ? ""
              : new GlobOutcome(pattern).note("pattern", root);
          const listed = searchText(reference.map(escapeControls));
          const expected = listed + note;
          const whole = bigSink();
          await searchInto(root, pattern, excludes, whole, walkOptions(runtime, [root]));
          expect(whole.render("advice")).toBe(expected);

          const max = Math.max(1, Math.min(rawMax, expected.length + 1));
          const capped = new TextSink(max);
          await searchInto(root, pattern, excludes, capped, walkOptions(runtime, [root]));
          expect(capped.total).toBe(expected.length);
          expect(capped.render("advice")).toBe(capWithEntries(expected, max, "advice", reference.length === 0 ? [] : lineEnds(listed)));
        },
      ),
      { numRuns: 60 },
    );
  });
});
