/**
 * What a new version was made from (sandbox/origin.ts), and edit_file's late writers through it under
 * both strategies (SPEC §12): the copied stretches are compared with the old file after the swap and
 * the replaced ranges checked by their digest, so a change in place anywhere (in a kernel-copied start,
 * in a stretch copied by the engine, in the replaced text) is put back, and an append is kept; and the
 * rewrite sink's copy started ahead (rewrite.ts), written over and cut, or abandoned with the edit.
 */
import { appendFile, open, readdir, readFile, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { editFileThrough } from "../../../src/editing/index.js";
import { Origin } from "../../../src/sandbox/origin.js";
import { __testHooks, __testing } from "../../../src/sandbox/index.js";
import { describeEachStrategy, tempDir } from "../../support/fixtures.js";

let root: string;
let remove: () => Promise<void>;

beforeAll(async () => {
  ({ dir: root, remove } = await tempDir("bfs-origin-"));
});
afterAll(async () => {
  await remove();
});
afterEach(() => {
  delete __testHooks.afterCheck;
});

/** The identity fields of `file` now, its handle closed. */
async function statOf(file: string) {
  const h = await open(file, "r");
  try {
    return await h.stat({ bigint: true });
  } finally {
    await h.close();
  }
}

/** Writes `text` at byte `at` of `file` in place (same inode, same size unless it runs past the end). */
async function overwrite(file: string, at: number, text: string): Promise<void> {
  const h = await open(file, "r+");
  try {
    await h.write(Buffer.from(text), 0, Buffer.byteLength(text), at);
  } finally {
    await h.close();
  }
}

describe("Origin: a new version's copies of the old file and the digest of the rest", () => {
  // old: "aaaa|XX|bbbb" (10 bytes), new: "aaaa|YYY|bbbb": copies [0,4) → 0 and [6,10) → 7; the gap is "XX".
  async function pair(name: string): Promise<{ oldFile: string; newFile: string; origin: Origin }> {
    const oldFile = path.join(root, `${name}.old`);
    const newFile = path.join(root, `${name}.new`);
    await writeFile(oldFile, "aaaaXXbbbb");
    await writeFile(newFile, "aaaaYYYbbbb");
    const origin = new Origin();
    origin.copied(0, 0, 2);
    // Adjacent pieces join one stretch.
    origin.copied(2, 2, 2);
    origin.copied(7, 6, 4);
    const old = await open(oldFile, "r");
    try {
      await origin.seal(old, 10);
    } finally {
      await old.close();
    }
    return { oldFile, newFile, origin };
  }

  async function unchanged(origin: Origin, oldFile: string, newFile: string, size = 10): Promise<boolean> {
    const old = await open(oldFile, "r");
    try {
      const written = await statOf(newFile);
      return await origin.unchanged(old, size, newFile, written);
    } finally {
      await old.close();
    }
  }

  it("holds while the old bytes are as they were, an append after them included", async () => {
    const { oldFile, newFile, origin } = await pair("same");
    expect(await unchanged(origin, oldFile, newFile)).toBe(true);
    await appendFile(oldFile, "more");
    expect(await unchanged(origin, oldFile, newFile)).toBe(true);
  });

  it.each([
    ["in a copied stretch", 1, "A"],
    ["in the last copied stretch", 9, "B"],
    ["in the range not copied", 5, "x"],
  ])("fails after a change %s", async (label, at, text) => {
    const { oldFile, newFile, origin } = await pair(`changed-${at}`);
    await overwrite(oldFile, at, text);
    expect(await unchanged(origin, oldFile, newFile), label).toBe(false);
  });

  it("fails when the old file is now shorter, or the new version is no longer at its name", async () => {
    const short = await pair("short");
    await writeFile(short.oldFile, "aaaaXX");
    expect(await unchanged(short.origin, short.oldFile, short.newFile)).toBe(false);
    const moved = await pair("moved");
    const old = await open(moved.oldFile, "r");
    try {
      const written = await statOf(moved.newFile);
      await writeFile(`${moved.newFile}.other`, "aaaaYYYbbbb");
      await rename(`${moved.newFile}.other`, moved.newFile);
      expect(await moved.origin.unchanged(old, 10, moved.newFile, written)).toBe(false);
    } finally {
      await old.close();
    }
  });
});

describeEachStrategy("edit_file: a late writer after a large copied start", (_name, runtime) => {
  // Past the 1 MiB a kernel copy of the unchanged start needs: 40,000 lines of 40 bytes, then the edited line, then a tail.
  const body = Array.from({ length: 40_000 }, (_, i) => `line ${String(i).padStart(33, "0")}\n`).join("");
  const text = `${body}the line to edit\n${"tail line\n".repeat(100)}`;
  const editAt = Buffer.byteLength(body);
  const edits = [{ oldText: "the line to edit", newText: "THE EDITED LINE, LONGER" }];
  const editIt = (file: string) => editFileThrough(__testing.unvalidated(runtime, [root]), file, edits, false);
  const leftovers = async () => (await readdir(root)).filter((n) => n.endsWith(".tmp"));

  it("carries an append over, after the copied start and the replaced line", async () => {
    const file = path.join(root, `append-${runtime.strategy.name}.txt`);
    await writeFile(file, text);
    __testHooks.afterCheck = async () => {
      delete __testHooks.afterCheck;
      await appendFile(file, "appended late\n");
    };
    expect(await editIt(file)).toMatch(/Note: 14 bytes that another process appended to .* were kept at the end of the file\.$/);
    expect(await readFile(file, "utf8")).toBe(`${body}THE EDITED LINE, LONGER\n${"tail line\n".repeat(100)}appended late\n`);
  });

  it.each([
    ["in the kernel-copied start", 100, "LINE"],
    ["in the replaced line", editAt + 4, "LINE"],
    ["in the tail the engine copied", editAt + 20, "TAIL"],
  ])("puts a change in place %s back and refuses the edit", async (label, at, change) => {
    const file = path.join(root, `change-${runtime.strategy.name}-${at}.txt`);
    await writeFile(file, text);
    __testHooks.afterCheck = async () => {
      delete __testHooks.afterCheck;
      await overwrite(file, at, change);
    };
    await expect(editIt(file), label).rejects.toThrow(/^File changed during edit: .*; no changes were written/);
    // Compared as text: a deep equality of 1.6 MB buffers takes seconds.
    expect(await readFile(file, "utf8")).toBe(text.slice(0, at) + change + text.slice(at + change.length));
    expect(await leftovers()).toEqual([]);
  });

  it("an edit near the start that shortens the file: the copy started ahead is written over and cut", async () => {
    const file = path.join(root, `start-${runtime.strategy.name}.txt`);
    await writeFile(file, text);
    const shorter = [{ oldText: "line 000000000000000000000000000000001\n", newText: "" }];
    await editFileThrough(__testing.unvalidated(runtime, [root]), file, shorter, false);
    expect(await readFile(file, "utf8")).toBe(text.replace("line 000000000000000000000000000000001\n", ""));
    expect(await leftovers()).toEqual([]);
  });

  it("an edit refused after the copy started ahead leaves the file as it was and no temp file", async () => {
    const file = path.join(root, `refused-${runtime.strategy.name}.txt`);
    await writeFile(file, text);
    const absent = [{ oldText: "no such line", newText: "x" }];
    await expect(editFileThrough(__testing.unvalidated(runtime, [root]), file, absent, false)).rejects.toThrow(/Could not find exact match/);
    expect(await readFile(file, "utf8")).toBe(text);
    expect(await leftovers()).toEqual([]);
  });

  it("a same-length edit near the start: the rest is left where the copy put it, and a late change there is put back", async () => {
    const same = [{ oldText: "line 000000000000000000000000000000002", newText: "LINE 000000000000000000000000000000002" }];
    const kept = path.join(root, `same-${runtime.strategy.name}.txt`);
    await writeFile(kept, text);
    await editFileThrough(__testing.unvalidated(runtime, [root]), kept, same, false);
    expect(await readFile(kept, "utf8")).toBe(text.replace(same[0]!.oldText, same[0]!.newText));
    const changed = path.join(root, `same-late-${runtime.strategy.name}.txt`);
    await writeFile(changed, text);
    __testHooks.afterCheck = async () => {
      delete __testHooks.afterCheck;
      await overwrite(changed, editAt, "THE");
    };
    await expect(editFileThrough(__testing.unvalidated(runtime, [root]), changed, same, false)).rejects.toThrow(/^File changed during edit: /);
    expect(await readFile(changed, "utf8")).toBe(`${body}THE line to edit\n${"tail line\n".repeat(100)}`);
    expect(await leftovers()).toEqual([]);
  });
});
