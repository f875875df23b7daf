/**
 * Upstream-style tests: `fs/promises` is auto-mocked, so every un-stubbed
 * function returns undefined. They pin the exact call pattern of lib.ts
 * (SPEC §7) that other people's upstream tests rely on.
 */
import fs from "fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  applyFileEdits,
  getFileStats,
  headFile,
  readFileContent,
  searchFilesWithValidation,
  setAllowedDirectories,
  tailFile,
  validatePath,
  writeFileContent,
} from "../../src/lib.js";

vi.mock("fs/promises");

const mockFs = vi.mocked(fs);
const TEMP = /^\/test\/file\.txt\.[a-f0-9]{32}\.tmp$/;

function errno(code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(code), { code });
}

/** A FileHandle whose read copies from `data` into the caller's buffer, as the real one does. */
function handleOver(data: Buffer) {
  return {
    read: vi.fn(async (buffer: Buffer, offset: number, length: number, position: number) => {
      const bytesRead = data.copy(buffer, offset, position, Math.min(data.length, position + length));
      return { bytesRead, buffer };
    }),
    close: vi.fn(async () => undefined),
  };
}

function useHandle(handle: ReturnType<typeof handleOver>): void {
  mockFs.open.mockResolvedValue(handle as unknown as Awaited<ReturnType<typeof fs.open>>);
}

beforeEach(() => {
  vi.resetAllMocks();
  setAllowedDirectories(["/home/user", "/tmp", "/allowed"]);
});

afterEach(() => {
  setAllowedDirectories([]);
});

describe("writeFileContent", () => {
  it("creates a new file exclusively with wx", async () => {
    mockFs.writeFile.mockResolvedValueOnce(undefined);
    await writeFileContent("/test/file.txt", "content");
    expect(mockFs.writeFile).toHaveBeenCalledExactlyOnceWith("/test/file.txt", "content", { encoding: "utf-8", flag: "wx" });
    expect(mockFs.rename).not.toHaveBeenCalled();
  });

  it("on EEXIST writes a 32-hex temp file and renames it over the target", async () => {
    mockFs.writeFile.mockRejectedValueOnce(errno("EEXIST")).mockResolvedValueOnce(undefined);
    await writeFileContent("/test/file.txt", "new content");
    expect(mockFs.writeFile).toHaveBeenNthCalledWith(2, expect.stringMatching(TEMP), "new content", "utf-8");
    const temp = mockFs.writeFile.mock.calls[1]?.[0];
    expect(mockFs.rename).toHaveBeenCalledExactlyOnceWith(temp, "/test/file.txt");
    expect(mockFs.unlink).not.toHaveBeenCalled();
  });

  it("unlinks the temp file and rethrows when the rename fails", async () => {
    mockFs.writeFile.mockRejectedValueOnce(errno("EEXIST")).mockResolvedValueOnce(undefined);
    mockFs.rename.mockRejectedValueOnce(new Error("Rename failed"));
    mockFs.unlink.mockRejectedValueOnce(new Error("unlink failed too"));
    await expect(writeFileContent("/test/file.txt", "x")).rejects.toThrow("Rename failed");
    expect(mockFs.unlink).toHaveBeenCalledExactlyOnceWith(expect.stringMatching(TEMP));
  });

  it("rethrows other errors without trying a temp file", async () => {
    mockFs.writeFile.mockRejectedValueOnce(errno("EACCES"));
    await expect(writeFileContent("/test/file.txt", "x")).rejects.toThrow("EACCES");
    expect(mockFs.writeFile).toHaveBeenCalledTimes(1);
    expect(mockFs.rename).not.toHaveBeenCalled();
  });
});

describe("applyFileEdits", () => {
  it("reads utf-8, writes a temp file and renames it", async () => {
    mockFs.readFile.mockResolvedValueOnce("line1\r\nline2\r\n" as never);
    const diff = await applyFileEdits("/test/file.txt", [{ oldText: "line2", newText: "$1" }]);
    expect(mockFs.readFile).toHaveBeenCalledWith("/test/file.txt", "utf-8");
    expect(mockFs.writeFile).toHaveBeenCalledExactlyOnceWith(expect.stringMatching(TEMP), "line1\n$1\n", "utf-8");
    expect(mockFs.rename).toHaveBeenCalledWith(mockFs.writeFile.mock.calls[0]?.[0], "/test/file.txt");
    expect(diff).toContain("--- /test/file.txt\toriginal");
  });

  it("does not write on dryRun", async () => {
    mockFs.readFile.mockResolvedValueOnce("a\n" as never);
    await applyFileEdits("/test/file.txt", [{ oldText: "a", newText: "b" }], true);
    expect(mockFs.writeFile).not.toHaveBeenCalled();
    expect(mockFs.rename).not.toHaveBeenCalled();
  });

  it("unlinks the temp file when the write fails", async () => {
    mockFs.readFile.mockResolvedValueOnce("a\n" as never);
    mockFs.writeFile.mockRejectedValueOnce(new Error("disk full"));
    await expect(applyFileEdits("/test/file.txt", [{ oldText: "a", newText: "b" }])).rejects.toThrow("disk full");
    expect(mockFs.unlink).toHaveBeenCalledWith(expect.stringMatching(TEMP));
  });
});

describe("validatePath", () => {
  it("consults only fs.realpath for an existing path", async () => {
    mockFs.realpath.mockResolvedValueOnce("/home/user/file.txt" as never);
    expect(await validatePath("/home/user/file.txt")).toBe("/home/user/file.txt");
    expect(mockFs.realpath).toHaveBeenCalledExactlyOnceWith("/home/user/file.txt");
    for (const other of [mockFs.stat, mockFs.lstat, mockFs.access, mockFs.open, mockFs.readFile]) {
      expect(other).not.toHaveBeenCalled();
    }
  });

  it("checks the parent of a missing file", async () => {
    mockFs.realpath.mockRejectedValueOnce(errno("ENOENT")).mockResolvedValueOnce("/home/user" as never);
    expect(await validatePath("/home/user/new.txt")).toBe("/home/user/new.txt");
    expect(mockFs.realpath).toHaveBeenNthCalledWith(2, "/home/user");
  });

  it("reports a missing parent", async () => {
    mockFs.realpath.mockRejectedValueOnce(errno("ENOENT")).mockRejectedValueOnce(errno("ENOENT"));
    await expect(validatePath("/home/user/no/new.txt")).rejects.toThrow("Parent directory does not exist: /home/user/no");
  });

  it("refuses a symlink target outside and a path outside", async () => {
    mockFs.realpath.mockResolvedValueOnce("/etc/passwd" as never);
    await expect(validatePath("/home/user/link")).rejects.toThrow(/^Access denied - symlink target outside allowed directories/);
    await expect(validatePath("/etc/passwd")).rejects.toThrow(/^Access denied - path outside allowed directories/);
    expect(mockFs.realpath).toHaveBeenCalledTimes(1);
  });

  it("resolves a relative path against the first allowed directory when fs answers undefined", async () => {
    mockFs.realpath.mockImplementation(async (p) => String(p) as never);
    expect(await validatePath("notes/a.txt")).toBe(path.resolve("/home/user", "notes/a.txt"));
  });
});

describe("headFile / tailFile call pattern", () => {
  it("headFile opens with 'r', reads chunks into the given buffer and closes", async () => {
    const handle = handleOver(Buffer.from("line1\nline2\nline3\n"));
    useHandle(handle);
    expect(await headFile("/test/file.txt", 2)).toBe("line1\nline2");
    expect(mockFs.open).toHaveBeenCalledWith("/test/file.txt", "r");
    expect(handle.read).toHaveBeenCalledWith(expect.any(Buffer), 0, 1024, 0);
    expect(handle.close).toHaveBeenCalledTimes(1);
  });

  it("headFile decodes a 4-byte character split between two reads", async () => {
    const text = `${"a".repeat(1023)}😀\nnext`;
    useHandle(handleOver(Buffer.from(text)));
    expect(await headFile("/test/file.txt", 1)).toBe(`${"a".repeat(1023)}😀`);
  });

  it("tailFile stats first, returns '' for an empty file without opening it", async () => {
    mockFs.stat.mockResolvedValueOnce({ size: 0 } as never);
    expect(await tailFile("/test/empty.txt", 5)).toBe("");
    expect(mockFs.stat).toHaveBeenCalledWith("/test/empty.txt");
    expect(mockFs.open).not.toHaveBeenCalled();
  });

  it("tailFile reads backwards from the end and closes", async () => {
    const data = Buffer.from(`${"€".repeat(700)}\nline4\nline5\n`);
    mockFs.stat.mockResolvedValue({ size: data.length } as never);
    const handle = handleOver(data);
    useHandle(handle);
    expect(await tailFile("/test/file.txt", 3)).toBe("line4\nline5\n");
    expect(handle.read).toHaveBeenNthCalledWith(1, expect.any(Buffer), 0, 1024, data.length - 1024);
    expect(await tailFile("/test/file.txt", 4)).toBe(`${"€".repeat(700)}\nline4\nline5\n`);
    expect(handle.close).toHaveBeenCalledTimes(2);
  });

  it("always closes the handle when a read fails", async () => {
    const failing = { read: vi.fn(async () => Promise.reject(new Error("EIO"))), close: vi.fn(async () => undefined) };
    mockFs.open.mockResolvedValue(failing as never);
    mockFs.stat.mockResolvedValue({ size: 10 } as never);
    await expect(headFile("/test/file.txt", 1)).rejects.toThrow("EIO");
    await expect(tailFile("/test/file.txt", 1)).rejects.toThrow("EIO");
    expect(failing.close).toHaveBeenCalledTimes(2);
  });

  it("tolerates a mocked read that reports bytes without filling the buffer", async () => {
    const lazy = {
      read: vi.fn().mockResolvedValueOnce({ bytesRead: 20 }).mockResolvedValue({ bytesRead: 0 }),
      close: vi.fn(),
    };
    mockFs.open.mockResolvedValue(lazy as never);
    mockFs.stat.mockResolvedValue({ size: 50 } as never);
    await expect(headFile("/test/file.txt", 2)).resolves.toBeTypeOf("string");
    await expect(tailFile("/test/file.txt", 2)).resolves.toBeTypeOf("string");
    expect(lazy.close).toHaveBeenCalledTimes(2);
  });
});

describe("other exports", () => {
  it("readFileContent is fs.readFile with utf-8 by default", async () => {
    mockFs.readFile.mockResolvedValue("text" as never);
    expect(await readFileContent("/test/file.txt")).toBe("text");
    expect(mockFs.readFile).toHaveBeenCalledWith("/test/file.txt", "utf-8");
    await readFileContent("/test/file.txt", "latin1");
    expect(mockFs.readFile).toHaveBeenLastCalledWith("/test/file.txt", "latin1");
  });

  it("getFileStats maps fs.stat", async () => {
    const when = new Date(0);
    mockFs.stat.mockResolvedValueOnce({
      size: 42,
      birthtime: when,
      mtime: when,
      atime: when,
      mode: 0o100755,
      isDirectory: () => false,
      isFile: () => true,
    } as never);
    expect(await getFileStats("/test/file.txt")).toEqual({
      size: 42,
      created: when,
      modified: when,
      accessed: when,
      isDirectory: false,
      isFile: true,
      permissions: "755",
    });
  });

  it("searchFilesWithValidation uses only name/isDirectory and skips entries failing validation", async () => {
    mockFs.readdir
      .mockResolvedValueOnce([
        { name: "test.txt", isDirectory: () => false },
        { name: "bad_test.txt", isDirectory: () => false },
        { name: "test.log", isDirectory: () => false },
        { name: "sub", isDirectory: () => true },
      ] as never)
      .mockResolvedValueOnce([{ name: "inner-test.md", isDirectory: () => false }] as never);
    mockFs.realpath.mockImplementation(async (p) => {
      if (String(p).includes("bad_")) throw new Error("Access denied");
      return String(p) as never;
    });
    const hits = await searchFilesWithValidation("/allowed/dir", "**/*test*", ["/allowed"], { excludePatterns: ["*.log"] });
    expect(hits).toEqual(["/allowed/dir/test.txt", "/allowed/dir/sub/inner-test.md"]);
    expect(mockFs.readdir).toHaveBeenCalledWith("/allowed/dir", { withFileTypes: true });
  });
});
