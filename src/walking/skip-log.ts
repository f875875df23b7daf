/**
 * What a walk could not read, for the note after its output (SPEC §13: a skip
 * survives the cut): unreadable directories with the error's code, and apart
 * from them those past the platform's path limit, which are not unreadable
 * but out of reach of a path.
 */
import { formatCount, type TextSink } from "../kernel/bounded.js";
import { escapeControls, type Shown } from "../kernel/escape.js";
import { errnoCode } from "../sandbox/index.js";

const NOTE_PATHS = 10;

/** Directories that could not be read during a walk, for the note appended after the output. */
export class SkipLog {
  private readonly shown: string[] = [];
  private readonly tooLong: string[] = [];
  /** Entries skipped, for any reason. */
  count = 0;
  /** Of those, directories past the platform's path limit (the portable strategy reaches things by path). */
  pastPathLimit = 0;

  /** Records an unreadable path (as shown) with the error's code. */
  add(p: Shown, error: unknown): void {
    this.count++;
    const code = errnoCode(error) ?? (error as Error | undefined)?.name ?? "error";
    if (code === "ENAMETOOLONG") {
      if (this.pastPathLimit++ < NOTE_PATHS) this.tooLong.push(p);
    } else if (this.shown.length < NOTE_PATHS) {
      this.shown.push(`${p} (${escapeControls(code)})`);
    }
  }

  /**
   * Appends `\n\n[Skipped N unreadable entries: …]` (and, for paths past the platform's limit, a note of
   * their own) to `sink`, only when something was skipped, and tells the sink the count, so a cut that
   * hides the note still states it (SPEC §13).
   */
  appendNote(sink: TextSink): void {
    if (this.count === 0) return;
    sink.noteSkipped(this.count);
    const unreadable = this.count - this.pastPathLimit;
    if (unreadable > 0) {
      sink.append(`\n\n[Skipped ${formatCount(unreadable)} unreadable ${unreadable === 1 ? "entry" : "entries"}: ${listed(this.shown, unreadable)}]`);
    }
    if (this.pastPathLimit > 0) {
      const what = this.pastPathLimit === 1 ? "directory" : "directories";
      sink.append(
        `\n\n[Not read: ${formatCount(this.pastPathLimit)} ${what} past the platform's path limit (ENAMETOOLONG), which this ` +
          `platform reaches only by path: ${listed(this.tooLong, this.pastPathLimit)}]`,
      );
    }
  }
}

function listed(shown: readonly string[], count: number): string {
  const more = count - shown.length;
  return `${shown.join(", ")}${more > 0 ? `, and ${formatCount(more)} more` : ""}`;
}
