import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { convertToWindowsPath, expandHome, normalizePath } from "../../src/path-utils.js";

const realPlatform = Object.getOwnPropertyDescriptor(process, "platform")!;

function fakePlatform(platform: NodeJS.Platform): void {
  Object.defineProperty(process, "platform", { value: platform, configurable: true });
}

afterEach(() => {
  Object.defineProperty(process, "platform", realPlatform);
});

type Row = [input: string, expected: string];

// Rows that must hold whatever the platform is (P in SPEC §7).
const anyPlatform: Row[] = [
  ['"/usr/local/some app/"', "/usr/local/some app"],
  ["'/usr/local/some app'", "/usr/local/some app"],
  ["/usr/local//bin/app///", "/usr/local/bin/app"],
  ["///", "/"],
  ["/", "/"],
  ["C:/NS/My Kindle Content", "C:\\NS\\My Kindle Content"],
  ["c:/windows/system32", "C:\\windows\\system32"],
  ["C:\\\\NS\\\\MyKindleContent", "C:\\NS\\MyKindleContent"],
  ["  C:\\Program Files\\App Name  ", "C:\\Program Files\\App Name"],
  ["C:\\Program Files\\App (x86)\\dir", "C:\\Program Files\\App (x86)\\dir"],
  ["C:\\Users\\u\\", "C:\\Users\\u"],
  ["C:\\", "C:\\"],
  ["/mnt/c/NS/Sub&Folder", "/mnt/c/NS/Sub&Folder"],
  ["/mnt/d/a//b/", "/mnt/d/a/b"],
  ["\\\\\\\\SERVER\\\\share\\\\folder", "\\\\SERVER\\share\\folder"],
  ["\\\\SERVER\\share\\folder", "\\\\SERVER\\share\\folder"],
  ["\\\\SERVER\\share\\folder\\", "\\\\SERVER\\share\\folder"],
];

const windowsOnly: Row[] = [
  ["/c/Users/u/folder", "C:\\Users\\u\\folder"],
  ["/d/a//b", "D:\\a\\b"],
  ["C:", "C:\\"],
  ["d:", "D:\\"],
  ["C:\\a\\.\\b\\..\\c", "C:\\a\\c"],
  ["C:\\..\\..", "C:\\"],
  ["/usr/local/bin", "/usr/local/bin"],
  ["relative/sub/", "relative\\sub"],
];

const posixOnly: Row[] = [
  ["/c/Users/u/folder", "/c/Users/u/folder"],
  ["/a/./b/../c", "/a/./b/../c"],
  ["/a//./b/", "/a/./b"],
  ["/home/user/文件/ünï", "/home/user/文件/ünï"],
];

describe("normalizePath", () => {
  it.each(anyPlatform)("linux: %j → %j", (input, expected) => {
    fakePlatform("linux");
    expect(normalizePath(input)).toBe(expected);
  });

  it.each(anyPlatform)("win32: %j → %j", (input, expected) => {
    fakePlatform("win32");
    expect(normalizePath(input)).toBe(expected);
  });

  it.each(windowsOnly)("win32 only: %j → %j", (input, expected) => {
    fakePlatform("win32");
    expect(normalizePath(input)).toBe(expected);
  });

  it.each(posixOnly)("linux only: %j → %j", (input, expected) => {
    fakePlatform("linux");
    expect(normalizePath(input)).toBe(expected);
  });

  it("reads process.platform on every call", () => {
    fakePlatform("win32");
    expect(normalizePath("/c/x")).toBe("C:\\x");
    fakePlatform("darwin");
    expect(normalizePath("/c/x")).toBe("/c/x");
  });

  it("is idempotent on its own output", () => {
    for (const [input] of [...anyPlatform, ...posixOnly]) {
      const once = normalizePath(input);
      expect(normalizePath(once)).toBe(once);
    }
  });
});

describe("convertToWindowsPath", () => {
  const rows: Array<[NodeJS.Platform, string, string]> = [
    ["win32", "/mnt/c/NS/Sub&Folder", "/mnt/c/NS/Sub&Folder"],
    ["linux", "/mnt/c/NS/Sub&Folder", "/mnt/c/NS/Sub&Folder"],
    ["win32", "/d/some/path", "D:\\some\\path"],
    ["linux", "/d/some/path", "/d/some/path"],
    ["darwin", "/d/some/path", "/d/some/path"],
    ["linux", "C:/a/b", "C:\\a\\b"],
    ["win32", "C:/a/b", "C:\\a\\b"],
    ["linux", "/usr/local/bin", "/usr/local/bin"],
    ["win32", "/usr/local/bin", "/usr/local/bin"],
    ["win32", "/dd/x", "/dd/x"],
    ["linux", "relative/path", "relative/path"],
  ];
  it.each(rows)("%s: %j → %j", (platform, input, expected) => {
    fakePlatform(platform);
    expect(convertToWindowsPath(input)).toBe(expected);
  });
});

describe("expandHome", () => {
  const home = os.homedir();
  const rows: Row[] = [
    ["~", home],
    ["~/", path.join(home, "/")],
    ["~/docs/a.txt", path.join(home, "docs/a.txt")],
    ["~user/docs", "~user/docs"],
    ["/abs/~/x", "/abs/~/x"],
    ["docs/~", "docs/~"],
    ["", ""],
  ];
  it.each(rows)("%j → %j", (input, expected) => {
    expect(expandHome(input)).toBe(expected);
  });
});
