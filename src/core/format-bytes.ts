// Byte, count and time formatting shared by core reports and the human renderers (core must not import src/cli/).

/** 1024-based sizes: `512 B`, `1.5 KiB`, `3.2 GiB`; "-" when unknown. */
export function formatBytes(bytes: number | null | undefined): string {
  if (bytes === null || bytes === undefined) return "-";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${units[unit]}`;
}

/**
 * Thousands separators, locale-independent: 1,204. Whole numbers are grouped here: the first toLocaleString call of
 * a process initializes ICU, 20–35 ms of CPU (measured on Node 20 and 24), which backup create and verify paid for
 * one count in their summary. Anything else (fractions, -0, NaN, ±Infinity, past 2^53) keeps toLocaleString's spelling.
 */
export function formatCount(n: number): string {
  if (!Number.isSafeInteger(n) || Object.is(n, -0)) return n.toLocaleString("en-US");
  const digits = String(Math.abs(n)).replace(/\B(?=(\d{3})+$)/g, ",");
  return n < 0 ? `-${digits}` : digits;
}

/** A time as ISO-8601 UTC without milliseconds; "-" when unknown. */
export function formatTime(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return "-";
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
}
