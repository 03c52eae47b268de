// Percent, rate and ETA for a progress line (only ever shown by the TTY spinner): a pure formatter and a tiny meter.
import { formatBytes, formatCount } from "../../core/format-bytes.js";

/** Only the TTY spinner shows percent, rate and ETA: never under --json or --quiet, never off a terminal. */
export function showsProgressStats(output: { interactive: boolean; json: boolean; quiet: boolean }): boolean {
  return output.interactive && !output.json && !output.quiet;
}

export type ProgressUnit = "bytes" | { items: string };

export interface ProgressStatsInput {
  done: number;
  /** Unknown or 0: no percent and no ETA (a rate can still be shown). */
  total?: number;
  /** Time spent on this count so far. */
  elapsedMs: number;
  /** What was already done when the timing began (the rate counts only what happened since). */
  baseDone?: number;
  unit: ProgressUnit;
}

/** Below this a rate is noise (the first chunk, a cache hit): nothing but the percent is shown. */
export const MIN_RATE_ELAPSED_MS = 1000;

/**
 * ` 42% · 12.3 MiB/s · ETA 35s` (leading space, ready to append), or "" when there is nothing to add. The rate
 * is the mean since the count began: steadier than the last chunk's, and right for one long copy or import.
 */
export function formatProgressStats(input: ProgressStatsInput): string {
  const { done, elapsedMs, unit } = input;
  const total = input.total !== undefined && input.total > 0 ? input.total : undefined;
  const parts: string[] = [];
  if (total !== undefined) parts.push(`${Math.min(100, Math.max(0, Math.floor((done / total) * 100)))}%`);
  const progressed = done - (input.baseDone ?? 0);
  if (elapsedMs >= MIN_RATE_ELAPSED_MS && progressed > 0) {
    const perSecond = (progressed * 1000) / elapsedMs;
    parts.push(formatRate(perSecond, unit));
    if (total !== undefined && done < total) parts.push(`ETA ${formatDuration(((total - done) / perSecond) * 1000)}`);
  }
  return parts.length > 0 ? ` ${parts.join(" · ")}` : "";
}

/** `12.3 MiB/s`, `340 sources/s`, `2.5 sources/s`. */
export function formatRate(perSecond: number, unit: ProgressUnit): string {
  if (unit === "bytes") return `${formatBytes(Math.round(perSecond))}/s`;
  const n = perSecond >= 10 ? formatCount(Math.round(perSecond)) : perSecond.toFixed(1).replace(/\.0$/, "");
  return `${n} ${unit.items}/s`;
}

/** `0s`, `35s`, `2m05s`, `1h02m`; never more than `99h+` (an ETA that far out is only "long"). */
export function formatDuration(ms: number): string {
  const seconds = Math.max(0, Math.ceil(ms / 1000));
  if (!Number.isFinite(seconds) || seconds >= 100 * 3600) return "99h+";
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m${String(seconds % 60).padStart(2, "0")}s`;
  return `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, "0")}m`;
}

/**
 * Times one count: it restarts when the count's key changes (a new phase or step) or the count goes
 * backwards, so a verify pass after the archive pass gets its own rate and ETA.
 */
export type ProgressMeter = (key: string, done: number, total: number | undefined, unit: ProgressUnit) => string;

export function createProgressMeter(now: () => number = Date.now): ProgressMeter {
  let current: { key: string; start: number; base: number; last: number } | undefined;
  return (key, done, total, unit) => {
    const t = now();
    if (!current || current.key !== key || done < current.last) current = { key, start: t, base: done, last: done };
    current.last = done;
    return formatProgressStats({ done, total, elapsedMs: t - current.start, baseDone: current.base, unit });
  };
}
