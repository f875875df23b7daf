import { afterEach, describe, expect, it } from "vitest";
import { isPathWithinAllowedDirectories } from "../../src/path-validation.js";

const realPlatform = Object.getOwnPropertyDescriptor(process, "platform")!;

function fakePlatform(platform: NodeJS.Platform): void {
  Object.defineProperty(process, "platform", { value: platform, configurable: true });
}

afterEach(() => {
  Object.defineProperty(process, "platform", realPlatform);
});

type Row = [path: string, dirs: string[], expected: boolean];

const posixRows: Row[] = [
  ["/a/b", ["/a/b"], true],
  ["/a/b/c/d.txt", ["/a/b"], true],
  ["/a/bc", ["/a/b"], false],
  ["/a/b-c", ["/a/b"], false],
  ["/a/b.bak/x", ["/a/b"], false],
  ["/a", ["/a/b"], false],
  ["/a/b/", ["/a/b"], true],
  ["/a/b", ["/a/b/"], true],
  ["/a/b//c", ["/a/b"], true],
  ["/a/b/../bc", ["/a/b"], false],
  ["/a/b/../../a/b/c", ["/a/b"], true],
  ["/a/b/../../../../etc/passwd", ["/a/b"], false],
  ["/a/b/./c/..", ["/a/b"], true],
  ["/a/b/..", ["/a/b"], false],
  ["/a/b/c", ["/x", "/y", "/a/b"], true],
  ["/a/b/c", ["/x", "/y"], false],
  ["/anything/at/all", ["/"], true],
  ["/", ["/"], true],
  ["/a/b\x00/c", ["/a/b"], false],
  ["/a/b/c", ["/a/b\x00"], false],
  ["/a/b/c", ["", "/a/b"], true],
  ["/a/b/c", [""], false],
  ["", ["/a/b"], false],
  ["/a/b", [], false],
  ["/a/b/ünï/文件", ["/a/b"], true],
  ["/a/b/c", ["/a/B"], false],
  ["/mnt/c/Users/x", ["/mnt/c/Users"], true],
  ["/mnt/c/Users2", ["/mnt/c/Users"], false],
];

const windowsRows: Row[] = [
  ["C:\\Users\\u\\file.txt", ["C:\\Users\\u"], true],
  ["C:\\Users\\u", ["C:\\Users\\u"], true],
  ["C:\\Users\\u2\\file.txt", ["C:\\Users\\u"], false],
  ["C:\\Users\\u\\..\\v", ["C:\\Users\\u"], false],
  ["C:\\Users\\u\\.\\x\\..\\y", ["C:\\Users\\u"], true],
  ["C:/Users/u/file.txt", ["C:\\Users\\u"], true],
  ["c:\\Users\\u\\file.txt", ["C:\\Users\\u"], true],
  ["D:\\Users\\u\\file.txt", ["C:\\Users\\u"], false],
  ["C:\\anything", ["C:\\"], true],
  ["C:\\anything", ["C:"], true],
  ["c:\\anything", ["C:\\"], true],
  ["D:\\anything", ["C:\\"], false],
  ["C:\\", ["C:\\"], true],
  ["\\\\server\\share\\folder\\f.txt", ["\\\\server\\share\\folder"], true],
  ["\\\\server\\share\\folder2", ["\\\\server\\share\\folder"], false],
  ["\\\\server\\share\\x", ["\\\\server\\share"], true],
  ["\\\\server\\share2\\x", ["\\\\server\\share"], false],
  ["\\\\other\\share\\x", ["\\\\server\\share"], false],
  ["C:\\Users\\u\x00\\x", ["C:\\Users\\u"], false],
];

describe("isPathWithinAllowedDirectories (posix)", () => {
  it.each(posixRows)("%j in %j → %s", (p, dirs, expected) => {
    fakePlatform("linux");
    expect(isPathWithinAllowedDirectories(p, dirs)).toBe(expected);
  });
});

describe("isPathWithinAllowedDirectories (win32 faked)", () => {
  it.each(windowsRows)("%j in %j → %s", (p, dirs, expected) => {
    fakePlatform("win32");
    expect(isPathWithinAllowedDirectories(p, dirs)).toBe(expected);
  });
});

describe("isPathWithinAllowedDirectories input handling", () => {
  it("returns false for values that are not strings", () => {
    for (const bad of [undefined, null, 42, {}, ["/a"]]) {
      expect(isPathWithinAllowedDirectories(bad as unknown as string, ["/a"])).toBe(false);
    }
    expect(isPathWithinAllowedDirectories("/a/b", "/a" as unknown as string[])).toBe(false);
    expect(isPathWithinAllowedDirectories("/a/b", [null, 7, "/a"] as unknown as string[])).toBe(true);
  });

  it("does not read the disk: a non-existent tree is judged lexically", () => {
    expect(isPathWithinAllowedDirectories("/definitely/not/here/x", ["/definitely/not/here"])).toBe(true);
  });

  it("resolves relative inputs against the working directory, as upstream does", () => {
    fakePlatform("linux");
    expect(isPathWithinAllowedDirectories("relative/file", [process.cwd()])).toBe(true);
    expect(isPathWithinAllowedDirectories("../sibling", [process.cwd()])).toBe(false);
  });
});
