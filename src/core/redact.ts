// Redaction of credentials: secret-keyed values out of anything shown or recorded, parse errors without file content.

export const REDACTED = "[redacted]";

/** Key names (lower-case, separators dropped) whose value is a credential wherever they appear. */
const SECRET_NAMES = new Set(["key", "apikey", "token", "access", "refresh", "secret", "password", "passwd", "passphrase", "cookie", "bearer", "authorization", "otp", "pin"]);
/** Suffixes that make any key a credential: `accessToken`, `client_secret`, `privateKeyPem`, `botToken`, … */
const SECRET_SUFFIXES = ["token", "secret", "password", "passphrase", "apikey", "privatekey", "privatekeypem", "credential", "credentials", "cookie"];
/** Shorter strings are left alone by the scrubber: they would match ordinary words. */
const MIN_SCRUB_LENGTH = 6;

function normalizeKey(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]/g, "");
}

/** True when a property of this name holds a credential (`key`, `token`, `refresh`, `clientSecret`, …). */
export function isSecretKey(name: string): boolean {
  const n = normalizeKey(name);
  return SECRET_NAMES.has(n) || SECRET_SUFFIXES.some((suffix) => n.endsWith(suffix));
}

function isPrivateKeyText(value: string): boolean {
  return /-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(value);
}

/** A deep copy with every secret-keyed value (and any PEM private key) replaced by "[redacted]". */
export function redactSecrets<T>(value: T): T {
  const walk = (v: unknown, secret: boolean): unknown => {
    if (v === null || typeof v === "boolean") return v;
    if (typeof v === "string") return secret || isPrivateKeyText(v) ? REDACTED : v;
    if (typeof v === "number") return secret ? REDACTED : v;
    if (Array.isArray(v)) return v.map((x) => walk(x, secret));
    if (typeof v === "object") {
      if (secret) return REDACTED;
      return Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, walk(x, isSecretKey(k))]));
    }
    return secret ? REDACTED : v;
  };
  return walk(value, false) as T;
}

/** Every string (and number) held under a secret key, plus PEM private keys anywhere: what a scrubber must hide. */
export function collectSecretValues(value: unknown): string[] {
  const out = new Set<string>();
  const walk = (v: unknown, secret: boolean): void => {
    if (typeof v === "string") {
      if (secret || isPrivateKeyText(v)) out.add(v);
    } else if (typeof v === "number") {
      if (secret) out.add(String(v));
    } else if (Array.isArray(v)) {
      for (const x of v) walk(x, secret);
    } else if (v !== null && typeof v === "object") {
      for (const [k, x] of Object.entries(v as Record<string, unknown>)) walk(x, secret || isSecretKey(k));
    }
  };
  walk(value, false);
  return [...out];
}

/**
 * Last line of defence for text built from a secret file (warnings, notes, reasons): every known secret
 * value found in it is replaced by "[redacted]". Longest first, so a secret containing another is hidden whole.
 */
export class SecretScrubber {
  private readonly secrets: string[];

  constructor(values: Iterable<string> = []) {
    this.secrets = [...new Set(values)].filter((s) => s.length >= MIN_SCRUB_LENGTH).sort((a, b) => b.length - a.length);
  }

  add(values: Iterable<string>): void {
    for (const v of values) if (v.length >= MIN_SCRUB_LENGTH && !this.secrets.includes(v)) this.secrets.push(v);
    this.secrets.sort((a, b) => b.length - a.length);
  }

  scrub(text: string): string {
    let out = text;
    for (const s of this.secrets) if (out.includes(s)) out = out.split(s).join(REDACTED);
    return out;
  }

  scrubAll(texts: readonly string[]): string[] {
    return texts.map((t) => this.scrub(t));
  }
}

/**
 * A JSON parse error described without the input: V8's messages quote the text around the error
 * (`Unexpected token 'x', "{"key":"sk-…"… is not valid JSON`), which must never reach a report.
 */
export function describeParseError(error: unknown, text?: string): string {
  const message = error instanceof Error ? error.message : String(error);
  const line = /line (\d+) column (\d+)/.exec(message);
  if (line) return `invalid JSON at line ${line[1]}, column ${line[2]}`;
  const position = /position (\d+)/.exec(message);
  if (position && text !== undefined) {
    const before = text.slice(0, Number(position[1]));
    const lineNo = before.split("\n").length;
    return `invalid JSON at line ${lineNo}, column ${before.length - before.lastIndexOf("\n")}`;
  }
  if (position) return `invalid JSON at offset ${position[1]}`;
  if (/end of (JSON )?input|Unterminated/i.test(message)) return "invalid JSON: the text ends early";
  return "invalid JSON";
}

/** The same for one JSONL line: the column within the line, never its text. */
export function describeLineParseError(error: unknown, text: string): string {
  return describeParseError(error, text).replace(/^invalid JSON at line 1, column /, "invalid JSON at column ");
}
