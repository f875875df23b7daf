/**
 * Which matches one search_file_contents result shows (SPEC §10): the page of an `offset`, as a
 * state machine fed file by file in walk order. It skips the matching lines (lines mode) or files
 * (files mode) earlier pages showed, takes what fits in the room it is told of, and once something
 * did not fit shows nothing more. It does no I/O: the caller reports each file's figures and the
 * room left, and prints what it is told to.
 */
import { checkInteger } from "../kernel/integers.js";
import type { FileRequest, OutputMode } from "./region-search.js";
import type { Page } from "./totals.js";

/** What a file's scan showed, in lines mode. */
export interface ShownLines {
  /** Matching lines counted, not shown, for an earlier page. */
  skipped: number;
  shown: number;
  /** Something of the file did not fit. */
  exhausted: boolean;
}

/** The page of one call. */
export class Pager {
  private skipLeft: number;
  private shownCount = 0;
  private cut = false;

  /** @throws when `offset` is not a whole number ≥ 0 */
  constructor(
    readonly mode: OutputMode,
    readonly offset: number,
  ) {
    this.skipLeft = checkInteger("offset", offset, 0);
  }

  /** True while matching lines are still to be shown (lines mode, before the cut). */
  get showing(): boolean {
    return this.mode === "lines" && !this.cut;
  }

  /** Whether a file counted with `matchingLines` holds lines this page shows (and so must be scanned to show them). */
  wantsLines(matchingLines: number): boolean {
    return this.showing && matchingLines > this.skipLeft;
  }

  /** The page's part of a file's request: show or count, what to skip, the room, whether its first match is shown regardless. */
  request(room: number): Pick<FileRequest, "mode" | "skip" | "room" | "forceFirst"> {
    return { mode: this.showing ? "lines" : "count", skip: this.skipLeft, room, forceFirst: this.shownCount === 0 };
  }

  /** A file scanned to show its lines (lines mode, while showing). */
  tookLines(scan: ShownLines): void {
    this.skipLeft -= scan.skipped;
    this.shownCount += scan.shown;
    if (scan.exhausted) this.cut = true;
  }

  /** A file only counted (lines mode): its matching lines all go to the skip. */
  passedLines(matchingLines: number): void {
    if (this.showing) this.skipLeft -= matchingLines;
  }

  /** A matching file in files mode, whose entry takes `length` characters of `room`: true when it is to be shown. */
  takesFile(length: number, room: number): boolean {
    if (this.skipLeft > 0) {
      this.skipLeft--;
      return false;
    }
    if (this.cut) return false;
    if (length > room && this.shownCount > 0) {
      this.cut = true;
      return false;
    }
    this.shownCount++;
    return true;
  }

  /** Where the result stands once `total` matching units (lines, or files in files mode) are known. */
  page(total: number): Page {
    // A cut that only lost trailing context leaves no match to continue with.
    return { mode: this.mode, offset: this.offset, shown: this.shownCount, cut: this.cut && this.offset + this.shownCount < total };
  }
}
