// Types of build.mjs's exports, for the build's own tests (TypeScript does not read the .mjs).

/** Where dist/'s digest of its build inputs lives. */
export const STAMP: string;
/** A digest of every input of the build. */
export function inputsDigest(): string;
/** True when dist/ was built from exactly the current inputs. */
export function isFresh(digest?: string): boolean;
/** Rebuilds `dist` (dist/ by default) through a temporary folder renamed into place; `compile` stands in for tsc. */
export function build(options?: { dist?: string; compile?: (outDir: string) => void }): void;
