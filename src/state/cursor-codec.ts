// Opaque cursors: a versioned prefix, base64url JSON and a checksum, so a malformed or altered cursor is detected.
import crypto from "node:crypto";

/**
 * The checksum catches truncation, editing and cursors of another kind; it is not a secret (a cursor names a
 * position only and never grants access), so a forged but well-formed cursor is just another position.
 */
function checksum(prefix: string, body: string): string {
  return crypto.createHash("sha256").update(`openclaw-state-cursor\u0000${prefix}\u0000${body}`).digest("base64url").slice(0, 12);
}

export function encodeCursor(prefix: string, state: object): string {
  const body = Buffer.from(JSON.stringify(state)).toString("base64url");
  return `${prefix}${body}.${checksum(prefix, body)}`;
}

/** The decoded JSON value, or null for anything malformed, altered or of another prefix (never throws). */
export function decodeCursor(prefix: string, cursor: unknown): unknown {
  if (typeof cursor !== "string" || !cursor.startsWith(prefix) || cursor.length > 1_000_000) return null;
  const rest = cursor.slice(prefix.length);
  const dot = rest.lastIndexOf(".");
  if (dot <= 0) return null;
  const body = rest.slice(0, dot);
  if (!/^[A-Za-z0-9_-]+$/.test(body) || rest.slice(dot + 1) !== checksum(prefix, body)) return null;
  try {
    return JSON.parse(Buffer.from(body, "base64url").toString("utf8")) as unknown;
  } catch {
    return null;
  }
}

/** Small validators for decoded cursor fields. */
export const isInt = (v: unknown, min = Number.MIN_SAFE_INTEGER): v is number => Number.isSafeInteger(v) && (v as number) >= min;
export const isStrOrNull = (v: unknown): v is string | null => v === null || typeof v === "string";
