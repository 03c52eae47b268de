// Cron stagger on legacy import (issue 24), fixture cron-stagger. Expectations from openclaw@2026.9.6's dist:
// normalizeStoredCronJobs (store-migration-*.mjs) keeps an explicit `schedule.staggerMs` as normalizeCronStaggerMs
// reads it and gives a cron schedule without one resolveDefaultCronStaggerMs (stagger-*.mjs: 300000 for a recurring
// top-of-hour expression); mergeStateFileEntry compares a jobs-state.json identity with the job as the file has it.
// The fixture's jobs were also run through that dist function: each name and staggerMs below is what it returned.
import { execFileSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { defaultCronStaggerMs, explicitCronStaggerMs } from "../../../src/migration/importers/cron-defaults.js";
import { upgradeGlobalDb } from "../../../src/state/upgrade/upgrade-global-db.js";
import { makeTempState, runInProcess } from "../../helpers/temp-state.js";
import { migrate, rows, stagedDbFile } from "../../helpers/migration.js";

type Row = Record<string, unknown>;

const jobs = (db: string): Row[] => rows<Row>(db, "SELECT * FROM cron_jobs ORDER BY sort_order");
const schedule = (row: Row): Record<string, unknown> => (JSON.parse(String(row.job_json)) as { schedule: Record<string, unknown> }).schedule;

describe("cron stagger (fixture cron-stagger)", () => {
  it("gives a top-of-hour cron schedule upstream's 5-minute default and keeps an explicit stagger as upstream reads it", async () => {
    const { paths } = makeTempState("migration/cron-stagger");
    const { run } = await migrate(paths);
    const all = jobs(paths.globalDbPath);
    expect(all.map((r) => [r.job_id, r.schedule_expr, r.stagger_ms])).toEqual([
      ["hourly", "0 * * * *", 300000],
      ["every-2h", "0 */2 * * *", 300000],
      ["six-field", "0 0 */3 * * *", 300000],
      ["hour-list", "0 1,*/6 * * *", 300000],
      // Not at minute 0 of a recurring hour: no default.
      ["daily-9", "0 9 * * *", null],
      ["quarter-past", "15 * * * *", null],
      // Explicit values win, 0 included ("run exactly on schedule"); a digit string is read, a fraction floored.
      ["explicit", "0 * * * *", 30000],
      ["explicit-zero", "0 * * * *", 0],
      ["string-stagger", "15 * * * *", 45000],
      ["fraction-stagger", "15 * * * *", 1500],
      // Unreadable values are dropped as upstream drops them: the default where there is one, else none.
      ["bad-stagger", "0 * * * *", 300000],
      ["negative-string", "30 9 * * *", null],
      // A string schedule is a cron expression like any other. `schedule.cron` with no kind: upstream sets the job
      // aside (invalid-schedule); we import it as the cron schedule it is (docs/migration.md), with the same default.
      ["legacy-cron-field", "0 * * * *", 300000],
      ["string-schedule", "0 * * * *", 300000],
      // Not a cron schedule: its staggerMs is left as written (upstream does not touch it), and no column holds it.
      ["interval", null, null],
    ]);
    const byId = new Map(all.map((r) => [String(r.job_id), r]));
    expect(schedule(byId.get("hourly")!)).toEqual({ kind: "cron", expr: "0 * * * *", staggerMs: 300000 });
    expect(byId.get("hourly")!.schedule_identity).toBe('{"version":1,"enabled":true,"schedule":{"kind":"cron","expr":"0 * * * *","staggerMs":300000}}');
    expect(schedule(byId.get("every-2h")!)).toEqual({ kind: "cron", expr: "0 */2 * * *", tz: "Europe/Lisbon", staggerMs: 300000 });
    expect(schedule(byId.get("negative-string")!)).toEqual({ kind: "cron", expr: "30 9 * * *" });
    expect(schedule(byId.get("legacy-cron-field")!)).toEqual({ kind: "cron", expr: "0 * * * *", staggerMs: 300000 });
    expect(schedule(byId.get("interval")!)).toMatchObject({ kind: "every", everyMs: 60000, staggerMs: 5000 });

    const source = run.sources.find((s) => s.kind === "cron-jobs")!;
    expect(source.notes[0]).toMatch(/staggerMs as string, staggerMs default \(top of the hour\)/);
    // The dropped values are named (the retired file keeps them).
    expect(source.warnings).toEqual([
      'job "bad-stagger": staggerMs "soon" is not a whole number of milliseconds >= 0: replaced by the default 300000',
      'job "negative-string": staggerMs "-5" is not a whole number of milliseconds >= 0: dropped',
    ]);
  });

  it("keeps nextRunAtMs when jobs-state.json was written for the job as the file has it (no stagger), as upstream does", async () => {
    const { paths } = makeTempState("migration/cron-stagger");
    const { run } = await migrate(paths);
    const byId = new Map(jobs(paths.globalDbPath).map((r) => [String(r.job_id), r]));
    // The state's identity lacks the default the import added: the same schedule for upstream, nextRunAtMs kept.
    expect(byId.get("hourly")).toMatchObject({ next_run_at_ms: 1767304800000, last_run_status: "ok" });
    // A state written for another explicit stagger (10000, the job says 30000) is stale: nextRunAtMs dropped.
    expect(byId.get("explicit")).toMatchObject({ next_run_at_ms: null, last_run_status: "ok" });
    expect(run.sources.find((s) => s.kind === "cron-state")!.notes.join("\n")).toMatch(/1 job\(s\) changed schedule/);
  });

  it("reaches OpenClaw's cron_jobs with the stagger in the schedule and its identity", async () => {
    const state = makeTempState("migration/cron-stagger");
    const cli = await runInProcess(["doctor", "--fix", "--yes", "--no-backup"], state.env);
    expect(cli.code, cli.stderr).toBe(0);
    const target = path.join(state.root, "upgraded", "openclaw.sqlite");
    upgradeGlobalDb({ source: stagedDbFile(state.paths), target, stateDir: state.stateDir, now: 1_800_000_000_000 });
    const out = execFileSync("sqlite3", ["-json", `file:${target}?mode=ro`, "SELECT job_id, schedule_identity, job_json FROM cron_jobs WHERE job_id IN ('hourly', 'daily-9')"], { encoding: "utf8" });
    const upgraded = new Map((JSON.parse(out) as Row[]).map((r) => [String(r.job_id), r]));
    expect(upgraded.get("hourly")).toMatchObject({ schedule_identity: '{"version":2,"enabled":true,"schedule":{"kind":"cron","expr":"0 * * * *","staggerMs":300000},"hasTrigger":false}' });
    expect(schedule(upgraded.get("hourly")!)).toEqual({ kind: "cron", expr: "0 * * * *", staggerMs: 300000 });
    expect(schedule(upgraded.get("daily-9")!)).toEqual({ kind: "cron", expr: "0 9 * * *" });
  });
});

describe("cron stagger rules (stagger-*.mjs of openclaw@2026.9.6: resolveDefaultCronStaggerMs, normalizeCronStaggerMs)", () => {
  it("defaults only minute 0 (second 0) of recurring hours", () => {
    const cases: Array<[string, number | undefined]> = [
      ["0 * * * *", 300000], ["0 ? * * *", 300000], ["0 */4 * * *", 300000], ["0 1-5,*/2 * * *", 300000], ["0 0 * * * *", 300000],
      ["0 9 * * *", undefined], ["0 9-17 * * 1-5", undefined], ["5 * * * *", undefined], ["*/15 * * * *", undefined], ["0 0 9 * * *", undefined],
      ["30 0 * * * *", undefined], ["0 * * *", undefined], ["@hourly", undefined], ["0 L * * *", undefined],
    ];
    for (const [expr, want] of cases) expect([expr, defaultCronStaggerMs(expr)]).toEqual([expr, want]);
  });

  it("reads explicit values as upstream does", () => {
    const cases: Array<[unknown, number | undefined]> = [
      [0, 0], [30000, 30000], [1500.9, 1500], [-5, 0], [" 45000 ", 45000], ["+7", 7], ["-0", 0],
      ["-5", undefined], ["1.5", undefined], ["3e5", undefined], ["", undefined], [Number.NaN, undefined], [Infinity, undefined], [null, undefined], [true, undefined], [9e15, undefined],
    ];
    for (const [raw, want] of cases) expect([raw, explicitCronStaggerMs(raw)]).toEqual([raw, want]);
  });
});
