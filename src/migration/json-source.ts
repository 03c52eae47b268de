// Reading a whole-JSON legacy source (config-sized files): size cap, sha256, UTF-8, JSON then JSON5; errors never quote content.
import { isUtf8 } from "node:buffer";
import crypto from "node:crypto";
import fs from "node:fs";
import { OperationError } from "../core/errors.js";
import { collectSecretValues, describeParseError, SecretScrubber } from "../core/redact.js";
import { parseJson5 } from "../core/json5-text.js";
import { depthMessage, findExcessDepth } from "./json-depth.js";
import { hashFile } from "./line-stream.js";

// Kept importable from here (the framework commit exported it): the streamed hash lives in line-stream.ts.
export { hashFile };
import type { DetectedSource, ImportCounts, SourceInspection, SourceReach } from "./types.js";

/** Control-plane JSON files are small; beyond this one is refused rather than parsed whole. */
export const MAX_JSON_SOURCE_BYTES = 64 * 1024 * 1024;

export interface JsonSource {
  value: unknown;
  sha256: string;
  sizeBytes: number;
}

export function sha256Of(bytes: Buffer | string): string {
  return crypto.createHash("sha256").update(bytes).digest("hex");
}

/**
 * Reads and parses a JSON source: strict JSON first, then JSON5 (comments, trailing commas, quotes, hex, …).
 * Error messages name the file and a position, never its text: these files can hold credentials.
 */
export function readJsonSource(file: string, maxBytes = MAX_JSON_SOURCE_BYTES): JsonSource {
  const size = fs.statSync(file).size;
  if (size > maxBytes) {
    throw new OperationError("source_too_large", `${file} is ${size} bytes, more than the ${Math.round(maxBytes / 1048576)} MiB this kind of file may be; it was left in place.`, { path: file });
  }
  const bytes = fs.readFileSync(file);
  const sha256 = sha256Of(bytes);
  if (!isUtf8(bytes)) throw new OperationError("invalid_utf8", `${file}: not valid UTF-8; the file was left in place.`, { path: file });
  const deepAt = findExcessDepth(bytes);
  if (deepAt !== 0) throw new OperationError("json_too_deep", `${file}:${deepAt}: ${depthMessage()}; the file was left in place.`, { path: file });
  const text = bytes.toString("utf8").replace(/^\uFEFF/, "");
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (strictError) {
    try {
      value = parseJson5(text);
    } catch {
      throw new OperationError("invalid_json", `${file}: ${describeParseError(strictError, text)}; the file was left in place.`, { path: file });
    }
  }
  return { value, sha256, sizeBytes: bytes.length };
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Throws the "wrong shape" error of a source: what was expected and what was found (a type, never a value). */
export function shapeError(file: string, expected: string, found: unknown): OperationError {
  const what = found === null ? "null" : Array.isArray(found) ? "an array" : typeof found === "object" ? "an object" : `a ${typeof found}`;
  return new OperationError("invalid_shape", `${file}: expected ${expected}, found ${what}; the file was left in place.`, { path: file });
}

export interface JsonInspection {
  records: number;
  notes?: string[];
  skipReason?: string;
  reach?: SourceReach;
}

/**
 * The usual `inspect` of a JSON source: an empty file is skipped; one that does not parse (or has the wrong
 * shape) is still planned with a "will fail" note, so the import records the failure and leaves it in place.
 */
export function inspectJsonSource(source: DetectedSource, count: (value: unknown) => JsonInspection): SourceInspection {
  const st = fs.statSync(source.path);
  if (st.size === 0) return { sha256: sha256Of(""), sizeBytes: 0, records: 0, notes: [], skipReason: "empty file (nothing to import; left in place)" };
  try {
    const parsed = readJsonSource(source.path);
    const c = count(parsed.value);
    return { sha256: parsed.sha256, sizeBytes: parsed.sizeBytes, records: c.records, notes: c.notes ?? [], ...(c.skipReason ? { skipReason: c.skipReason } : {}), ...(c.reach ? { reach: c.reach } : {}) };
  } catch (error) {
    const { sha256, sizeBytes } = hashFile(source.path);
    return { sha256, sizeBytes, records: 0, notes: [`will fail: ${error instanceof Error ? error.message : String(error)}`] };
  }
}

/** The planned sha256 must still hold at import time: a file changed since the plan is left for the next run. */
export function assertUnchanged(source: { path: string; sha256: string | null }, sha256: string): void {
  if (source.sha256 !== null && source.sha256 !== sha256) {
    throw new OperationError("source_changed", `${source.path} changed since it was planned; re-run \`doctor --fix\` to import the new content.`, { path: source.path });
  }
}

export interface SecretJson {
  value: unknown;
  sha256: string;
  scrubber: SecretScrubber;
}

/** Reads a credentials file; the scrubber hides every credential value from text built while importing it. */
export function readSecretJson(file: string): SecretJson {
  const { value, sha256 } = readJsonSource(file);
  return { value, sha256, scrubber: new SecretScrubber(collectSecretValues(value)) };
}

/** The value as an object, else the "wrong shape" error naming what was expected. */
export function objectOf(file: string, value: unknown, expected: string): Record<string, unknown> {
  if (!isObject(value)) throw shapeError(file, expected, value);
  return value;
}

/** Every note and warning of a credentials import passed through the file's scrubber (defence in depth). */
export function scrubbed(counts: ImportCounts, scrubber: SecretScrubber): ImportCounts {
  return { ...counts, warnings: scrubber.scrubAll(counts.warnings), notes: scrubber.scrubAll(counts.notes) };
}

/** After commit: `expected.expect[field]` is a JSON list of keys; null when each exists, else what is missing. */
export function verifyKeys(expected: ImportCounts, field: string, exists: (key: string) => boolean, what: string): string | null {
  const keys = JSON.parse(String(expected.expect[field] ?? "[]")) as string[];
  const missing = keys.filter((k) => !exists(k));
  return missing.length === 0 ? null : `${missing.length} ${what} missing after commit: ${missing.slice(0, 5).join(", ")}${missing.length > 5 ? ", …" : ""}`;
}
