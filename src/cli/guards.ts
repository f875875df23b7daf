/**
 * Logs a rejection nothing handles instead of ending the process; index.ts imports this first, as a dependency
 * may reject while loading (Node's fetch, which the HTTP stack loads with --http, under `ulimit -v`: see CHANGELOG).
 */
process.on("unhandledRejection", (reason) => {
  console.error(`Unhandled rejection: ${String(reason)}`);
});
