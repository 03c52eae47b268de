// The one rule for times in `--json` output: ISO-8601 UTC strings (null when unknown), converted at the JSON boundary.

/**
 * Core results keep epoch milliseconds (they sort and compare them); every renderer turns them into text here, so a
 * script reads one form everywhere. A key ending in `Ms` in the JSON is therefore always a duration, never a time.
 */
export function isoTime(ms: number | null | undefined): string | null {
  if (typeof ms !== "number" || !Number.isFinite(ms)) return null;
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}

export type WithIsoTimes<T, K extends keyof T> = Omit<T, K> & { [P in K]: string | null };

/** `obj` with each named key's epoch-ms value as an ISO string (keys keep their place; absent keys stay absent). */
export function withIsoTimes<T extends object, K extends keyof T>(obj: T, keys: readonly K[]): WithIsoTimes<T, K> {
  const out: Record<string, unknown> = { ...(obj as Record<string, unknown>) };
  for (const key of keys) {
    if (key in obj) out[key as string] = isoTime(obj[key] as number | null | undefined);
  }
  return out as WithIsoTimes<T, K>;
}

export type WithFileTime<T> = Omit<T, "mtimeMs"> & { mtime: string | null };

/** A file's `mtimeMs` (a time, despite the suffix) printed as `mtime`, in the same place among the keys. */
export function withFileTime<T extends { mtimeMs: number }>(obj: T): WithFileTime<T> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(obj)) {
    if (key === "mtimeMs") out.mtime = isoTime(value as number);
    else out[key] = value;
  }
  return out as WithFileTime<T>;
}
