/**
 * A full garbage collection on demand, after work that left a large heap of garbage behind it (an edit or a
 * replace over a large file). V8 grows its heap until it decides to collect, so a second large edit started
 * before that stacks its garbage on the first's: the server's peak grew by 16 MB an edit, past SPEC §23's
 * 150 MB on the third. The collector is reached once through `--expose-gc` set at run time; where that is
 * refused, nothing happens.
 */
import v8 from "node:v8";
import vm from "node:vm";

// The collector, once looked up: a function, or null where it cannot be had. A pure cache of a process fact.
let collector: (() => void) | null | undefined;

/** Runs a full garbage collection when the runtime allows it; a no-op otherwise. */
export function collectGarbage(): void {
  if (collector === undefined) {
    try {
      v8.setFlagsFromString("--expose-gc");
      collector = vm.runInNewContext("gc") as () => void;
    } catch {
      collector = null;
    }
  }
  collector?.();
}
