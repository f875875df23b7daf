/** Who this server says it is (serverInfo, server/discover, --version). */
import { readFileSync } from "node:fs";

/** The server name of serverInfo (SPEC §21: the same in both protocol eras). */
export const SERVER_NAME = "bounded-filesystem";

// The one read this module makes, once at load: package.json is two levels up from both
// src/server/ and dist/server/, and npm, npx and bunx install it beside dist/.
const MANIFEST = new URL("../../package.json", import.meta.url);
/** The package version reported by --version and serverInfo: package.json's, so it is written once. */
export const VERSION: string = (JSON.parse(readFileSync(MANIFEST, "utf8")) as { version: string }).version;
