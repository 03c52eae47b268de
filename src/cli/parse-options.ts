// Parsers for numeric flag values: a bad value is a usage error (exit 2) whose message shows a valid example.
import { UsageError } from "../core/errors.js";

export interface WholeNumberRange {
  min: number;
  max?: number;
}

/** Digits only (no signs, decimals, exponents or hex), within the range. */
export function parseWholeNumber(raw: string, flag: string, range: WholeNumberRange, example: string): number {
  const value = raw.trim();
  const n = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  const max = range.max ?? Number.MAX_SAFE_INTEGER;
  if (!Number.isSafeInteger(n) || n < range.min || n > max) {
    const bounds = range.max === undefined ? `a whole number of at least ${range.min}` : `a whole number from ${range.min} to ${range.max}`;
    throw new UsageError(`Invalid ${flag} value ${JSON.stringify(raw)}: use ${bounds} (for example ${flag} ${example}).`, "invalid_option");
  }
  return n;
}

/** `--limit <n|all>`. */
export function parseLimit(raw: string, flag = "--limit"): number | "all" {
  if (raw.trim().toLowerCase() === "all") return "all";
  const value = raw.trim();
  const n = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < 1) {
    throw new UsageError(`Invalid ${flag} value ${JSON.stringify(raw)}: use a positive whole number or "all" (for example ${flag} 50 or ${flag} all).`, "invalid_option");
  }
  return n;
}
