/** Roots replace the allowed directories (stdio): at initialization and on list_changed; and narrow them (an HTTP session). */
import { mkdir, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { type CallToolResult, Client, InMemoryTransport, type Root as V2Root } from "@modelcontextprotocol/client";
import { ListRootsRequestSchema, type Root } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { DEFAULTS } from "../../../src/cli/config.js";
import { buildServer } from "../../../src/server/index.js";
import { describeEachStrategy, tempDir } from "../../support/fixtures.js";
import { call, inProcess, textOf } from "../../support/in-process.js";

let base: string;
let remove: () => Promise<void>;

beforeAll(async () => {
  ({ dir: base, remove } = await tempDir("bfs-roots-"));
  for (const d of ["start", "first root", "second%root"]) {
    await mkdir(path.join(base, d));
    await writeFile(path.join(base, d, "f.txt"), d);
  }
});
afterAll(() => remove());

describe("roots", () => {
  it("replaces the command-line directories with the client's roots, and again on list_changed", async () => {
    let roots: Root[] = [
      { uri: pathToFileURL(path.join(base, "first root")).href, name: "first" },
      { uri: pathToFileURL(path.join(base, "missing")).href },
    ];
    const server = await inProcess([path.join(base, "start")], {
      capabilities: { capabilities: { roots: { listChanged: true } } },
      prepare: (client) => client.setRequestHandler(ListRootsRequestSchema, () => ({ roots })),
    });
    try {
      const allowed = async () => textOf(await call(server.client, "list_allowed_directories"));
      await expect.poll(allowed).toBe(`Allowed directories:\n${path.join(base, "first root")}`);
      const old = await call(server.client, "read_text_file", { path: path.join(base, "start", "f.txt") });
      expect(old.isError).toBe(true);
      expect(textOf(await call(server.client, "read_text_file", { path: path.join(base, "first root", "f.txt") }))).toBe("first root");

      roots = [{ uri: pathToFileURL(path.join(base, "second%root")).href }];
      await server.client.sendRootsListChanged();
      await expect.poll(allowed).toBe(`Allowed directories:\n${path.join(base, "second%root")}`);

      roots = [{ uri: pathToFileURL(path.join(base, "nowhere")).href }];
      await server.client.sendRootsListChanged();
      await expect.poll(() => server.stderr()).toContain("No valid root directories");
      expect(await allowed()).toBe(`Allowed directories:\n${path.join(base, "second%root")}`);
    } finally {
      await server.close();
    }
  });
});

describe("roots never answered", () => {
  it("a call waits for the roots asked at most the question's 10 s, then runs with the directories it has", async () => {
    // A client that declares roots and never answers roots/list: the call is held by the wait, not for good.
    const server = await inProcess([path.join(base, "start")], {
      capabilities: { capabilities: { roots: { listChanged: true } } },
      prepare: (client) => client.setRequestHandler(ListRootsRequestSchema, () => new Promise<never>(() => undefined)),
    });
    try {
      expect(textOf(await call(server.client, "list_allowed_directories"))).toBe(`Allowed directories:\n${path.join(base, "start")}`);
      expect(server.stderr()).toContain("Failed to request roots from client");
    } finally {
      await server.close();
    }
  }, 25_000);
});

/**
 * Replace mode with no directory on the command line: a client's first call, sent right after `initialized` and so
 * before its answer to roots/list, waits for that answer instead of running with no allowed directory (it was refused
 * "not in " an empty list); with no valid root, the refusal and list_allowed_directories say there are none.
 */
describeEachStrategy("roots before the first call", (strategy) => {
  it("a call sent right after initialization runs in the roots the client gives", async () => {
    const root = path.join(base, "first root");
    const server = await inProcess([], {
      strategy,
      capabilities: { capabilities: { roots: { listChanged: true } } },
      prepare: (client) => client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [{ uri: pathToFileURL(root).href }] })),
    });
    try {
      const [read, listed] = await Promise.all([
        call(server.client, "read_text_file", { path: path.join(root, "f.txt") }),
        call(server.client, "list_allowed_directories"),
      ]);
      expect(read.isError).toBeFalsy();
      expect(textOf(read)).toBe("first root");
      expect(textOf(listed)).toBe(`Allowed directories:\n${root}`);
    } finally {
      await server.close();
    }
  });

  it("with no valid root, a call's refusal and list_allowed_directories say there is no allowed directory", async () => {
    const server = await inProcess([], {
      strategy,
      capabilities: { capabilities: { roots: { listChanged: true } } },
      prepare: (client) =>
        client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [{ uri: pathToFileURL(path.join(base, "missing")).href }] })),
    });
    try {
      const read = await call(server.client, "read_text_file", { path: path.join(base, "start", "f.txt") });
      expect(read.isError).toBe(true);
      expect(textOf(read)).toBe(
        `Access denied - path outside allowed directories: ${path.join(base, "start", "f.txt")}: this server has no allowed directories: ` +
          "none were named on its command line, and the client has given no valid MCP roots",
      );
      expect(textOf(await call(server.client, "list_allowed_directories"))).toMatch(
        /^Allowed directories:\n\(none: this server has no allowed directories: /,
      );
      expect(server.stderr()).toContain("No valid root directories");
    } finally {
      await server.close();
    }
  });

  it("a list_changed while the roots are asked asks once more when they are answered, not once a notification", async () => {
    // A question per notification: 200,000 of them held 1.4 GB of requests waiting for answers.
    let asked = 0;
    let release = (): void => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let roots = [{ uri: pathToFileURL(path.join(base, "first root")).href }];
    const server = await inProcess([path.join(base, "start")], {
      strategy,
      capabilities: { capabilities: { roots: { listChanged: true } } },
      prepare: (client) =>
        client.setRequestHandler(ListRootsRequestSchema, async () => {
          asked++;
          await gate;
          return { roots };
        }),
    });
    try {
      await expect.poll(() => asked).toBe(1);
      roots = [{ uri: pathToFileURL(path.join(base, "second%root")).href }];
      for (let i = 0; i < 1000; i++) await server.client.sendRootsListChanged();
      expect(asked).toBe(1);
      release();
      // A call waits for the question asked when it arrived.
      expect(textOf(await call(server.client, "list_allowed_directories"))).toBe(`Allowed directories:\n${path.join(base, "second%root")}`);
      await expect.poll(() => asked).toBe(2);
      expect(textOf(await call(server.client, "list_allowed_directories"))).toBe(`Allowed directories:\n${path.join(base, "second%root")}`);
      expect(asked).toBe(2);
    } finally {
      await server.close();
    }
  });

  it("reads a client's list to its first 1,000 roots, and says so", async () => {
    // 300,000 roots, each resolved on disk, held a call 20 s.
    const missing = { uri: pathToFileURL(path.join(base, "missing")).href };
    const server = await inProcess([path.join(base, "start")], {
      strategy,
      capabilities: { capabilities: { roots: { listChanged: true } } },
      prepare: (client) =>
        client.setRequestHandler(ListRootsRequestSchema, () => ({
          roots: [...Array.from({ length: 1000 }, () => missing), { uri: pathToFileURL(path.join(base, "first root")).href }],
        })),
    });
    try {
      expect(textOf(await call(server.client, "list_allowed_directories"))).toBe(`Allowed directories:\n${path.join(base, "start")}`);
      expect(server.stderr()).toContain("The client gave 1,001 roots; using the first 1,000 and ignoring the rest");
      expect(server.stderr()).toContain("No valid root directories");
    } finally {
      await server.close();
    }
  });
});

/**
 * Narrow mode (an HTTP session), in process: a root that is a symlink inside the startup directories
 * leading outside them is ignored and said so, instead of narrowing the session to a spelling every
 * call is then denied (issue 28 row 16). A symlinked root leading inside is kept, in both spellings.
 */
/** The text of a result as the v2 client returns it. */
const textOfV2 = (result: CallToolResult): string => result.content.map((block) => (block.type === "text" ? block.text : "")).join("");

describeEachStrategy("narrowing roots", (_, runtime) => {
  let ceiling: string;
  let outside: string;
  let removeAll: () => Promise<void>;
  beforeEach(async () => {
    const made = await tempDir("bfs-roots-narrow-");
    removeAll = made.remove;
    ceiling = path.join(made.dir, "ceiling");
    outside = path.join(made.dir, "outside");
    for (const d of [ceiling, path.join(ceiling, "inner"), outside]) await mkdir(d);
    await writeFile(path.join(ceiling, "f.txt"), "inside\n");
    await writeFile(path.join(ceiling, "inner", "g.txt"), "inner\n");
    await writeFile(path.join(outside, "secret.txt"), "secret\n");
    await symlink(outside, path.join(ceiling, "to-outside"));
    await symlink("inner", path.join(ceiling, "to-inner"));
  });
  afterEach(() => removeAll());

  /** A narrow-mode server over `ceiling` whose client offers `roots`; its log lines. */
  async function narrowed(
    roots: V2Root[],
  ): Promise<{ call: (name: string, args: Record<string, unknown>) => Promise<CallToolResult>; log: string[]; close: () => Promise<void> }> {
    const log: string[] = [];
    const server = buildServer({ runtime, limits: DEFAULTS, directories: [ceiling], roots: "narrow", log: (line) => log.push(line) });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: "roots-narrow-test", version: "1.0.0" }, { capabilities: { roots: { listChanged: true } } });
    client.setRequestHandler("roots/list", () => ({ roots }));
    await client.connect(clientSide);
    return {
      call: async (name, args) => (await client.callTool({ name, arguments: args })) as CallToolResult,
      log,
      close: async () => {
        await client.close();
        await server.close();
      },
    };
  }

  it("ignores a root that is an inside symlink leading outside, and says so; the session keeps what it had", async () => {
    const link = path.join(ceiling, "to-outside");
    const s = await narrowed([{ uri: pathToFileURL(link).href }]);
    try {
      const read = await s.call("read_text_file", { path: path.join(ceiling, "f.txt") });
      expect(read.isError ?? false, textOfV2(read)).toBe(false);
      expect(textOfV2(read)).toBe("inside\n");
      expect(textOfV2(await s.call("list_allowed_directories", {}))).toBe(`Allowed directories:\n${ceiling}`);
      expect(s.log.join("\n")).toContain(`Ignoring root ${link}: it is a symbolic link leading outside`);
      const secret = await s.call("read_text_file", { path: path.join(link, "secret.txt") });
      expect(secret.isError).toBe(true);
      expect(textOfV2(secret)).not.toContain("secret\n");
    } finally {
      await s.close();
    }
  });

  it("keeps a symlinked root that leads inside, in its real and its given spelling", async () => {
    const link = path.join(ceiling, "to-inner");
    const s = await narrowed([{ uri: pathToFileURL(link).href }]);
    try {
      expect(textOfV2(await s.call("read_text_file", { path: path.join(link, "g.txt") }))).toBe("inner\n");
      expect(textOfV2(await s.call("list_allowed_directories", {}))).toBe(`Allowed directories:\n${path.join(ceiling, "inner")}\n${link}`);
      const above = await s.call("read_text_file", { path: path.join(ceiling, "f.txt") });
      expect(above.isError).toBe(true);
    } finally {
      await s.close();
    }
  });
});
