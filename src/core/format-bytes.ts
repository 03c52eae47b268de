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

/** Thousands separators, locale-independent: 1,204. */
export function formatCount(n: number): string {
  return n.toLocaleString("en-US");
}

/** A time as ISO-8601 UTC without milliseconds; "-" when unknown. */
export function formatTime(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return "-";
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
}
