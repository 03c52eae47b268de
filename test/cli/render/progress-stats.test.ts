// Percent, rate and ETA text for progress lines: the pure formatter, the per-phase meter, and where it is shown.
import { describe, expect, it } from "vitest";
import { backupProgressText } from "../../../src/cli/render/backup-render.js";
import { formatMigrationProgress, migrationProgressStats } from "../../../src/cli/render/migration-render.js";
import { createProgressMeter, formatDuration, formatProgressStats, formatRate, showsProgressStats } from "../../../src/cli/render/progress-stats.js";

const MiB = 1024 * 1024;

describe("formatProgressStats", () => {
  it("shows percent, byte rate and ETA when the total is known", () => {
    expect(formatProgressStats({ done: 50 * MiB, total: 200 * MiB, elapsedMs: 5000, unit: "bytes" })).toBe(" 25% · 10.0 MiB/s · ETA 15s");
  });

  it("shows an item rate for counts", () => {
    expect(formatProgressStats({ done: 300, total: 1200, elapsedMs: 2000, unit: { items: "sources" } })).toBe(" 25% · 150 sources/s · ETA 6s");
    expect(formatRate(2.5, { items: "sources" })).toBe("2.5 sources/s");
    expect(formatRate(3, { items: "sources" })).toBe("3 sources/s");
    expect(formatRate(12_345.4, { items: "sources" })).toBe("12,345 sources/s");
  });

  it("shows only the percent in the first second (no noisy rate), and nothing without a total or progress", () => {
    expect(formatProgressStats({ done: 10 * MiB, total: 100 * MiB, elapsedMs: 200, unit: "bytes" })).toBe(" 10%");
    expect(formatProgressStats({ done: 0, elapsedMs: 0, unit: "bytes" })).toBe("");
    expect(formatProgressStats({ done: 0, total: 0, elapsedMs: 5000, unit: "bytes" })).toBe("");
  });

  it("without a total shows the rate but no percent or ETA", () => {
    expect(formatProgressStats({ done: 4 * MiB, elapsedMs: 2000, unit: "bytes" })).toBe(" 2.0 MiB/s");
  });

  it("clamps the percent and drops the ETA once done reaches the total", () => {
    expect(formatProgressStats({ done: 120, total: 100, elapsedMs: 2000, unit: { items: "files" } })).toBe(" 100% · 60 files/s");
    expect(formatProgressStats({ done: 100, total: 100, elapsedMs: 2000, unit: { items: "files" } })).toBe(" 100% · 50 files/s");
  });

  it("counts the rate from what was done since timing began (baseDone)", () => {
    expect(formatProgressStats({ done: 60, total: 100, baseDone: 40, elapsedMs: 2000, unit: { items: "files" } })).toBe(" 60% · 10 files/s · ETA 4s");
  });
});

describe("formatDuration", () => {
  it("is compact at every scale", () => {
    expect(formatDuration(0)).toBe("0s");
    expect(formatDuration(35_000)).toBe("35s");
    expect(formatDuration(34_001)).toBe("35s");
    expect(formatDuration(125_000)).toBe("2m05s");
    expect(formatDuration(3_720_000)).toBe("1h02m");
    expect(formatDuration(500 * 3600_000)).toBe("99h+");
    expect(formatDuration(Number.POSITIVE_INFINITY)).toBe("99h+");
  });
});

describe("createProgressMeter", () => {
  it("times each phase separately and restarts when a count goes backwards", () => {
    let t = 0;
    const meter = createProgressMeter(() => t);
    expect(meter("archive", 0, 100 * MiB, "bytes")).toBe(" 0%");
    t = 2000;
    expect(meter("archive", 40 * MiB, 100 * MiB, "bytes")).toBe(" 40% · 20.0 MiB/s · ETA 3s");
    // A new phase: its own clock, so no rate until a second has passed in it.
    expect(meter("verify", 10 * MiB, 100 * MiB, "bytes")).toBe(" 10%");
    t = 4000;
    expect(meter("verify", 30 * MiB, 100 * MiB, "bytes")).toBe(" 30% · 10.0 MiB/s · ETA 7s");
    // The count went backwards (a retried step): timing starts over.
    expect(meter("verify", 5 * MiB, 100 * MiB, "bytes")).toBe(" 5%");
  });
});

describe("where the stats go", () => {
  it("backup lines carry them after the byte counts and before the path", () => {
    expect(backupProgressText({ phase: "archive", bytesDone: 50 * MiB, bytesTotal: 200 * MiB, path: "state/x.sqlite" } as never, " 25% · 10.0 MiB/s · ETA 15s")).toMatch(
      /50\.0 MiB \/ 200\.0 MiB 25% · 10\.0 MiB\/s · ETA 15s state\/x\.sqlite$/,
    );
  });

  it("migration lines carry them after the source counts, by bytes when the byte total is known", () => {
    let t = 0;
    const meter = createProgressMeter(() => t);
    const e = { phase: "import", done: 0, total: 10, bytesDone: 0, bytesTotal: 100 * MiB } as const;
    migrationProgressStats(meter, e as never);
    t = 4000;
    const later = { ...e, done: 5, bytesDone: 40 * MiB, current: "agents/main/sessions/a.jsonl" };
    const line = formatMigrationProgress(later as never, migrationProgressStats(meter, later as never));
    expect(line).toMatch(/5\/10 sources \(40\.0 MiB of 100\.0 MiB\) 40% · 10\.0 MiB\/s · ETA 6s — agents\/main\/sessions\/a\.jsonl$/);
  });

  it("only on a terminal, never under --json or --quiet", () => {
    expect(showsProgressStats({ interactive: true, json: false, quiet: false })).toBe(true);
    expect(showsProgressStats({ interactive: false, json: false, quiet: false })).toBe(false);
    expect(showsProgressStats({ interactive: true, json: true, quiet: false })).toBe(false);
    expect(showsProgressStats({ interactive: true, json: false, quiet: true })).toBe(false);
  });
});
