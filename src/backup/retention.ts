// Retention rules for `backup prune`, with restic `forget` semantics: an archive kept by any rule stays.
//
// Archives are walked newest first. --keep-last N keeps the N newest; --keep-daily/weekly/monthly N keep the
// newest archive of each of the N most recent days/ISO weeks/months that have one (local time), and, like
// restic, also the oldest archive while a rule still has slots left; --keep-within D keeps everything newer
// than the newest archive minus D (relative to the newest archive, not to now, so a stalled cron job does not
// age every archive out). An item dated after `now` (plus a small clock skew) is never counted: it takes no
// slot and does not move the --keep-within cutoff, so one archive dated 2099 cannot age out every real one.
import { UsageError } from "../core/errors.js";

export interface RetentionPolicy {
  last?: number;
  daily?: number;
  weekly?: number;
  monthly?: number;
  /** A duration as given (`7d`, `1y6m`, `36h`); see parseRetentionDuration. */
  within?: string;
}

export interface Dated {
  createdAt: number;
}

export interface RetentionDecision<T extends Dated> {
  item: T;
  /** The rules that keep it ("last", "daily", "weekly", "monthly", "within 7d"); empty means remove. */
  reasons: string[];
}

export interface Duration {
  years: number;
  months: number;
  weeks: number;
  days: number;
  hours: number;
}

const UNITS: Record<string, keyof Duration> = { y: "years", m: "months", w: "weeks", d: "days", h: "hours" };

/**
 * restic's duration form: numbers with units y (years), m (months), w (weeks), d (days), h (hours), e.g. `1y6m`,
 * `14d`, `36h`; each unit at most once; at least one hour in total. Note `m` is months, as in restic.
 */
export function parseRetentionDuration(raw: string, flag = "--keep-within"): Duration {
  const value = raw.trim().toLowerCase();
  const out: Duration = { years: 0, months: 0, weeks: 0, days: 0, hours: 0 };
  const seen = new Set<string>();
  const bad = (): UsageError =>
    new UsageError(`Invalid ${flag} value ${JSON.stringify(raw)}: use whole numbers with units y (years), m (months), w (weeks), d (days), h (hours), for example ${flag} 30d or ${flag} 1y6m.`, "invalid_option");
  if (!/^(\d+[ymwdh])+$/.test(value)) throw bad();
  for (const [, n, unit] of value.matchAll(/(\d+)([ymwdh])/g)) {
    if (seen.has(unit!)) throw bad();
    seen.add(unit!);
    const amount = Number(n);
    if (!Number.isSafeInteger(amount) || amount > 100_000) throw bad();
    out[UNITS[unit!]!] = amount;
  }
  if (out.years + out.months + out.weeks + out.days + out.hours === 0) throw bad();
  return out;
}

/** `from` minus `d`, in local calendar arithmetic (Go's AddDate, which restic uses: months roll over like Date does). */
export function subtractDuration(from: number, d: Duration): number {
  const t = new Date(from);
  t.setFullYear(t.getFullYear() - d.years, t.getMonth() - d.months, t.getDate() - d.days - 7 * d.weeks);
  return t.getTime() - d.hours * 3600 * 1000;
}

function isoWeekKey(t: Date): number {
  // ISO 8601: the week with the year's first Thursday is week 1; days belong to the year of their Thursday.
  const day = new Date(t.getFullYear(), t.getMonth(), t.getDate());
  const weekday = (day.getDay() + 6) % 7;
  day.setDate(day.getDate() - weekday + 3);
  const isoYear = day.getFullYear();
  const firstThursday = new Date(isoYear, 0, 4);
  firstThursday.setDate(firstThursday.getDate() - ((firstThursday.getDay() + 6) % 7) + 3);
  const week = 1 + Math.round((day.getTime() - firstThursday.getTime()) / (7 * 24 * 3600 * 1000));
  return isoYear * 100 + week;
}

const BUCKETS: Array<{ rule: "last" | "daily" | "weekly" | "monthly"; key: (t: Date, index: number) => number }> = [
  { rule: "last", key: (_t, index) => index },
  { rule: "daily", key: (t) => t.getFullYear() * 10000 + (t.getMonth() + 1) * 100 + t.getDate() },
  { rule: "weekly", key: isoWeekKey },
  { rule: "monthly", key: (t) => t.getFullYear() * 100 + t.getMonth() + 1 },
];

export function hasRule(policy: RetentionPolicy): boolean {
  return Boolean(policy.last || policy.daily || policy.weekly || policy.monthly || policy.within);
}

/** How far past the clock a time may be before it counts as "from the future" (clock skew between hosts). */
export const FUTURE_SKEW_MS = 5 * 60 * 1000;

/** The reason given to (and kept for) an item dated in the future. */
export const FUTURE_REASON = "dated in the future";

/** True when `createdAt` lies beyond `now` plus the allowed skew (or is not a finite time at all). */
export function isFromTheFuture(createdAt: number, now: number): boolean {
  return !Number.isFinite(createdAt) || createdAt > now + FUTURE_SKEW_MS;
}

/**
 * Decides every item (any order in, newest first out); an empty policy keeps everything. Items from the future
 * (relative to `now`) are kept with FUTURE_REASON and left out of every rule.
 */
export function applyRetention<T extends Dated>(items: readonly T[], policy: RetentionPolicy, now: number = Date.now()): Array<RetentionDecision<T>> {
  const future = items.filter((i) => isFromTheFuture(i.createdAt, now)).map((item) => ({ item, reasons: [FUTURE_REASON] }));
  const decided = decide(items.filter((i) => !isFromTheFuture(i.createdAt, now)), policy);
  return [...future, ...decided];
}

function decide<T extends Dated>(items: readonly T[], policy: RetentionPolicy): Array<RetentionDecision<T>> {
  const sorted = [...items].sort((a, b) => b.createdAt - a.createdAt);
  if (!hasRule(policy)) return sorted.map((item) => ({ item, reasons: ["no rule"] }));
  const counters = BUCKETS.map((b) => ({ ...b, left: policy[b.rule] ?? 0, last: Number.NaN }));
  const within = policy.within ? parseRetentionDuration(policy.within) : null;
  const cutoff = within && sorted.length > 0 ? subtractDuration(sorted[0]!.createdAt, within) : null;
  return sorted.map((item, index) => {
    const reasons: string[] = [];
    const t = new Date(item.createdAt);
    if (cutoff !== null && item.createdAt > cutoff) reasons.push(`within ${policy.within}`);
    for (const c of counters) {
      if (c.left <= 0) continue;
      const key = c.key(t, index);
      // Like restic: the oldest archive is kept too while a rule has slots left (the longest history).
      if (key !== c.last || index === sorted.length - 1) {
        c.last = key;
        c.left -= 1;
        reasons.push(c.rule);
      }
    }
    return { item, reasons };
  });
}
