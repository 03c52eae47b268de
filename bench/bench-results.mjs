// Machine-readable bench output: with BENCH_RESULTS=<file>, each bench appends one JSON line per measured row.
import fs from "node:fs";

/**
 * Appends {measure, ours, baseline, ratio, target, pass, peakRssMb, bench} to $BENCH_RESULTS (no-op when unset).
 * `ours`/`baseline` are display strings (units included); `pass` is true/false, or null for info rows.
 */
export function recordResult(bench, row) {
  const file = process.env.BENCH_RESULTS;
  if (!file) return;
  const out = {
    bench,
    measure: row.measure,
    ours: row.ours ?? "-",
    baseline: row.baseline ?? "-",
    ratio: typeof row.ratio === "number" && Number.isFinite(row.ratio) ? Number(row.ratio.toFixed(3)) : null,
    target: row.target ?? "-",
    pass: row.pass ?? null,
    peakRssMb: typeof row.peakRssMb === "number" ? Math.round(row.peakRssMb) : null,
  };
  fs.appendFileSync(file, `${JSON.stringify(out)}\n`);
}

export const TABLE_HEADER = ["measure", "ours", "baseline", "ratio", "target", "result", "peak RSS"];

/** Display cells of one result row (the shape recordResult writes). */
export function toCells(r) {
  return [
    r.measure,
    r.ours,
    r.baseline,
    typeof r.ratio === "number" ? `${r.ratio.toFixed(2)}×` : "-",
    r.target,
    r.pass === null || r.pass === undefined ? "-" : r.pass ? "pass" : "FAIL",
    typeof r.peakRssMb === "number" ? `${Math.round(r.peakRssMb)} MB` : "-",
  ];
}

/** Prints rows of cells under TABLE_HEADER, columns aligned; `markdown` draws them as a Markdown table. */
export function printTable(cells, { markdown = false } = {}) {
  const widths = TABLE_HEADER.map((h, i) => Math.max(h.length, ...cells.map((r) => String(r[i]).length)));
  const line = (r) => {
    const padded = r.map((v, i) => String(v).padEnd(widths[i]));
    return markdown ? `| ${padded.join(" | ")} |` : padded.join("  ").trimEnd();
  };
  console.log(line(TABLE_HEADER));
  console.log(markdown ? `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|` : widths.map((w) => "-".repeat(w)).join("  "));
  for (const r of cells) console.log(line(r));
}

/** A positive whole-number knob: `--<name> N` on the command line, else env `envName`, else `fallback`. */
export function benchArg(name, envName, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  const raw = i !== -1 ? process.argv[i + 1] : process.env[envName];
  const n = raw === undefined ? fallback : Number(raw);
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`--${name} must be a positive whole number (got ${raw})`);
  return n;
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}
