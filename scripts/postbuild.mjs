// Makes the bin executable after tsc: npm and bunx run dist/index.js directly.
import { chmodSync } from "node:fs";

chmodSync(new URL("../dist/index.js", import.meta.url), 0o755);
