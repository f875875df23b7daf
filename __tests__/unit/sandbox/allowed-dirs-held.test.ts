/**
 * An allowed directory is never moved, deleted or replaced (issue 28 row 6, SPEC §15), through the tools in
 * process under both platform strategies, whatever the spelling: a directory that is or holds one cannot be
 * moved or deleted (named plainly, with a trailing separator, with `.` and `..`, through a link in its
 * parent, or when the allowed directory itself is spelled through a link), and nothing is copied or moved
 * onto one. Refusals are values: tested by kind and fields, through the sandbox; by text, through the tools.
 *
 * Regression guard: delete_file's "never an allowed directory" was bypassed by moving the parent first;
 * `move_file` of the parent, then `delete_file` of the moved tree, and the nested allowed directory was gone.
 */
import { mkdir, readdir, readFile, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { type CallToolResult, CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeEach, expect, it } from "vitest";
import { DEFAULTS } from "../../../src/cli/config.js";
import { Sandbox } from "../../../src/sandbox/index.js";
import { buildServer } from "../../../src/server/index.js";
import { describeEachStrategy, tempDir, currentRuntime } from "../../support/fixtures.js";

let root: string;
let remove: () => Promise<void>;
const at = (name: string) => path.join(root, name);
const textOf = (r: CallToolResult): string => (r.content[0]?.type === "text" ? r.content[0].text : "");

beforeEach(async () => {
  ({ dir: root, remove } = await tempDir("bfs-allowed-held-"));
  // root/x/nested is an allowed directory of its own; root/alias is a link to root/x.
  await mkdir(at("x/nested/deep"), { recursive: true });
  await writeFile(at("x/nested/deep/keep.txt"), "keep\n");
  await writeFile(at("x/other.txt"), "other\n");
  await symlink("x", at("alias"));
  await writeFile(at("src.txt"), "src\n");
});
afterEach(() => remove());

/** An in-process server over `dirs`, and a caller of its tools. */
async function serve(
  dirs: string[],
): Promise<{ call: (name: string, args: Record<string, unknown>) => Promise<CallToolResult>; close: () => Promise<void> }> {
  const server = buildServer({
    runtime: currentRuntime(),
    limits: { ...DEFAULTS, maxResultChars: 100_000 },
    directories: dirs,
    log: () => undefined,
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "allowed-held-test", version: "1.0.0" });
  await client.connect(clientSide);
  return {
    call: async (name, args) => (await client.callTool({ name, arguments: args }, CallToolResultSchema)) as CallToolResult,
    close: async () => {
      await client.close();
      await server.close();
    },
  };
}

/** The nested allowed directory is where it was, with what it holds. */
async function expectNestedIntact(): Promise<void> {
  expect(await readFile(at("x/nested/deep/keep.txt"), "utf8")).toBe("keep\n");
  expect(await readFile(at("x/other.txt"), "utf8")).toBe("other\n");
}

describeEachStrategy("a directory that is or holds an allowed directory", (_, runtime) => {
  for (const spelled of ["plainly", "through a link"] as const) {
    it(`is never moved or deleted, in any spelling (the nested allowed directory named ${spelled})`, async () => {
      const nested = spelled === "plainly" ? at("x/nested") : at("alias/nested");
      const s = await serve([root, nested]);
      try {
        const sources = [at("x"), `${at("x")}/`, at("./x"), at("x/nested/.."), at("alias/../x"), nested, `${nested}/`, at("x/nested")];
        for (const source of sources) {
          const moved = await s.call("move_file", { source, destination: at("y") });
          expect(moved.isError, `move_file ${source}: ${textOf(moved)}`).toBe(true);
          expect(textOf(moved)).toMatch(/(it holds|it is) one of the allowed directories/);
          // The red team's sequence: delete where the move would have put it, and the source itself.
          const afterMove = await s.call("delete_file", { path: at("y"), recursive: true });
          expect(afterMove.isError, textOf(afterMove)).toBe(true);
          const deleted = await s.call("delete_file", { path: source, recursive: true });
          expect(deleted.isError, `delete_file ${source}: ${textOf(deleted)}`).toBe(true);
          expect(textOf(deleted)).toMatch(/(it holds|it is) one of the allowed directories/);
          await expectNestedIntact();
        }
        // Nothing is copied or moved onto one, nor onto a directory holding one.
        for (const destination of [at("x"), `${at("x")}/`, nested, `${nested}/`, at("x/nested")]) {
          for (const [tool, args] of [
            ["copy_file", { source: at("src.txt"), destination }],
            ["move_file", { source: at("src.txt"), destination }],
          ] as const) {
            const r = await s.call(tool, args);
            expect(r.isError, `${tool} onto ${destination}: ${textOf(r)}`).toBe(true);
          }
        }
        await expectNestedIntact();
        expect(await readFile(at("src.txt"), "utf8")).toBe("src\n");
        // Moving the link itself moves no directory: allowed, unless the allowed directory is spelled through it.
        const link = await s.call("move_file", { source: at("alias"), destination: at("alias2") });
        expect(link.isError ?? false, textOf(link)).toBe(spelled === "through a link");
        await expectNestedIntact();
        expect((await readdir(root)).sort()).toEqual([spelled === "plainly" ? "alias2" : "alias", "src.txt", "x"]);
      } finally {
        await s.close();
      }
    });
  }

  it("is refused as a value naming the kind, the path as given and the allowed directory", async () => {
    const nested = at("alias/nested");
    const sandbox = new Sandbox(runtime, [root, nested]);
    const refusalOf = (p: Promise<unknown>): Promise<unknown> =>
      p.then(
        () => "done",
        (e: unknown) => (e as { refusal?: unknown }).refusal,
      );
    expect(await refusalOf(sandbox.move(at("x"), at("y")))).toEqual({
      kind: "holdsAllowed",
      action: "move",
      path: at("x"),
      allowed: nested,
      itself: false,
    });
    expect(await refusalOf(sandbox.delete(at("x"), { recursive: true }))).toEqual({
      kind: "holdsAllowed",
      action: "delete",
      path: at("x"),
      allowed: nested,
      itself: false,
    });
    // The allowed directory itself, named by its real path while it is spelled through a link.
    expect(await refusalOf(sandbox.delete(at("x/nested"), { recursive: true }))).toEqual({
      kind: "holdsAllowed",
      action: "delete",
      path: at("x/nested"),
      allowed: nested,
      itself: true,
    });
    await expectNestedIntact();
  });
});
