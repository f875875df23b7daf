/**
 * Findings of the fourth red-team pass (issue 28) that a client sees through the tools, each
 * reproduced through an in-process server under both platform strategies: names that reorder
 * or hide text (row 17), an empty oldText (row 15).
 */
import fs from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeEach, expect, it } from "vitest";
import { DEFAULTS } from "../src/cli/config.js";
import { buildServer } from "../src/server/index.js";
import { describeEachStrategy, tempDir } from "./support/fixtures.js";

let dir: string;
let remove: () => Promise<void>;
let client: Client;
let closeAll: () => Promise<void>;

beforeEach(async () => {
  ({ dir, remove } = await tempDir("red-team-four-"));
  const server = buildServer({ limits: { ...DEFAULTS, maxResultChars: 100_000 }, directories: [dir], log: () => undefined });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  client = new Client({ name: "red-team-four", version: "1.0.0" });
  await client.connect(clientSide);
  closeAll = async () => {
    await client.close();
    await server.close();
  };
});

afterEach(async () => {
  await closeAll();
  await remove();
});

async function call(name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

const textOf = (r: CallToolResult): string => (r.content[0]?.type === "text" ? r.content[0].text : "");

// Every character that reorders or hides text in a name, as the red team used them.
const INVISIBLE = [
  "\u202a",
  "\u202b",
  "\u202c",
  "\u202d",
  "\u202e",
  "\u2066",
  "\u2067",
  "\u2068",
  "\u2069",
  "\u200b",
  "\u200c",
  "\u200d",
  "\u2060",
  "\ufeff",
];
const escaped = (ch: string): string => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`;

describeEachStrategy("issue 28 row 17: names are shown escaped once, invisible characters included", () => {
  it("the diff header shows a name with a CR escaped once, not C-quoted on top", async () => {
    const file = path.join(dir, "cr\rFAKE.txt");
    fs.writeFileSync(file, "one\ntwo\n");
    const result = await call("edit_file", { path: file, edits: [{ oldText: "two", newText: "2" }], dryRun: true });
    const text = textOf(result);
    const shown = path.join(dir, "cr\\rFAKE.txt");
    expect(result.isError).toBeFalsy();
    expect(text).toContain(`\nIndex: ${shown}\n`);
    expect(text).toContain(`\n--- ${shown}\toriginal\n+++ ${shown}\tmodified\n`);
    expect(text).not.toContain("\\\\r");
  });

  it("bidi controls and zero-width characters are escaped in listings, searches, diffs, results and errors", async () => {
    const names = INVISIBLE.map((ch, i) => `n${i}${ch}txt.exe`);
    for (const name of names) fs.writeFileSync(path.join(dir, name), "old\n");
    const listed = textOf(await call("list_directory", { path: dir }));
    const sized = textOf(await call("list_directory_with_sizes", { path: dir }));
    const found = textOf(await call("search_files", { path: dir, pattern: "*.exe" }));
    const tree = textOf(await call("directory_tree", { path: dir }));
    for (const [i, name] of names.entries()) {
      const shownName = `n${i}${escaped(INVISIBLE[i] as string)}txt.exe`;
      expect(listed).toContain(`[FILE] ${shownName}`);
      expect(sized).toContain(`[FILE] ${shownName}`);
      expect(found).toContain(path.join(dir, shownName));
      // The tree is JSON: the character is written as a JSON escape, so it reads back as the name.
      expect(tree).toContain(`"${shownName}"`);
      const file = path.join(dir, name);
      const diff = textOf(await call("edit_file", { path: file, edits: [{ oldText: "old", newText: "new" }], dryRun: true }));
      expect(diff).toContain(`--- ${path.join(dir, shownName)}\toriginal`);
      const wrote = textOf(await call("write_file", { path: file, content: "x" }));
      expect(wrote).toContain(path.join(dir, shownName));
      const missing = await call("read_text_file", { path: path.join(dir, `${name}.missing`) });
      expect(missing.isError).toBe(true);
      expect(textOf(missing)).toContain(`${shownName}.missing`);
    }
    for (const text of [listed, sized, found, tree]) {
      for (const ch of INVISIBLE) expect(text).not.toContain(ch);
    }
  });
});

describeEachStrategy("issue 28 row 15: an empty oldText is refused, not applied as a prepend", () => {
  it("refuses it naming edits[i].oldText and leaves the file as it was", async () => {
    const file = path.join(dir, "f.txt");
    fs.writeFileSync(file, "body\n");
    for (const edits of [
      [{ oldText: "", newText: "head\n" }],
      [
        { oldText: "body", newText: "b" },
        { oldText: "", newText: "x", replaceAll: true },
      ],
    ]) {
      const result = await call("edit_file", { path: file, edits });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(new RegExp(`^edits\\[${edits.length - 1}\\]\\.oldText is empty: .*nothing was written`));
      expect(fs.readFileSync(file, "utf8")).toBe("body\n");
    }
  });
});
