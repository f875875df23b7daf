/** A bad command line or environment; the process exits with status 2. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}
