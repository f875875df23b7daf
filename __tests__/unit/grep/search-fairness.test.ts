/**
 * Concurrent searches do not starve other calls (issue 28 row 13), in process (buildServer +
 * InMemoryTransport + the SDK client): with 8 search_file_contents calls all in the middle of
 * their walks — held there by a gate the test controls, not by a timer — a ping and another tool
 * call are answered, and only then do the searches finish, with their exact totals.
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { CallToolResultSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { DEFAULTS } from "../../../src/cli/config.js";
import { buildServer } from "../../../src/server/index.js";
import { describeEachStrategy, tempDir } from "../../support/fixtures.js";

// The gate: a walk of the tree stops after its first file until the test opens it.
const gate = vi.hoisted(() => {
  let open: () => void = () => undefined;
  const state = { arrived: 0, opened: Promise.resolve(), onArrive: (): void => undefined };
  return {
    state,
    close(): void {
      state.arrived = 0;
      state.opened = new Promise<void>((resolve) => {
        open = resolve;
      });
    },
    open: (): void => open(),
  };
});

vi.mock("../../../src/walking/walker.js", async (importOriginal) => {
  const original = await importOriginal<typeof import("../../../src/walking/walker.js")>();
  const walkTree: typeof original.walkTree = (root, visitor, opts) => {
    let entered = 0;
    return original.walkTree(
      root,
      {
        excluded: (rel) => visitor.excluded(rel),
        enter(dir, entry, rel, depth, reach) {
          const done = visitor.enter(dir, entry, rel, depth, reach);
          if (!root.endsWith("tree") || ++entered !== 1) return done;
          gate.state.arrived++;
          gate.state.onArrive();
          return Promise.resolve(done).then(() => gate.state.opened);
        },
        leave: (depth, cut) => visitor.leave(depth, cut),
      },
      opts,
    );
  };
  return { ...original, walkTree };
});

const SEARCHES = 8;
const FILES = 200;
let root: string;
let remove: () => Promise<void>;

beforeAll(async () => {
  ({ dir: root, remove } = await tempDir("bfs-fair-"));
  const tree = path.join(root, "tree");
  await mkdir(tree);
  for (let i = 0; i < FILES; i++) await writeFile(path.join(tree, `f${i}.txt`), "a needle here\nnothing\nneedle again\n");
});

afterAll(async () => {
  await remove();
});

describeEachStrategy("searches in flight", (_, runtime) => {
  it("a ping and another call are answered while 8 searches are mid-walk; the searches then finish exact", async () => {
    const server = buildServer({ runtime, limits: { ...DEFAULTS, maxResultChars: 100_000 }, directories: [root], log: () => undefined });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: "fairness-test", version: "1.0.0" });
    await client.connect(clientSide);
    try {
      gate.close();
      const allArrived = new Promise<void>((resolve) => {
        gate.state.onArrive = () => {
          if (gate.state.arrived === SEARCHES) resolve();
        };
      });
      const order: string[] = [];
      const searches = Array.from({ length: SEARCHES }, (_, i) =>
        client
          .callTool(
            { name: "search_file_contents", arguments: { path: path.join(root, "tree"), query: "needle", outputMode: "count" } },
            CallToolResultSchema,
          )
          .then((r) => {
            order.push(`search ${i}`);
            return r as CallToolResult;
          }),
      );
      await allArrived;
      await client.ping();
      order.push("ping");
      const listed = (await client.callTool({ name: "list_allowed_directories", arguments: {} }, CallToolResultSchema)) as CallToolResult;
      order.push("list_allowed_directories");
      expect(JSON.stringify(listed.content)).toContain(path.basename(root));
      // Every search is still held mid-walk: the two calls were answered first.
      expect(order).toEqual(["ping", "list_allowed_directories"]);
      gate.open();
      const results = await Promise.all(searches);
      expect(order).toHaveLength(2 + SEARCHES);
      for (const r of results) {
        expect(r.isError).toBeFalsy();
        const text = r.content.map((c) => (c.type === "text" ? c.text : "")).join("");
        expect(text).toContain(
          `Found ${(2 * FILES).toLocaleString("en-US")} matching lines (${(2 * FILES).toLocaleString("en-US")} occurrences) in ${FILES} files`,
        );
      }
    } finally {
      gate.open();
      await client.close();
      await server.close();
    }
  });
});
