/**
 * search_file_contents through the built server (SPEC §10), under both
 * platform strategies: matches and totals, skips that are never silent,
 * links, .gitignore by default, continuation by offset at a small cap, a
 * hostile regex while another call is answered, and cancellation.
 */
import { execFileSync } from "node:child_process";
import { mkdir, rm, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STRATEGIES, strategyEnv, tempDir } from "../support/fixtures.js";
import { call, connect, textOf, type Connected } from "../support/spawn.js";

let base: string;
let root: string;
let remove: () => Promise<void>;

beforeAll(async () => {
  ({ dir: base, remove } = await tempDir("bfs-contents-"));
  root = path.join(base, "root");
  const outside = path.join(base, "outside");
  await mkdir(path.join(root, "src", "deep"), { recursive: true });
  await mkdir(path.join(root, "build"), { recursive: true });
  await mkdir(outside);
  await writeFile(path.join(root, "app.log"), "start\nFATAL disk full\nstop\n");
  await writeFile(path.join(root, "src", "a.ts"), "const x = 1;\r\n// fatal? no: Fatal\r\nexport {};\r\n");
  await writeFile(path.join(root, "src", "deep", "b.ts"), "nothing here\n");
  await writeFile(path.join(root, "build", "out.ts"), "FATAL in a build file\n");
  await writeFile(path.join(root, ".gitignore"), "build/\n");
  await writeFile(path.join(root, "image.bin"), Buffer.from([0x46, 0x41, 0x54, 0x41, 0x4c, 0x00, 0x01]));
  await writeFile(path.join(outside, "secret.log"), "FATAL outside\n");
  await symlink(path.join(outside, "secret.log"), path.join(root, "out-link.log"));
  await symlink(path.join(root, "app.log"), path.join(root, "in-link.log"));
  // Many matching lines for paging.
  await writeFile(path.join(root, "many.txt"), Array.from({ length: 300 }, (_, i) => `line ${i} needle ${"x".repeat(i % 37)}`).join("\n"));
  await writeFile(path.join(root, "aaa.txt"), `${"a".repeat(60_000)}!\n`);
});

afterAll(async () => {
  await remove?.();
});

const text = (r: CallToolResult): string => textOf(r);

describe.each(STRATEGIES)("search_file_contents (%s strategy)", (name) => {
  let server: Connected;
  let small: Connected;
  beforeAll(async () => {
    server = await connect([root], { env: strategyEnv(name) });
    small = await connect(["--max-result-chars", "1500", root], { env: strategyEnv(name) });
  });
  afterAll(async () => {
    await server?.close();
    await small?.close();
  });

  it("finds lines case-insensitively, numbers them as read_text_file does, and states what was not searched", async () => {
    const result = text(await call(server.client, "search_file_contents", { path: root, query: "fatal" }));
    expect(result).toContain(`${path.join(root, "app.log")}\n2:FATAL disk full`);
    expect(result).toContain(`${path.join(root, "src", "a.ts")}\n2:// fatal? no: Fatal`);
    // Ignored by .gitignore by default; the link into app.log is not followed (app.log is searched by its own name).
    expect(result).not.toContain("build file");
    expect(result).not.toContain("in-link.log");
    expect(result).not.toContain("FATAL outside");
    expect(result).toMatch(/Found 2 matching lines in 2 files; searched \d+ files\./);
    expect(result).toMatch(/Not searched: \d+ files \(1 binary; 1 ignored by \.gitignore[^;]*; 1 symlink leading outside/);
    expect(result).toContain("; 1 symlink to a file inside the searched directory, not followed: each file is searched under its own name");
    const around = text(await call(server.client, "read_text_file", { path: path.join(root, "app.log"), startLine: 2, lineCount: 1 }));
    expect(around).toBe("FATAL disk full\n");
  });

  it("follows links to a file outside the searched directory once, and counts the later ones", async () => {
    const dir = path.join(root, `links-${name}`);
    await mkdir(path.join(dir, "sub"), { recursive: true });
    await mkdir(path.join(dir, "other"));
    try {
      await writeFile(path.join(dir, "other", "t.txt"), "searched twice?\n");
      await symlink("../other/t.txt", path.join(dir, "sub", "l1"));
      await symlink("../other/t.txt", path.join(dir, "sub", "l2"));
      const result = text(await call(server.client, "search_file_contents", { path: path.join(dir, "sub"), query: "twice" }));
      expect(result).toContain(`${path.join(dir, "sub", "l1")}\n1:searched twice?`);
      expect(result).not.toContain("l2");
      expect(result).toContain("Found 1 matching line in 1 file; searched 1 file.");
      expect(result).toContain("Not searched: 1 file (1 symlink to a file already searched through another symlink).");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("respects caseSensitive, respectGitignore, pattern, excludePatterns and the output modes", async () => {
    const exact = text(
      await call(server.client, "search_file_contents", { path: root, query: "FATAL", caseSensitive: true, respectGitignore: false }),
    );
    expect(exact).toContain("FATAL in a build file");
    expect(exact).not.toContain("Fatal\n");
    const ts = text(
      await call(server.client, "search_file_contents", { path: root, query: "fatal", pattern: "**/*.ts", excludePatterns: ["src/deep"] }),
    );
    expect(ts).toContain("a.ts");
    expect(ts).not.toContain("app.log");
    const files = text(await call(server.client, "search_file_contents", { path: root, query: "needle", outputMode: "files" }));
    expect(files).toContain(`${path.join(root, "many.txt")}: 300 matching lines, 300 occurrences`);
    const count = text(await call(server.client, "search_file_contents", { path: root, query: "needle", outputMode: "count" }));
    expect(count).toMatch(/^Found 300 matching lines \(300 occurrences\) in 1 file;/);
  });

  it("continues a cut result by offset until every match was shown exactly once", async () => {
    const seen: number[] = [];
    let offset = 0;
    for (let page = 0; page < 100; page++) {
      const result = text(await call(small.client, "search_file_contents", { path: path.join(root, "many.txt"), query: "needle", offset }));
      expect(result.length).toBeLessThanOrEqual(1500 + 300);
      for (const m of result.matchAll(/^(\d+):line (\d+) needle/gm)) {
        expect(Number(m[1])).toBe(Number(m[2]) + 1);
        seen.push(Number(m[2]));
      }
      const next = /Call again with offset=(\d+) to continue/.exec(result);
      if (!next) break;
      expect(Number(next[1])).toBeGreaterThan(offset);
      offset = Number(next[1]);
    }
    expect(seen).toEqual(Array.from({ length: 300 }, (_, i) => i));
  });

  it("a catastrophic regex ends with results or a 'too costly' error while another call is answered", async () => {
    const order: string[] = [];
    const hostile = call(server.client, "search_file_contents", { path: path.join(root, "aaa.txt"), query: "(a+)+$", regex: true }).then((r) => {
      order.push("hostile");
      return r;
    });
    const other = call(server.client, "list_allowed_directories", {}).then((r) => {
      order.push("other");
      return r;
    });
    const [h, o] = await Promise.all([hostile, other]);
    expect(text(o)).toContain(root);
    expect(order[0]).toBe("other");
    if (h.isError) expect(text(h)).toMatch(/too costly/);
    else expect(text(h)).toContain("Found 0 matching lines");
  });

  it("counts a FIFO it does not search instead of skipping it silently", async () => {
    const dir = path.join(root, `fifo-${name}`);
    await mkdir(dir);
    execFileSync("mkfifo", [path.join(dir, "pipe")]);
    await writeFile(path.join(dir, "plain.txt"), "qzx-fifo here\n");
    const result = text(await call(server.client, "search_file_contents", { path: dir, query: "qzx-fifo" }));
    // A link to it is counted too, and so is a link to the plain file: not followed, the file is searched by its own name.
    await symlink("pipe", path.join(dir, "to-pipe"));
    await symlink("plain.txt", path.join(dir, "to-plain"));
    const linked = text(await call(server.client, "search_file_contents", { path: dir, query: "qzx-fifo" }));
    await rm(dir, { recursive: true });
    expect(result).toContain("Found 1 matching line in 1 file; searched 1 file.");
    expect(result).toContain("Not searched: 1 file (1 unreadable or not a regular file).");
    expect(linked).toContain("Found 1 matching line in 1 file; searched 1 file.");
    expect(linked).toContain(
      "Not searched: 3 files (2 unreadable or not a regular file; 1 symlink to a file inside the searched directory, not followed: each file is searched under its own name).",
    );
  });

  it("refuses an invalid regex quoting the engine, and a path outside", async () => {
    const bad = await call(server.client, "search_file_contents", { path: root, query: "(", regex: true });
    expect(bad.isError).toBe(true);
    expect(text(bad)).toMatch(/Invalid regular expression/);
    const outside = await call(server.client, "search_file_contents", { path: path.join(base, "outside"), query: "FATAL" });
    expect(outside.isError).toBe(true);
    expect(text(outside)).toMatch(/Access denied/);
  });

  it("stops when cancelled and the connection goes on", async () => {
    const controller = new AbortController();
    const outcome = server.client
      .callTool({ name: "search_file_contents", arguments: { path: path.join(root, "aaa.txt"), query: "(a+)+$", regex: true } }, undefined, {
        signal: controller.signal,
        onprogress: () => controller.abort(),
      })
      .then(
        () => "answered",
        () => "cancelled",
      );
    setImmediate(() => controller.abort());
    expect(await outcome).toBe("cancelled");
    expect(text(await call(server.client, "search_file_contents", { path: path.join(root, "app.log"), query: "stop" }))).toContain("3:stop");
  });
});
