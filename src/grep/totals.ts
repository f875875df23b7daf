/**
 * The totals every search_file_contents result ends with (SPEC §10), and the
 * page arithmetic of `offset`: which matching lines (lines mode) or files
 * (files mode) a result shows and the offset that continues it.
 */
import { formatCount } from "../kernel/bounded.js";
import type { OutputMode } from "./region-search.js";

/** Why a file was not searched. */
export type SkipReason = "binary" | "gitignored" | "unreadable" | "outsideLink" | "innerLink" | "repeatLink" | "linkLoop" | "pathLimit" | "badName";

const SKIP_TEXT: Record<SkipReason, string> = {
  binary: "binary",
  gitignored: "ignored by .gitignore or in .git, a directory counting once (pass respectGitignore: false to search them)",
  unreadable: "unreadable or not a regular file",
  outsideLink: "symlinks leading outside the allowed directories",
  innerLink: "symlinks to files inside the searched directory, not followed: each file is searched under its own name",
  repeatLink: "symlinks to files already searched through another symlink",
  linkLoop: "symlink loops or chains of more than 40 links (too many levels of symbolic links, ELOOP)",
  pathLimit: "past the platform's path limit (ENAMETOOLONG), which this platform reaches only by path",
  badName: "with a name that is not valid UTF-8, which this server cannot open (shown with \uFFFD in listings)",
};

const plural = (n: number, one: string, many: string): string => `${formatCount(n)} ${n === 1 ? one : many}`;

/** Exact totals of one search, added to file by file. */
export class SearchTotals {
  matchingLines = 0;
  /** Occurrences in the matching lines (counted in count and files modes only). */
  occurrences = 0;
  matchingFiles = 0;
  filesSearched = 0;
  readonly skipped: Record<SkipReason, number> = {
    binary: 0,
    gitignored: 0,
    unreadable: 0,
    outsideLink: 0,
    innerLink: 0,
    repeatLink: 0,
    linkLoop: 0,
    pathLimit: 0,
    badName: 0,
  };

  /** Records a searched file, its matching lines and their occurrences. */
  addFile(matchingLines: number, occurrences = 0): void {
    this.filesSearched++;
    this.matchingLines += matchingLines;
    this.occurrences += occurrences;
    if (matchingLines > 0) this.matchingFiles++;
  }

  /** Records `count` files not searched for `reason`. */
  skip(reason: SkipReason, count = 1): void {
    this.skipped[reason] += count;
  }

  /** Files not searched, all reasons. */
  get skippedFiles(): number {
    return Object.values(this.skipped).reduce((a, b) => a + b, 0);
  }
}

/**
 * Which part of the matches a result shows: `offset` units (matching lines or
 * files) were skipped, then `shown` were shown; `cut` when more would have
 * been shown had there been room.
 */
export interface Page {
  mode: OutputMode;
  offset: number;
  shown: number;
  cut: boolean;
}

/** The offset that continues a cut page, or undefined when nothing remains. */
export function nextOffset(page: Page): number | undefined {
  return page.mode !== "count" && page.cut ? page.offset + page.shown : undefined;
}

/** The closing summary: totals, skips with their reasons, and how to continue a cut page. */
export function summaryText(t: SearchTotals, page: Page): string {
  const occurrences = page.mode === "lines" ? "" : ` (${plural(t.occurrences, "occurrence", "occurrences")})`;
  const lines = [
    `Found ${plural(t.matchingLines, "matching line", "matching lines")}${occurrences} in ${plural(t.matchingFiles, "file", "files")}; searched ${plural(t.filesSearched, "file", "files")}.`,
  ];
  const reasons = (Object.keys(SKIP_TEXT) as SkipReason[]).filter((r) => t.skipped[r] > 0);
  if (reasons.length > 0) {
    const text = (r: SkipReason): string =>
      (r === "outsideLink" || r === "innerLink" || r === "repeatLink") && t.skipped[r] === 1
        ? SKIP_TEXT[r].replace("symlinks", "symlink").replace("files", "a file")
        : SKIP_TEXT[r];
    const parts = reasons.map((r) => `${formatCount(t.skipped[r])} ${text(r)}`);
    lines.push(`Not searched: ${plural(t.skippedFiles, "file", "files")} (${parts.join("; ")}).`);
  }
  if (page.mode !== "count") {
    const unit = page.mode === "lines" ? "matching lines" : "matching files";
    const total = page.mode === "lines" ? t.matchingLines : t.matchingFiles;
    const next = nextOffset(page);
    if (page.shown > 0 && (next !== undefined || page.offset > 0)) {
      lines.push(`Showing ${unit} ${formatCount(page.offset + 1)}-${formatCount(page.offset + page.shown)} of ${formatCount(total)}.`);
    } else if (page.shown === 0 && page.offset > 0 && total > 0) {
      lines.push(`No ${unit} after offset=${page.offset} (there are ${formatCount(total)}).`);
    }
    if (next !== undefined) lines.push(`Call again with offset=${next} to continue.`);
  }
  return lines.join("\n");
}
