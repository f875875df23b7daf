// Lines past ASCII in a Latin-1 view: which are tested alone (decoded) and when a region has enough of them to be decoded whole.
import { lineStartIn } from "./region-lines.js";

const WIDE_BYTE = /[\x80-\xff]/g;

/** Bytes of a region looked at to judge how many of its lines hold bytes past ASCII. */
const SAMPLE_BYTES = 16 * 1024;

/**
 * Whether at least a quarter of the region's lines (judged on its start) hold a byte past ASCII.
 * Decoding a region whole cost about twice its Latin-1 view, and testing a wide line alone about
 * 1.6 times a block's share of it (a 600 MiB mostly-ASCII file and a 60 MiB all-accented one):
 * from a quarter of the lines on, block mode is the faster.
 */
export function mostlyWide(buf: Buffer): boolean {
  const sample = buf.toString("latin1", 0, Math.min(buf.length, SAMPLE_BYTES));
  let lines = 1;
  for (let i = sample.indexOf("\n"); i >= 0 && i < sample.length - 1; i = sample.indexOf("\n", i + 1)) lines++;
  let wide = 0;
  WIDE_BYTE.lastIndex = 0;
  for (let m = WIDE_BYTE.exec(sample); m !== null; m = WIDE_BYTE.exec(sample)) {
    wide++;
    const nl = sample.indexOf("\n", m.index);
    if (nl < 0) break;
    WIDE_BYTE.lastIndex = nl + 1;
  }
  return wide * 4 >= lines && wide > 0;
}

/** The start (in `view`) of the first line holding a byte past ASCII from character `from` on, or -1. */
export function nextWideLine(view: string, from: number): number {
  WIDE_BYTE.lastIndex = from;
  const m = WIDE_BYTE.exec(view);
  return m === null ? -1 : lineStartIn(view, m.index);
}
