/** The one plain-text table the benchmark prints, and the pass/fail verdict of each row. */

/** SPEC §6: server peak RSS stays under this for any single scenario. */
export const RSS_LIMIT_MB = 150;

/** `n` with its thousands grouped by commas, as the rows print counts. */
export const group = (n) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");

function formatMs(ms) {
  if (ms === undefined) return "-";
  return ms < 100 ? ms.toFixed(1) : group(Math.round(ms));
}

function ratioCell(ratio) {
  if (ratio === undefined) return "-";
  const value = ratio.value.toFixed(2);
  const label = ratio.label ? ` ${ratio.label}` : "";
  return ratio.info ? `${value} (info)` : `${value} ≤ ${ratio.max}${label}`;
}

/** Why a row misses its targets, or [] when it meets them (rows without targets pass). */
export function failures(row) {
  const out = [];
  if (row.rssMb !== undefined && row.rssMb >= RSS_LIMIT_MB) out.push(`RSS ${row.rssMb.toFixed(0)} MB`);
  if (row.ratio && !row.ratio.info && !(row.ratio.value <= row.ratio.max)) out.push("ratio");
  if (row.ok === false) out.push("check");
  return out;
}

function verdict(row) {
  const hasTarget = row.rssMb !== undefined || (row.ratio && !row.ratio.info) || row.ok !== undefined;
  if (!hasTarget) return "-";
  const why = failures(row);
  return why.length === 0 ? "ok" : `FAIL (${why.join(", ")})`;
}

/** Renders rows as an aligned table: scenario | median ms | result chars | peak RSS MB | ratio/target | pass? */
export function renderTable(rows) {
  const header = ["scenario", "median ms", "result chars", "peak RSS MB", "ratio/target", "pass?"];
  const right = [false, true, true, true, false, false];
  const cells = rows.map((r) => [
    r.name,
    formatMs(r.ms),
    r.chars === undefined ? "-" : group(r.chars),
    r.rssMb === undefined ? "-" : r.rssMb.toFixed(1),
    ratioCell(r.ratio),
    verdict(r),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
  const line = (c) =>
    c
      .map((v, i) => (right[i] ? v.padStart(widths[i]) : v.padEnd(widths[i])))
      .join(" | ")
      .trimEnd();
  return [line(header), widths.map((w) => "-".repeat(w)).join("-+-"), ...cells.map(line)].join("\n");
}
