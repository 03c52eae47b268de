// What openclaw@2026.9.6's doctor fills in on a legacy cron job (normalizeStoredCronJobs): the stagger of a cron schedule and a missing name.
//
// Read from its dist (our own code, same rules): src/cron/stagger.ts (normalizeCronStaggerMs,
// resolveDefaultCronStaggerMs, isRecurringTopOfHourCronExpr) and src/cron/service/normalize.ts (inferCronJobName).

type Obj = Record<string, unknown>;

/** The window a recurring top-of-hour cron schedule is spread over when the job names none (5 minutes). */
export const DEFAULT_TOP_OF_HOUR_STAGGER_MS = 300_000;
/** Upstream's ceiling for a stagger: the largest Date-valid timestamp. */
const MAX_STAGGER_MS = 8.64e15;

/**
 * An explicit stagger as upstream reads one: a finite number (floored, negatives become 0) or a string of digits
 * that is not negative (no fraction or exponent); anything else is undefined. 0 is kept: "run exactly on schedule".
 */
export function explicitCronStaggerMs(raw: unknown): number | undefined {
  let n: number;
  if (typeof raw === "number") n = raw;
  else if (typeof raw === "string" && /^[+-]?\d+$/.test(raw.trim()) && Number(raw.trim()) >= 0) n = Number(raw.trim());
  else return undefined;
  if (!Number.isFinite(n)) return undefined;
  const v = Math.max(0, Math.floor(n));
  return Number.isSafeInteger(v) && v <= MAX_STAGGER_MS ? v : undefined;
}

/** Every comma part a plain hour list item, and at least one of them a wildcard (`*`, `?`, `*\/2`). */
function recurringWildcardHour(field: string): boolean {
  const parts = field.split(",");
  const item = /^(?:\d+|\d+-\d+)(?:\/\d+)?$|^[*?](?:\/\d+)?$/;
  return parts.every((p) => item.test(p)) && parts.some((p) => p.startsWith("*") || p.startsWith("?"));
}

/**
 * The stagger upstream gives a cron expression that names none: 5 minutes for one that fires at minute 0 (second 0
 * in the 6-field form) of recurring hours — every job written "0 * * * *" would otherwise start in the same second.
 */
export function defaultCronStaggerMs(expr: string): number | undefined {
  const fields = expr.trim().split(/\s+/).filter(Boolean);
  const [a, b, c] = fields;
  if (fields.length === 5) return a === "0" && recurringWildcardHour(b!) ? DEFAULT_TOP_OF_HOUR_STAGGER_MS : undefined;
  if (fields.length === 6) return a === "0" && b === "0" && recurringWildcardHour(c!) ? DEFAULT_TOP_OF_HOUR_STAGGER_MS : undefined;
  return undefined;
}

/** `text` cut to `max` UTF-16 units with a trailing "…" (never half a surrogate pair), as upstream's truncateText. */
function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max - 1;
  const high = text.charCodeAt(end - 1);
  const low = text.charCodeAt(end);
  if (end > 0 && high >= 0xd800 && high <= 0xdbff && low >= 0xdc00 && low <= 0xdfff) end -= 1;
  return `${text.slice(0, end).trimEnd()}…`;
}

/**
 * The name upstream gives a job without one, from the job as the file has it (its payload's kind not yet
 * normalized, a top-level `message` not yet a payload): the payload's first non-blank line (60 chars at most),
 * else "Cron: <expr>", "Every: <n>ms", "One-shot", else "Automation".
 */
export function inferCronJobName(schedule: Obj | null, payload: Obj | null): string {
  let text = "";
  if (payload?.kind === "systemEvent" && typeof payload.text === "string") text = payload.text;
  else if (payload?.kind === "agentTurn" && typeof payload.message === "string") text = payload.message;
  else if (payload?.kind === "command" && Array.isArray(payload.argv)) text = payload.argv.join(" ");
  const line = text.split("\n").map((l) => l.trim()).find(Boolean);
  if (line) return truncate(line, 60);
  const kind = typeof schedule?.kind === "string" ? schedule.kind : "";
  if (kind === "cron" && typeof schedule?.expr === "string") return `Cron: ${truncate(schedule.expr, 52)}`;
  if (kind === "every" && typeof schedule?.everyMs === "number") return `Every: ${String(schedule.everyMs)}ms`;
  if (kind === "at") return "One-shot";
  return "Automation";
}
