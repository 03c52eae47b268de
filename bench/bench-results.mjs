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
