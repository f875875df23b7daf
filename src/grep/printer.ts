/**
 * The sink of one search_file_contents call (SPEC §10): each file's figures, in walk order, go to
 * the exact totals and to the pager, and the text the pager lets through (matching lines, or
 * files-mode entries) into the call's capped TextSink, a share of the cap kept for the closing
 * summary, which follows a blank line.
 */
import type { TextSink } from "../kernel/bounded.js";
import type { Shown } from "../kernel/escape.js";
import { fileEntry } from "./format.js";
import type { Pager } from "./pager.js";
import type { FileOutcome } from "./protocol.js";
import type { FileScan } from "./file-scan.js";
import { SearchTotals, summaryText, type Page, type SkipReason } from "./totals.js";

/** What one file contributed. */
export interface FileCounts {
  binary: boolean;
  matchingLines: number;
  bytes: number;
}

/** The results of one call. */
export class Printer {
  /** Exact totals so far. */
  readonly totals = new SearchTotals();

  /**
   * @param reserve characters kept free for the summary
   * @param onCounted hears every file recorded, in order, with its occurrences (0 when skipped)
   */
  constructor(
    private readonly sink: TextSink,
    readonly pager: Pager,
    private readonly reserve: number,
    private readonly onCounted?: (shown: Shown, occurrences: number) => void,
  ) {}

  /** Characters matches may still take. */
  room(): number {
    return Math.max(0, this.sink.max - this.sink.total - this.reserve);
  }

  /** True once any text was written (a file's text then starts after a blank line). */
  get wroteAny(): boolean {
    return this.sink.total > 0;
  }

  /**
   * Adds one file's figures to the totals and its text (lines or files mode) to the result.
   * @throws when a worker failed on the file without a system error code (not the file's fault)
   */
  record(r: FileScan | FileOutcome, shown: Shown): FileCounts {
    this.onCounted?.(shown, "error" in r || r.binary ? 0 : r.occurrences);
    if ("error" in r) {
      // A file that fails mid-read is counted, not fatal.
      if (r.code === undefined) throw new Error(r.error);
      this.totals.skip("unreadable");
      return { binary: false, matchingLines: 0, bytes: 0 };
    }
    if (r.binary) {
      this.totals.skip("binary");
      return { binary: true, matchingLines: 0, bytes: r.bytes };
    }
    this.totals.addFile(r.matchingLines, r.occurrences);
    const pager = this.pager;
    if ("text" in r && pager.showing) {
      pager.tookLines(r);
      this.sink.append(r.text);
    } else if (pager.mode === "lines") pager.passedLines(r.matchingLines);
    else if (pager.mode === "files" && r.matchingLines > 0) {
      const line = `${fileEntry(shown, r.matchingLines, r.occurrences)}\n`;
      if (pager.takesFile(line.length, this.room())) this.sink.append(line);
    }
    return { binary: false, matchingLines: r.matchingLines, bytes: r.bytes };
  }

  /** Records `count` files not searched for `reason`. */
  skip(reason: SkipReason, count: number): void {
    this.totals.skip(reason, count);
  }

  /** Where this result stands: what it showed, and whether it was cut. */
  page(): Page {
    return this.pager.page(this.pager.mode === "files" ? this.totals.matchingFiles : this.totals.matchingLines);
  }

  /** The totals and skips of the files recorded so far, for an error that ends the call early. */
  soFar(): string {
    return summaryText(this.totals, { mode: "count", offset: 0, shown: 0, cut: false });
  }

  /** Appends the summary (after a blank line when text precedes it) and returns it. */
  finish(): string {
    const summary = summaryText(this.totals, this.page());
    this.sink.append(this.wroteAny ? `\n${summary}` : summary);
    return summary;
  }
}
