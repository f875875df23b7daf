// The import rules of src/ (issue 24; docs/ARCHITECTURE.md "Folders"), checked by `npm run lint`.
// dependency-cruiser rather than Biome's noRestrictedImports: it judges resolved paths, so one rule
// covers "../tools/x.js" and "../../tools/x.js" alike, and it finds cycles, which a per-file import
// lint cannot see. A rule broken names the importing file, the imported one and the rule's comment.
//
// Folders from the top of the graph down: index.ts → cli/ → transports/ → server/ → tools/ →
// the core (editing/, grep/, walking/, reading/ → sandbox/ → kernel/ and the §7 path modules).

/** The core stages and the kernel under them. */
const CORE = "^src/(sandbox|walking|grep|reading|editing|kernel)/";
/** A file-system module imported by name (`node:fs` resolves to `fs`). */
const FS = "^(node:)?fs(/promises)?$";

module.exports = {
  forbidden: [
    // ---- (a) layers: no edge runs back up ----
    {
      name: "core-not-up",
      comment:
        "The core (sandbox, walking, grep, reading, editing, kernel) serves every caller: it never imports tools, the MCP server, a transport or the command line.",
      severity: "error",
      from: { path: CORE },
      to: { path: "^src/(tools|server|transports|cli)/" },
    },
    {
      name: "sandbox-under-the-stages",
      comment: "The sandbox and the kernel sit under the stages: neither imports walking, grep, reading or editing.",
      severity: "error",
      from: { path: "^src/(sandbox|kernel)/" },
      to: { path: "^src/(walking|grep|reading|editing)/" },
    },
    {
      name: "kernel-at-the-bottom",
      comment: "The kernel imports nothing of src/ outside itself.",
      severity: "error",
      from: { path: "^src/kernel/" },
      to: { path: "^src/", pathNot: "^src/kernel/" },
    },
    {
      name: "tools-not-up",
      comment: "A tool is called by the server: it never imports the server, a transport or the command line.",
      severity: "error",
      from: { path: "^src/tools/" },
      to: { path: "^src/(server|transports|cli)/" },
    },
    {
      name: "server-not-up",
      comment: "The MCP server is served by the transports and configured by the command line: it imports neither.",
      severity: "error",
      from: { path: "^src/server/" },
      to: { path: "^src/(transports|cli)/" },
    },
    {
      name: "transports-not-up",
      comment: "The transports are handed settings the command line parsed: they never import the command line.",
      severity: "error",
      from: { path: "^src/transports/" },
      to: { path: "^src/cli/" },
    },
    {
      name: "roots-not-imported",
      comment: "index.ts is the composition root and lib.ts the §7 shelf for outside users: nothing in src/ imports either.",
      severity: "error",
      from: { path: "^src/" },
      to: { path: "^src/(index|lib)\\.ts$" },
    },

    // ---- (b) no circles ----
    {
      name: "no-circular",
      comment: "No module reaches itself through its imports: a circle hides which side is the lower one.",
      severity: "error",
      from: { path: "^src/" },
      to: { circular: true },
    },

    // ---- (c) only the sandbox reaches files by path ----
    {
      name: "fs-only-in-the-sandbox",
      comment:
        "Every file the tools touch is reached through src/sandbox/, which checks it against the allowed directories; " +
        "elsewhere only types come from fs (import type). The exceptions below each read something that is no tool's file.",
      severity: "error",
      from: {
        path: "^src/",
        pathNot: [
          "^src/sandbox/",
          // SPEC §7: the upstream-compatible module API reads and writes the paths its caller gives it, through a
          // mockable "fs/promises", as upstream's did; no tool goes through it (rule roots-not-imported).
          "^src/lib\\.ts$",
          // SPEC §7: resolves a directory argument or a client's root to the real directory that then becomes an
          // allowed directory, so there is no allowed directory yet to check it against.
          "^src/roots-utils\\.ts$",
          // The server's own package.json, for its version: a file of the installation, never the user's.
          "^src/server/identity\\.ts$",
          // --http start-up: the token, TLS key and certificate files the operator named on the command line.
          "^src/transports/http/index\\.ts$",
          // No path at all: reads by descriptor (pread) the files the sandbox opened and handed over,
          // on a worker thread that cannot hold a sandbox.
          "^src/grep/scan-worker\\.ts$",
          // No path at all: closes (closeSync) the descriptors the sandbox opened for the walk.
          "^src/walking/file-walk\\.ts$",
        ],
      },
      to: { path: FS, dependencyTypesNot: ["type-only"] },
    },

    // ---- the unit tests need no build ----
    {
      name: "unit-tests-spawn-nothing",
      comment:
        "__tests__/unit/ runs in process from the sources (support/in-process.ts): a test that starts the built server belongs in __tests__/e2e/.",
      severity: "error",
      from: { path: "^__tests__/unit/" },
      to: { path: ["^__tests__/support/(spawn|privileges)\\.ts$", "^dist/"] },
    },

    // ---- (d) only the platform files branch on the platform ----
    // Placeholder for house-b (one file per platform strategy): the rule that keeps
    // process.platform, /proc and their kin inside the strategy files goes here.
  ],
  options: {
    // Type-only imports are edges too (a circle through types is still a circle), and rule (c) tells them apart.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^(dist|node_modules)/" },
  },
};
