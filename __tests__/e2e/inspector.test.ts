/**
 * A real third-party MCP client: the MCP Inspector's CLI (a devDependency)
 * drives the built server over stdio, lists the tools and pages a file with
 * offset/limit passed as `--tool-arg key=value`, as a person debugging would.
 */
import { spawn } from "node:child_process";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SERVER_JS } from "../support/spawn.js";
import { tempDir } from "../support/fixtures.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const INSPECTOR = path.join(ROOT, "node_modules", ".bin", process.platform === "win32" ? "mcp-inspector.cmd" : "mcp-inspector");
const NPM = process.platform === "win32" ? "npm.cmd" : "npm";
/** Mixed widths on purpose: 🙂 sits at code units 15-16, so the first 16-unit window must stop before it. */
const TEXT = "Grüße aus Köln 🙂 — line one\nsecond line, with tab\tand 🚀 rocket\nlast line\n";
const TOOL_COUNT = 19;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

let work: { dir: string; remove: () => Promise<void> } | undefined;

beforeAll(async () => {
  work = await tempDir("bfs-inspector-");
  await writeFile(path.join(work.dir, "notes.txt"), TEXT);
});

afterAll(async () => {
  await work?.remove();
});

/** Runs a command and parses its stdout as the inspector's one JSON document; any other exit code rejects. */
function runJson(command: string, args: string[], expectedCode = 0): Promise<unknown> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined) env[key] = value;
  // The inspector keeps a server catalog in the home directory by default; keep it in the temp dir.
  env.MCP_CATALOG_PATH = path.join(work?.dir ?? "", "catalog.json");
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), 25_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      if (code !== expectedCode) return reject(new Error(`${command} ${args.join(" ")} exited with ${code}:\n${stderr.slice(-2000)}`));
      try {
        resolve(JSON.parse(stdout));
      } catch (error) {
        reject(new Error(`stdout is not one JSON document: ${stdout.slice(0, 500)}`, { cause: error }));
      }
    });
  });
}

const inspect = (args: string[], expectedCode = 0) =>
  runJson(INSPECTOR, ["--cli", process.execPath, SERVER_JS, work?.dir ?? "", ...args], expectedCode);
/** The inspector CLI's exit status when the tool result has isError: true. */
const TOOL_IS_ERROR_EXIT = 5;

interface Listed {
  tools: Array<{ name: string; annotations?: Record<string, unknown>; outputSchema?: unknown }>;
}
interface Called {
  content: Array<{ type: string; text?: string }>;
  isError?: boolean;
}

/** The window's text and the offset its notice names, if any. */
function splitNotice(text: string): { body: string; next?: number } {
  const match = /\n\[Result truncated: showing characters [\d,]+-[\d,]+ of [\d,]+\. Call again with offset=(\d+) to continue\.\]$/.exec(text);
  return match ? { body: text.slice(0, match.index), next: Number(match[1]) } : { body: text };
}

describe("MCP Inspector CLI against dist/index.js", () => {
  it(`lists the ${TOOL_COUNT} tools, read-only ones annotated, none with an outputSchema`, async () => {
    const { tools } = (await inspect(["--method", "tools/list"])) as Listed;
    expect(tools).toHaveLength(TOOL_COUNT);
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(["read_text_file", "edit_file", "move_file"]));
    for (const tool of tools) {
      expect(tool.annotations?.openWorldHint, tool.name).toBe(false);
      expect(tool).not.toHaveProperty("outputSchema");
    }
  }, 30_000);

  it("pages a file with --tool-arg offset=N limit=M and reassembles it exactly", async () => {
    let offset: number | undefined = 0;
    let text = "";
    const starts: number[] = [];
    while (offset !== undefined) {
      starts.push(offset);
      const result = (await inspect([
        ...["--method", "tools/call", "--tool-name", "read_text_file", "--tool-arg", "path=notes.txt"],
        ...["--tool-arg", `offset=${offset}`, "--tool-arg", "limit=16"],
      ])) as Called;
      expect(result.isError ?? false).toBe(false);
      const { body, next } = splitNotice(result.content[0]?.text ?? "");
      expect(body, `window at ${offset}`).not.toMatch(LONE_SURROGATE);
      text += body;
      offset = next;
      expect(starts.length).toBeLessThan(10);
    }
    expect(text).toBe(TEXT);
    expect(starts).toEqual([0, 15, 31, 47, 63]);
  }, 60_000);

  it("reports a bad argument as a tool error naming the parameter", async () => {
    const result = (await inspect(
      [
        ...["--method", "tools/call", "--tool-name", "read_text_file", "--tool-arg", "path=notes.txt"],
        ...["--tool-arg", "head=2", "--tool-arg", "offset=1"],
      ],
      TOOL_IS_ERROR_EXIT,
    )) as Called;
    expect(result.isError).toBe(true);
    expect(result.content[0]?.text).toMatch(/head and offset cannot be combined/);
  }, 30_000);
});

describe("npm run inspect", () => {
  it("lists the tools of the built server for the directory given after --", async () => {
    const { tools } = (await runJson(NPM, ["run", "--silent", "inspect", "--", work?.dir ?? ""])) as Listed;
    expect(tools).toHaveLength(TOOL_COUNT);
  }, 30_000);
});
