/**
 * A tree of real installed packages for the content-search rows (SPEC §23): a few large npm
 * packages installed once into `<dir>/packages` (scripts off), then reused. Its size is counted
 * by a walk, as the repository-shaped tree's is.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

/** What is installed: large, widely used packages with much JavaScript and TypeScript in them. */
const PACKAGES = ["typescript@5.9.3", "@babel/core@7.28.5", "lodash@4.17.21", "rxjs@7.8.2", "date-fns@4.1.0"];

/** Files and bytes of the regular files under `dir`. */
function measure(dir) {
  let files = 0;
  let bytes = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    files++;
    bytes += fs.statSync(path.join(entry.parentPath, entry.name)).size;
  }
  return { files, bytes };
}

/** The installed tree under `root` (installed on first use): `{ dir, files, bytes }`, or undefined when npm could not install it. */
export function ensurePackagesTree(root, log) {
  const dir = path.join(root, "packages");
  const done = path.join(dir, ".installed");
  if (!fs.existsSync(done)) {
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "bench-packages", private: true }));
    log(`installing ${PACKAGES.join(", ")} into ${dir} …`);
    try {
      execFileSync("npm", ["install", "--ignore-scripts", "--no-audit", "--no-fund", "--no-save", ...PACKAGES], { cwd: dir, stdio: "ignore" });
    } catch (error) {
      log(`npm install failed (${error instanceof Error ? error.message : String(error)}): the installed-packages rows are skipped`);
      return undefined;
    }
    fs.writeFileSync(done, PACKAGES.join("\n"));
  }
  return { dir: path.join(dir, "node_modules"), ...measure(path.join(dir, "node_modules")) };
}
