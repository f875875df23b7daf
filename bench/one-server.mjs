/**
 * SPEC §23: one server running every search scenario of the bench in turn stays under 200 MB. The
 * big file's count searches, the generated tree's, then the repository-shaped tree's and the installed
 * packages' in count and lines mode, literal and regex, each once and in that order on one server,
 * whose peak RSS over the whole run is the row's figure.
 */
import { LITERAL, REGEX as TREE_REGEX } from "./repo-search.mjs";
import { NO_LITERAL, REGEX, REPEATED, WIDE, WORD } from "./search.mjs";
import { withServer } from "./server.mjs";

const LIMIT_MB = 200;

/** The calls of the run, in order. */
function searches(fx, trees) {
  const big = [
    { query: WORD, caseSensitive: true },
    { query: WORD.toUpperCase() },
    { query: REGEX, regex: true, caseSensitive: true },
    { query: NO_LITERAL, regex: true, caseSensitive: true },
    { query: REPEATED, regex: true },
    { query: WIDE, regex: true, caseSensitive: true },
  ].map((args) => ({ path: fx.text, outputMode: "count", ...args }));
  const walked = [{ path: fx.tree, query: WORD, caseSensitive: true, respectGitignore: false, outputMode: "count" }];
  for (const tree of trees) {
    for (const query of [{ query: LITERAL }, { query: TREE_REGEX, regex: true }]) {
      for (const outputMode of ["count", "lines"])
        walked.push({ path: tree.dir, caseSensitive: true, respectGitignore: false, outputMode, ...query });
    }
  }
  return [...big, ...walked];
}

/** One row: every search in turn on one fresh server, passing when its peak RSS stays under 200 MB. */
export async function oneServerScenario(fx, trees) {
  const calls = searches(fx, trees);
  const started = performance.now();
  const { rssMb } = await withServer(fx.root, [], async (s) => {
    for (const args of calls) await s.call("search_file_contents", args);
  });
  return [
    {
      name: `one server, ${calls.length} searches in turn (big file, tree, ${trees.length} source trees): peak RSS ${rssMb.toFixed(0)} MB, < ${LIMIT_MB} MB`,
      ms: performance.now() - started,
      chars: undefined,
      ok: rssMb < LIMIT_MB,
    },
  ];
}
