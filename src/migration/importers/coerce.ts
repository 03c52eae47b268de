// Value coercion for typed columns: legacy files hold strings for numbers and booleans, blanks, wrong types.

type Obj = Record<string, unknown>;

/** A trimmed non-empty string, else null. */
export function str(value: unknown): string | null {
  if (typeof value !== "string") return null;
  const t = value.trim();
  return t === "" ? null : t;
}

/** A string id: non-empty strings trimmed, finite numbers as text (thread ids are often numeric). */
export function idText(value: unknown): string | null {
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  return str(value);
}

/** A finite number; numeric strings ("60000") count. */
export function num(value: unknown): number | null {
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  if (typeof value === "string" && value.trim() !== "" && Number.isFinite(Number(value))) return Number(value);
  return null;
}

/** An integer (truncated), for INTEGER columns. */
export function int(value: unknown): number | null {
  const n = num(value);
  return n === null ? null : Math.trunc(n);
}

/** true/false, or the strings "true"/"false" (any case) that old files wrote; anything else is null. */
export function bool(value: unknown): boolean | null {
  if (typeof value === "boolean") return value;
  if (typeof value === "string") {
    const t = value.trim().toLowerCase();
    if (t === "true") return true;
    if (t === "false") return false;
  }
  return null;
}

/** 1/0/null for the CHECK (x IN (0, 1)) columns. */
export function flag(value: unknown): 0 | 1 | null {
  const b = bool(value);
  return b === null ? null : b ? 1 : 0;
}

/** JSON text of a present value, null for undefined/null. */
export function jsonOrNull(value: unknown): string | null {
  return value === undefined || value === null ? null : JSON.stringify(value);
}

export function obj(value: unknown): Obj | null {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Obj) : null;
}

/** A number of milliseconds since the epoch from a number or an ISO/date string. */
export function epochMs(value: unknown): number | null {
  const n = num(value);
  if (n !== null) return Math.trunc(n);
  if (typeof value === "string") {
    const t = Date.parse(value);
    return Number.isFinite(t) ? t : null;
  }
  return null;
}
