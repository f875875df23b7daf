/**
 * The bounds of the wire (SPEC §13, §17), in one place: how long a request
 * line may be, how deep it may nest, how much unsent output and unstarted
 * work the server holds before it stops reading, the media bound that
 * keeps every answer within what SDK clients accept, and over HTTP the
 * bounds across all requests and sessions.
 */

/**
 * The line limit of the MCP TypeScript SDK's stdio clients: their ReadBuffer
 * (shared/stdio.js, STDIO_DEFAULT_MAX_BUFFER_SIZE) closes the connection when
 * its buffer would pass 10 MiB.
 */
const SDK_CLIENT_LINE_LIMIT = 10 * 1024 * 1024;

/**
 * Room kept under SDK_CLIENT_LINE_LIMIT for the answer's envelope (ids, MIME
 * type, a resource URI of up to a few KiB) and for the start of the next
 * message, which can share the last pipe read (at most 64 KiB) with it.
 */
const ANSWER_RESERVE = 64 * 1024;

/**
 * The largest --max-media-bytes: base64 makes 4 characters of every 3 bytes,
 * so this many bytes encode to at most SDK_CLIENT_LINE_LIMIT − ANSWER_RESERVE
 * characters (7,815,168 bytes → 10,420,224 characters).
 */
export const MAX_MEDIA_BYTES_BOUND = Math.floor((SDK_CLIENT_LINE_LIMIT - ANSWER_RESERVE) / 4) * 3;

/**
 * The longest request line the server reads (100 MiB). Longer lines are
 * discarded as they stream in and answered with an error; 100 MiB leaves room
 * for a 64 MiB write_file even when JSON escaping grows its content.
 */
export const MAX_REQUEST_LINE_BYTES = 100 * 1024 * 1024;

/**
 * The deepest nesting of arrays and objects in one message. A tool call needs
 * about 5 levels, and a wrongly shaped argument a few hundred still gets the
 * tool's own "Invalid arguments" error; deeper lines are refused before
 * JSON.parse sees them, so no later recursion (validation, JSON.stringify in
 * error texts) comes near the stack limit (about 10,000 frames).
 */
export const MAX_MESSAGE_DEPTH = 1000;

/**
 * The most names one object may hold in a message's first levels: the message, its params (or result), their
 * objects (arguments, _meta, capabilities) and those objects' own. The SDK's schemas read every name there, several
 * times, before any handler runs: 500,000 argument names held the server 4 s. A request needs a few dozen.
 */
export const MAX_NAMES = 1000;

/** Levels below the message whose objects MAX_NAMES bounds (params 1, arguments 2, an argument's object 3). */
export const NAMED_LEVELS = 3;

/** Unsent output (bytes) above which no further request is started. */
export const OUTPUT_HIGH_WATER = 4 * 1024 * 1024;

/**
 * What a message waiting for the client to read holds besides its bytes, counted against OUTPUT_HIGH_WATER: its
 * request's state in the SDK, kept until the message is written. 300,000 pings from a client that read nothing
 * held 834 MB, each answer's 40 bytes letting 100,000 of them wait below the mark.
 */
export const UNSENT_MESSAGE_BYTES = 4096;

/** Requests started but not yet answered, above which no further request is started. */
export const MAX_IN_FLIGHT = 32;

/** Bytes of received requests waiting to start, above which stdin is no longer read. */
export const QUEUED_REQUEST_BYTES = 8 * 1024 * 1024;

/**
 * HTTP: bytes of request bodies read (or being read) and not yet answered, over
 * all requests, sessions and both eras (156 MiB): one body at the message bound,
 * and 56 MiB beside it for everything else; a body that would pass it gets 503.
 * Reading, decoding and parsing a body holds about three times its size for a
 * moment, so this also bounds the memory bodies cost (measured: BENCHMARKS.md).
 */
export const HTTP_BODY_BYTES_IN_FLIGHT = MAX_REQUEST_LINE_BYTES + 56 * 1024 * 1024;

/**
 * HTTP: bytes of answers held for clients that have not read them, over all
 * sessions and both eras. Past it no new session or stateless request is
 * served (503), a session that has not read its answers reads no more requests,
 * and a further answer to such a client is replaced by an error saying so.
 */
export const HTTP_HELD_OUTPUT_BYTES = 64 * 1024 * 1024;
