// A legacy config-audit record as OpenClaw 2026.9.6's doctor stores it: argv capped and secret flags masked, secret-named fields masked.
//
// Observed in 9.6's dist (io.audit sanitizeConfigAuditRecord, redact-argv, sensitive-paths, logging/redact's
// structured field rules). Its free-text pass (vendor token patterns run over every string, registered secret values,
// app-specific passwords) is not reproduced: docs/migration.md, "Where we differ".

const ARGV_CAP = 8;
const MARK = "***";
/** Shorter secrets are replaced whole; longer ones keep their first 6 and last 4 UTF-16 units (9.6's maskToken). */
const MASK_MIN_LENGTH = 18;
const MASK_KEEP_START = 6;
const MASK_KEEP_END = 4;

/** Flags whose value is a secret, by exact name (lower-cased) … */
const SECRET_FLAGS = new Set(
  [
    "token", "api-key", "apikey", "secret", "password", "provider-env", "auth-token", "access-token", "refresh-token",
    "client-secret", "hook-token", "gateway-token", "bot-token", "app-token", "remote-token", "push-token", "webhook-secret",
    "webhook-token", "service-account-token", "op-service-account-token", "bearer", "bearer-token", "pat",
    "personal-access-token", "oauth-token", "id-token", "identity-token", "session-token", "service-token", "private-key",
    "recovery-key", "gateway-key", "session-key", "active-key",
  ].map((f) => `--${f}`),
);
/** … or by their last word(s): `--<words joined by - or _>-<one of these>`. */
const SECRET_FLAG_ENDINGS = [
  "token", "secret", "password", "passwd", "passphrase", "pin", "api[-_]?key", "api[-_]?secret", "secret[-_]?key",
  "secret[-_]?access[-_]?key", "access[-_]?key(?:[-_]?id)?", "account[-_]?key", "client[-_]?key", "consumer[-_]?key",
  "license[-_]?key", "subscription[-_]?key", "webhook", "credentials?", "creds?", "auth(?:orization)?", "bearer", "pat",
  "cookie", "private[-_]?key", "recovery[-_]?key", "signing[-_]?key", "encryption[-_]?key", "master[-_]?key",
  "session[-_]?key", "gateway[-_]?key", "service[-_]?key", "hook[-_]?key",
];
const SECRET_FLAG_RE = new RegExp(`^--(?:[a-z0-9]+(?:[-_][a-z0-9]+)*[-_])?(?:${SECRET_FLAG_ENDINGS.join("|")})$`);

/** `config set` options that take a value (so the value is not mistaken for the path or the new value). */
const CONFIG_SET_VALUE_OPTIONS = new Set(
  [
    "batch-file", "batch-json", "container", "log-level", "profile", "provider-allowlist", "provider-arg", "provider-command",
    "provider-env", "provider-max-bytes", "provider-max-output-bytes", "provider-mode", "provider-no-output-timeout-ms",
    "provider-pass-env", "provider-path", "provider-source", "provider-timeout-ms", "provider-trusted-dir", "ref-id",
    "ref-provider", "ref-source", "section",
  ].map((o) => `--${o}`),
);

/** Config paths whose value is a secret (9.6's isSensitiveConfigPath), minus the token-count style names. */
const SENSITIVE_PATH_PATTERNS = [/token$/i, /password/i, /secret/i, /api.?key/i, /encrypt.?key/i, /private.?key/i, /serviceaccount(?:ref)?$/i];
const NOT_SENSITIVE_PATH_ENDINGS = ["maxtokens", "maxoutputtokens", "maxinputtokens", "maxcompletiontokens", "contexttokens", "totaltokens", "tokencount", "tokenlimit", "tokenbudget", "passwordfile"];

/** Field names whose value is a secret, matched whole and case-insensitively. */
const PAYMENT_FIELDS = ["card[-_]?number", "card[-_]?cvc", "card[-_]?cvv", "cvc", "cvv", "security[-_]?code", "payment[-_]?credential", "shared[-_]?payment[-_]?token"];
const SECRET_FIELDS = [
  "api[-_]?key", "api[-_]?token", "bearer[-_]?token", "token", "secret", "password", "passwd", "aws[-_]?secret[-_]?access[-_]?key",
  "secretaccesskey", "credential", "authorization", "private[-_]?key", "access[-_]?token", "refresh[-_]?token", "id[-_]?token",
  "auth[-_]?token", "client[-_]?secret", "app[-_]?secret", "secret[-_]?value", "raw[-_]?secret", "secret[-_]?input", "key",
  "key[-_]?material", "jwt", "session", "signature", "cookie", "set[-_]?cookie", ...PAYMENT_FIELDS,
];
const SECRET_FIELD_RE = new RegExp(`^(?:${SECRET_FIELDS.join("|")})$`, "i");
/** Environment-variable style names: `<WORDS>_KEY`, `…_TOKEN`, … (also case-insensitive in 9.6). */
const SECRET_ENV_FIELD_RE = new RegExp(`^(?:(?:[A-Z0-9]+[_-])+(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD)|API[_-]?KEY|TOKEN|SECRET|PASSWORD|PASSWD|${PAYMENT_FIELDS.join("|")})$`, "i");
/** Values that only name where a secret lives, kept as written. */
const WORKSPACE_TRANSCRIPT_REF = /^\$WORKSPACE_DIR\/[A-Za-z0-9._/-]+\.jsonl$/u;
/** Network error codes a `cause.code` may hold (not an OAuth code). */
const TRANSPORT_CODES = new Set(["econnrefused", "econnreset", "econnaborted", "enetreset", "epipe", "enotfound", "eai_again", "enetunreach", "ehostunreach", "ehostdown"]);
/** Parents under which a `code` field is an error or status code, not an authorization code. */
const CODE_PARENTS = new Set(["error", "nodeerror", "status", "details", "warnings"]);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const isHigh = (c: number): boolean => c >= 0xd800 && c <= 0xdbff;
const isLow = (c: number): boolean => c >= 0xdc00 && c <= 0xdfff;

/** `first6…last4`, never cutting a surrogate pair; `***` for a short value. */
export function maskSecret(value: string): string {
  if (value === MARK) return value;
  if (value.length < MASK_MIN_LENGTH) return MARK;
  let head = MASK_KEEP_START;
  if (isHigh(value.charCodeAt(head - 1)) && isLow(value.charCodeAt(head))) head -= 1;
  let tail = value.length - MASK_KEEP_END;
  if (isLow(value.charCodeAt(tail)) && isHigh(value.charCodeAt(tail - 1))) tail += 1;
  return `${value.slice(0, head)}…${value.slice(tail)}`;
}

export function isSecretFieldName(key: string): boolean {
  return SECRET_FIELD_RE.test(key) || SECRET_ENV_FIELD_RE.test(key);
}

export function isSensitiveConfigPath(configPath: string): boolean {
  const lower = configPath.trim().toLowerCase();
  if (lower.includes("localservice.env.")) return true;
  return !NOT_SENSITIVE_PATH_ENDINGS.some((end) => lower.endsWith(end)) && SENSITIVE_PATH_PATTERNS.some((re) => re.test(configPath));
}

function flagName(arg: string): string | undefined {
  if (!arg.startsWith("--")) return undefined;
  const eq = arg.indexOf("=");
  return (eq < 0 ? arg : arg.slice(0, eq)).toLowerCase();
}

/** Secret flag values → `***` (`--token x` and `--token=x`); the array keeps its length. */
function maskSecretFlags(argv: unknown[]): unknown[] {
  let maskNext = false;
  return argv.map((arg) => {
    if (maskNext) {
      maskNext = false;
      return MARK;
    }
    const name = typeof arg === "string" ? flagName(arg) : undefined;
    if (name === undefined || !(SECRET_FLAGS.has(name) || SECRET_FLAG_RE.test(name))) return arg;
    const s = arg as string;
    const eq = s.indexOf("=");
    if (eq >= 0) return `${s.slice(0, eq + 1)}${MARK}`;
    maskNext = true;
    return s;
  });
}

/** Indexes of up to `max` positional arguments from `start` (options and their values skipped, `--` ends options). */
function positionals(argv: unknown[], start: number, max: number): number[] {
  const out: number[] = [];
  let optionsEnded = false;
  for (let i = start; i < argv.length && out.length < max; i += 1) {
    const arg = argv[i];
    if (arg === undefined) break;
    if (typeof arg === "string" && !optionsEnded) {
      if (arg === "--") {
        optionsEnded = true;
        continue;
      }
      if (arg.startsWith("-")) {
        if (!arg.includes("=") && CONFIG_SET_VALUE_OPTIONS.has(arg)) i += 1;
        continue;
      }
    }
    out.push(i);
  }
  return out;
}

/** The argv as 9.6 records it: secret flags masked; for `config set <path> <value>`, a secret path's value and any --batch-json masked. */
export function redactAuditArgv(argv: unknown[]): unknown[] {
  const out = maskSecretFlags(argv);
  let setAt = -1;
  for (let i = 0; i < out.length && setAt < 0; i += 1) {
    if (out[i] !== "config") continue;
    const [command] = positionals(out, i + 1, 1);
    if (command !== undefined && out[command] === "set") setAt = command;
  }
  if (setAt < 0) return out;
  for (let i = setAt + 1; i < out.length; i += 1) {
    const arg = out[i];
    if (arg === "--batch-json" && i + 1 < out.length) {
      out[i + 1] = MARK;
      i += 1;
    } else if (typeof arg === "string" && arg.startsWith("--batch-json=")) out[i] = `--batch-json=${MARK}`;
  }
  const [pathAt, valueAt] = positionals(out, setAt + 1, 2);
  if (pathAt === undefined || valueAt === undefined) return out;
  const configPath = out[pathAt];
  if (typeof configPath === "string" && isSensitiveConfigPath(configPath)) out[valueAt] = MARK;
  return out;
}

/** `code` is an authorization code unless it sits at the top, under an error/status parent, or is a network code under `cause`s. */
function isAuthorizationCode(key: string, fieldPath: string[], value: string | undefined): boolean {
  if (key.toLowerCase() !== "code") return false;
  const lower = fieldPath.map((p) => p.toLowerCase());
  if (lower.length === 1 || (lower.length >= 2 && CODE_PARENTS.has(lower[lower.length - 2]!))) return false;
  const underCauses = lower.length > 1 && lower.slice(0, -1).every((p) => p === "cause");
  return !(value !== undefined && underCauses && TRANSPORT_CODES.has(value.toLowerCase()));
}

function isPublicShareId(fieldPath: string[]): boolean {
  return fieldPath.at(-1)?.toLowerCase() === "id" && fieldPath.at(-2)?.toLowerCase().replace(/[-_]/g, "") === "publicshare";
}

/** `$NAME` / `${NAME}` under the field NAME itself (a reference, not a value), or a session's transcript path. */
function isReference(key: string, value: string): boolean {
  if (key.toLowerCase() === "session" && WORKSPACE_TRANSCRIPT_REF.test(value)) return true;
  if (!/^[A-Z_][A-Z0-9_]*$/.test(key)) return false;
  const m = /^\$([A-Z_][A-Z0-9_]*)$/.exec(value) ?? /^\$\{([A-Z_][A-Z0-9_]*)(?::[-=?+])?\}$/.exec(value);
  return m?.[1] === key;
}

/** Every field under a secret name masked; an array's items count as fields of the array's own name. */
function maskSecretFields(key: string, value: unknown, fieldPath: string[], inObject: boolean): unknown {
  if (typeof value === "string") {
    if (isPublicShareId(fieldPath)) return maskSecret(value);
    const secret = isAuthorizationCode(key, fieldPath, inObject ? value : undefined) || (isSecretFieldName(key) && !isReference(key, value));
    return secret ? maskSecret(value) : value;
  }
  if (typeof value === "number" || typeof value === "boolean") {
    return isPublicShareId(fieldPath) || isAuthorizationCode(key, fieldPath, undefined) || isSecretFieldName(key) ? MARK : value;
  }
  if (Array.isArray(value)) return value.map((item) => maskSecretFields(key, item, fieldPath, false));
  if (isObject(value)) {
    return Object.fromEntries(Object.entries(value).map(([name, child]) => [name, maskSecretFields(name, child, [...fieldPath, name], inObject)]));
  }
  return value;
}

/**
 * One parsed legacy record as 9.6 stores it: unless it is a `config.external` event, argv and execArgv are cut to 8
 * entries (missing → []) and their secrets masked; then every secret-named field is masked. The input is not changed.
 */
export function sanitizeConfigAuditRecord(record: Record<string, unknown>): Record<string, unknown> {
  const copy = structuredClone(record);
  if (copy.event !== "config.external") {
    for (const key of ["argv", "execArgv"]) {
      const list = copy[key];
      copy[key] = redactAuditArgv(Array.isArray(list) ? list.slice(0, ARGV_CAP) : []);
    }
  }
  return maskSecretFields("", copy, [], true) as Record<string, unknown>;
}
