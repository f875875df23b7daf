/**
 * Static bearer tokens (SPEC §17): the token file's format, and matching a
 * presented token against every configured one in constant time. A token
 * never leaves this module: what the rest of the server sees is its line
 * number and whether it may write.
 */
import { createHash, timingSafeEqual } from "node:crypto";

/** Shortest token accepted, in characters. */
const MIN_TOKEN_LENGTH = 32;

/** What a matching token grants: who it is (its line in the file) and whether it is read-only. */
export interface StaticGrant {
  readonly line: number;
  readonly readOnly: boolean;
}

interface Entry extends StaticGrant {
  readonly digest: Buffer;
}

// RFC 6750 b64token: what an Authorization: Bearer header can carry.
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

/** A token file that cannot be used; the message names the file and line, never the token. */
export class TokenFileError extends Error {
  override readonly name = "TokenFileError";
}

const digest = (token: string): Buffer => createHash("sha256").update(token, "utf8").digest();

/**
 * Parses a token file: one token per line, optionally followed by ` read-only`; blank lines and
 * lines starting with `#` are skipped.
 * @throws TokenFileError naming `file` and the line, the rule and the length seen
 */
export function parseTokenFile(text: string, file: string): StaticTokens {
  const entries: Entry[] = [];
  const lines = text.split(/\r?\n/);
  lines.forEach((raw, index) => {
    const line = index + 1;
    const trimmed = raw.trim();
    if (trimmed === "" || trimmed.startsWith("#")) return;
    const [token = "", marker, ...rest] = trimmed.split(/\s+/);
    if (rest.length > 0 || (marker !== undefined && marker !== "read-only")) {
      throw new TokenFileError(`${file}, line ${line}: expected a token optionally followed by " read-only"`);
    }
    if (!B64TOKEN.test(token)) {
      throw new TokenFileError(`${file}, line ${line}: a token may hold only A-Z a-z 0-9 - . _ ~ + / (and = at its end)`);
    }
    if (token.length < MIN_TOKEN_LENGTH) {
      throw new TokenFileError(`${file}, line ${line}: the token has ${token.length} characters; at least ${MIN_TOKEN_LENGTH} are needed`);
    }
    entries.push({ line, readOnly: marker === "read-only", digest: digest(token) });
  });
  if (entries.length === 0) throw new TokenFileError(`${file}: no token in the file (one per line, at least ${MIN_TOKEN_LENGTH} characters)`);
  return new StaticTokens(entries);
}

/** The configured tokens, kept only as SHA-256 digests. */
export class StaticTokens {
  constructor(private readonly entries: readonly Entry[]) {}

  /** How many tokens are configured. */
  get size(): number {
    return this.entries.length;
  }

  /** The grant of the token equal to `presented`, comparing it with every token in constant time. */
  match(presented: string): StaticGrant | undefined {
    // Digests have one length, so timingSafeEqual applies; every entry is compared, so the time says nothing of which.
    const seen = digest(presented);
    let found: Entry | undefined;
    for (const entry of this.entries) if (timingSafeEqual(seen, entry.digest) && found === undefined) found = entry;
    return found && { line: found.line, readOnly: found.readOnly };
  }
}
