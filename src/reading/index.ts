/**
 * The reading package's public face: windows of a file's decoded text by
 * UTF-16 offset with a checkpoint cache, whole-file streaming, head/tail, and
 * media reads — all from an opened handle, in bounded memory; the note on a file that is not UTF-8; and the line-feed
 * count edit_file's first pass uses.
 */
export { CheckpointCache } from "./checkpoints.js";
export { encodingNote, mayBeUndecoded } from "./encoding-note.js";
export { fileInfo, type FileInfo, sampleEnds } from "./file-info.js";
export { headInto, tailInto } from "./lines.js";
export { readLineWindow } from "./line-window.js";
export { readMedia } from "./media.js";
export { MediaSlots } from "./media-slots.js";
export type { ReadOptions } from "./scan.js";
export { countLineFeeds } from "./utf8-count.js";
export { countChars, readWindow, streamInto } from "./window.js";
