// The JSON time helpers: ISO-8601 or null, keys kept in place, a file's mtimeMs printed as mtime.
import { describe, expect, it } from "vitest";
import { isoTime, withFileTime, withIsoTimes } from "../../../src/cli/render/json-time.js";

describe("json-time", () => {
  it("isoTime: ISO-8601 UTC for epoch ms, null when unknown or not a date", () => {
    expect(isoTime(1767225600000)).toBe("2026-01-01T00:00:00.000Z");
    expect(isoTime(0)).toBe("1970-01-01T00:00:00.000Z");
    for (const v of [null, undefined, Number.NaN, Number.POSITIVE_INFINITY, 8.64e15 + 1]) expect(isoTime(v)).toBeNull();
  });

  it("withIsoTimes converts only the named keys, in place, and adds none that were absent", () => {
    const out = withIsoTimes({ id: "a", startedAt: 1767225600000, finishedAt: null as number | null, timeoutMs: 5 }, ["startedAt", "finishedAt"]);
    expect(out).toEqual({ id: "a", startedAt: "2026-01-01T00:00:00.000Z", finishedAt: null, timeoutMs: 5 });
    expect(Object.keys(out)).toEqual(["id", "startedAt", "finishedAt", "timeoutMs"]);
    expect(withIsoTimes({ id: "b" } as { id: string; endedAt?: number }, ["endedAt"])).toEqual({ id: "b" });
  });

  it("withFileTime prints mtimeMs as mtime at the same place", () => {
    const out = withFileTime({ path: "x", mtimeMs: 1767225600000, sizeBytes: 3 });
    expect(Object.keys(out)).toEqual(["path", "mtime", "sizeBytes"]);
    expect(out.mtime).toBe("2026-01-01T00:00:00.000Z");
  });
});
