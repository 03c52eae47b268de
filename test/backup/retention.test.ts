// Retention rules: restic `forget` semantics (any rule keeps; newest per day/week/month; oldest while slots remain).
import { describe, expect, it } from "vitest";
import { applyRetention, parseRetentionDuration, subtractDuration } from "../../src/backup/retention.js";
import { UsageError } from "../../src/core/errors.js";

/** Local-time instants, so day/week/month buckets do not depend on the machine's zone. */
const at = (y: number, mo: number, d: number, h = 12): { name: string; createdAt: number } => ({
  name: `${y}-${String(mo).padStart(2, "0")}-${String(d).padStart(2, "0")}T${String(h).padStart(2, "0")}`,
  createdAt: new Date(y, mo - 1, d, h).getTime(),
});

function kept(items: ReturnType<typeof at>[], policy: Parameters<typeof applyRetention>[1]): Record<string, string[]> {
  return Object.fromEntries(applyRetention(items, policy).map((d) => [d.item.name, d.reasons]));
}

describe("applyRetention", () => {
  // Two archives a day for ten days (2026-03-01 .. 03-10), 09:00 and 21:00.
  const twiceDaily = Array.from({ length: 10 }, (_, i) => [at(2026, 3, i + 1, 9), at(2026, 3, i + 1, 21)]).flat();

  it("--keep-last keeps the N newest and nothing else", () => {
    const decided = kept(twiceDaily, { last: 3 });
    expect(Object.entries(decided).filter(([, r]) => r.length > 0).map(([n]) => n)).toEqual(["2026-03-10T21", "2026-03-10T09", "2026-03-09T21"]);
  });

  it("--keep-daily keeps the newest archive of each of the N newest days that have one", () => {
    const decided = kept(twiceDaily, { daily: 3 });
    expect(Object.entries(decided).filter(([, r]) => r.length > 0).map(([n]) => n)).toEqual(["2026-03-10T21", "2026-03-09T21", "2026-03-08T21"]);
    expect(decided["2026-03-10T09"]).toEqual([]);
  });

  it("like restic, keeps the oldest archive too while a rule still has slots left", () => {
    const three = [at(2026, 3, 1, 9), at(2026, 3, 1, 21), at(2026, 3, 2, 9)];
    const decided = kept(three, { daily: 5 });
    expect(decided).toEqual({ "2026-03-02T09": ["daily"], "2026-03-01T21": ["daily"], "2026-03-01T09": ["daily"] });
  });

  it("an archive kept by any rule stays, and every rule that keeps it is named", () => {
    const items = [at(2026, 1, 5), at(2026, 1, 20), at(2026, 2, 3), at(2026, 2, 17), at(2026, 3, 2), at(2026, 3, 9), at(2026, 3, 10)];
    const decided = kept(items, { last: 1, weekly: 2, monthly: 3 });
    expect(decided["2026-03-10T12"]).toEqual(["last", "weekly", "monthly"]);
    // 03-09 (Monday) and 03-10 share ISO week 11; 03-02 is week 10.
    expect(decided["2026-03-09T12"]).toEqual([]);
    expect(decided["2026-03-02T12"]).toEqual(["weekly"]);
    expect(decided["2026-02-17T12"]).toEqual(["monthly"]);
    expect(decided["2026-02-03T12"]).toEqual([]);
    expect(decided["2026-01-20T12"]).toEqual(["monthly"]);
    expect(decided["2026-01-05T12"]).toEqual([]);
  });

  it("ISO weeks: Sunday belongs to the week before Monday, and 2026-01-01 is in week 1 of 2026", () => {
    const items = [at(2026, 3, 8), at(2026, 3, 9), at(2025, 12, 28), at(2026, 1, 1)];
    const decided = kept(items, { weekly: 10 });
    expect(decided["2026-03-09T12"]).toEqual(["weekly"]);
    expect(decided["2026-03-08T12"]).toEqual(["weekly"]);
    expect(decided["2026-01-01T12"]).toEqual(["weekly"]);
    expect(decided["2025-12-28T12"]).toEqual(["weekly"]);
  });

  it("--keep-within counts back from the newest archive, not from now", () => {
    const old = [at(2020, 5, 1), at(2020, 5, 9), at(2020, 5, 10), at(2020, 4, 1)];
    const decided = kept(old, { within: "10d" });
    expect(decided["2020-05-10T12"]).toEqual(["within 10d"]);
    expect(decided["2020-05-09T12"]).toEqual(["within 10d"]);
    expect(decided["2020-05-01T12"]).toEqual(["within 10d"]);
    expect(decided["2020-04-01T12"]).toEqual([]);
  });

  it("with no archives decides nothing", () => {
    expect(applyRetention([], { last: 2 })).toEqual([]);
  });

  it("an archive dated in the future takes no slot and does not move --keep-within (attack: one archive dated 2099)", () => {
    const now = new Date(2026, 2, 10, 13).getTime();
    const items = [at(2099, 1, 1), at(2026, 3, 10), at(2026, 3, 9), at(2026, 3, 8)];
    const decided = Object.fromEntries(applyRetention(items, { last: 1, within: "1d" }, now).map((d) => [d.item.name, d.reasons]));
    expect(decided).toEqual({ "2099-01-01T12": ["dated in the future"], "2026-03-10T12": ["within 1d", "last"], "2026-03-09T12": [], "2026-03-08T12": [] });
    // A few minutes of clock skew between hosts is not the future.
    const skewed = { name: "skew", createdAt: now + 2 * 60 * 1000 };
    expect(applyRetention([skewed], { last: 1 }, now)[0]!.reasons).toEqual(["last"]);
    expect(applyRetention([{ name: "nan", createdAt: Number.NaN }], { last: 1 }, now)[0]!.reasons).toEqual(["dated in the future"]);
  });
});

describe("parseRetentionDuration", () => {
  it("reads restic's units (m is months) in any order, each once", () => {
    expect(parseRetentionDuration("1y6m")).toEqual({ years: 1, months: 6, weeks: 0, days: 0, hours: 0 });
    expect(parseRetentionDuration("36h")).toMatchObject({ hours: 36 });
    expect(parseRetentionDuration("2w3d")).toMatchObject({ weeks: 2, days: 3 });
    expect(subtractDuration(new Date(2026, 2, 31, 12).getTime(), parseRetentionDuration("1m"))).toBe(new Date(2026, 1, 31, 12).getTime());
  });

  it.each(["", "7", "d", "-1d", "0d", "1d1d", "1.5d", "3x", "1 d"])("refuses %j as a usage error naming the flag", (raw) => {
    expect(() => parseRetentionDuration(raw)).toThrow(UsageError);
    expect(() => parseRetentionDuration(raw)).toThrow(/--keep-within/);
  });
});
