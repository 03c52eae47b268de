// Cron job shapes of issue 24, imported as openclaw@2026.9.6's doctor normalizes them (normalizeStoredCronJobs):
// a string `schedule` with a `command` (upstream #33451, #18445), top-level delivery fields, `every` without anchorMs.
// Checked in the design-v1 cron_jobs rows, then in OpenClaw's cron_jobs after the format upgrade.
import { execFileSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { upgradeGlobalDb } from "../../src/state/upgrade/upgrade-global-db.js";
import { makeTempState, runInProcess } from "../helpers/temp-state.js";
import { migrate, rows, stagedDbFile } from "../helpers/migration.js";

type Row = Record<string, unknown>;

function jobs(db: string): Row[] {
  return rows<Row>(db, "SELECT * FROM cron_jobs ORDER BY sort_order");
}

function jobJson(row: Row | undefined): Record<string, unknown> {
  return JSON.parse(String(row!.job_json)) as Record<string, unknown>;
}

function cli<T = Row>(file: string, sql: string): T[] {
  const out = execFileSync("sqlite3", ["-json", `file:${file}?mode=ro`, sql], { encoding: "utf8" }).trim();
  return out === "" ? [] : (JSON.parse(out) as T[]);
}

/** `doctor --fix` on the fixture, then the design-v1 global DB rewritten in OpenClaw 2026.9.6's format. */
async function upgraded(fixture: string): Promise<Map<string, Row>> {
  const state = makeTempState(fixture);
  const run = await runInProcess(["doctor", "--fix", "--yes", "--no-backup"], state.env);
  expect(run.code, run.stderr).toBe(0);
  const target = path.join(state.root, "upgraded", "openclaw.sqlite");
  upgradeGlobalDb({ source: stagedDbFile(state.paths), target, stateDir: state.stateDir, now: 1_800_000_000_000 });
  const out = new Map<string, Row>();
  for (const r of cli(target, "SELECT job_id, payload_kind, schedule_identity, job_json FROM cron_jobs ORDER BY sort_order")) out.set(String(r.job_id), r);
  return out;
}

describe("cron: a string schedule with a command (fixture cron-string-schedule)", () => {
  it("becomes a cron schedule and a systemEvent payload on the main session, as upstream's doctor makes it", async () => {
    const { paths } = makeTempState("migration/cron-string-schedule");
    const { run } = await migrate(paths);
    expect(run.status).toBe("completed");
    expect(run.sources[0]!.notes[0]).toBe("legacy job shapes normalized: command, name inferred, schedule as string, sessionTarget");
    const [backup, disk, message] = jobs(paths.globalDbPath);
    expect(backup).toMatchObject({
      job_id: "nightly-backup", enabled: 1, schedule_kind: "cron", schedule_expr: "30 3 * * *", session_target: "main", wake_mode: "now",
      payload_kind: "systemEvent", payload_message: "/usr/local/bin/backup.sh --all", delivery_mode: null,
      schedule_identity: '{"version":1,"enabled":true,"schedule":{"kind":"cron","expr":"30 3 * * *"}}',
    });
    // The command is the event text now; its `timeout` (upstream drops it) is kept in the job's JSON.
    expect(jobJson(backup)).not.toHaveProperty("command");
    expect(jobJson(backup)).toMatchObject({ schedule: { kind: "cron", expr: "30 3 * * *" }, payload: { kind: "systemEvent", text: "/usr/local/bin/backup.sh --all" }, timeout: 600 });
    // Trimmed; a top-level tz beside a string schedule is not part of it (upstream ignores it too) but is kept.
    expect(disk).toMatchObject({ job_id: "disk-check", name: "Cron: */30 * * * *", schedule_expr: "*/30 * * * *", schedule_tz: null, payload_message: "df -h /", session_target: "main" });
    expect(jobJson(disk)).toMatchObject({ tz: "Europe/Berlin" });
    // message wins over command (upstream's order); the unused command is kept, not dropped as upstream does.
    expect(message).toMatchObject({ job_id: "string-with-message", schedule_expr: "15 8 * * 1-5", payload_kind: "agentTurn", payload_message: "Plan my day", session_target: "isolated", delivery_mode: "announce" });
    expect(jobJson(message)).toMatchObject({ command: "ignored-by-upstream" });
  });

  it("reaches OpenClaw's cron_jobs runnable: schedule, payload and session target", async () => {
    const upgradedJobs = await upgraded("migration/cron-string-schedule");
    const backup = upgradedJobs.get("nightly-backup")!;
    expect(backup.payload_kind).toBe("systemEvent");
    expect(backup.schedule_identity).toBe('{"version":2,"enabled":true,"schedule":{"kind":"cron","expr":"30 3 * * *"},"hasTrigger":false}');
    expect(jobJson(backup)).toMatchObject({ schedule: { kind: "cron", expr: "30 3 * * *" }, payload: { kind: "systemEvent", text: "/usr/local/bin/backup.sh --all" }, sessionTarget: "main", wakeMode: "now", enabled: true });
    expect(jobJson(upgradedJobs.get("disk-check"))).toMatchObject({ schedule: { kind: "cron", expr: "*/30 * * * *" }, sessionTarget: "main" });
  });
});

describe("cron: top-level delivery fields (fixture cron-top-level-delivery)", () => {
  it("folds channel, to, threadId, bestEffort(Deliver) and deliver into delivery, allowUnsafeExternalContent into the payload", async () => {
    const { paths } = makeTempState("migration/cron-top-level-delivery");
    const { run } = await migrate(paths);
    expect(run.status).toBe("completed");
    const [news, ping, merged, muted, reminder] = jobs(paths.globalDbPath);
    expect(news).toMatchObject({
      job_id: "news-digest", session_target: "isolated", payload_kind: "agentTurn", payload_message: "Summarize the news", payload_allow_unsafe_external_content: 1,
      delivery_mode: "announce", delivery_channel: "telegram", delivery_to: "12345", delivery_best_effort: 1,
    });
    for (const field of ["channel", "to", "bestEffortDeliver", "allowUnsafeExternalContent"]) expect(jobJson(news)).not.toHaveProperty(field);
    expect(jobJson(news).payload).toEqual({ kind: "agentTurn", message: "Summarize the news", allowUnsafeExternalContent: true });
    // `bestEffort` at the top level is read as bestEffortDeliver; a numeric threadId is kept as text.
    expect(ping).toMatchObject({ job_id: "status-ping", delivery_mode: "announce", delivery_channel: "slack", delivery_to: "C42", delivery_thread_id: "1700000000", delivery_best_effort: 1 });
    expect(jobJson(ping)).not.toHaveProperty("bestEffort");
    // An existing delivery is patched by the hints (upstream's mergeLegacyDeliveryInto), its other fields kept.
    expect(merged).toMatchObject({ job_id: "merged", delivery_mode: "announce", delivery_channel: "discord", delivery_to: "channel:9", delivery_account_id: "bot-a" });
    // deliver: false is mode none; the target is kept.
    expect(muted).toMatchObject({ job_id: "muted", delivery_mode: "none", delivery_to: "777" });
    // A main-session systemEvent job has no delivery: upstream drops its top-level channel/to, they are kept here.
    expect(reminder).toMatchObject({ job_id: "reminder", session_target: "main", payload_kind: "systemEvent", delivery_mode: null, delivery_channel: null });
    expect(jobJson(reminder)).toMatchObject({ channel: "telegram", to: "999" });
  });

  it("reaches OpenClaw's cron_jobs with an announce delivery that names where to announce", async () => {
    const upgradedJobs = await upgraded("migration/cron-top-level-delivery");
    expect(jobJson(upgradedJobs.get("news-digest"))).toMatchObject({
      payload: { kind: "agentTurn", message: "Summarize the news", allowUnsafeExternalContent: true },
      delivery: { mode: "announce", channel: "telegram", to: "12345", bestEffort: true },
    });
    expect(jobJson(upgradedJobs.get("status-ping")).delivery).toEqual({ mode: "announce", channel: "slack", to: "C42", threadId: "1700000000", bestEffort: true });
    expect(jobJson(upgradedJobs.get("merged")).delivery).toEqual({ mode: "announce", accountId: "bot-a", channel: "discord", to: "channel:9" });
  });
});

describe("cron: legacy every schedules (fixture cron-every-anchor)", () => {
  it("anchors an interval with no anchorMs at createdAtMs (else updatedAtMs), and keeps an explicit anchor", async () => {
    const { paths } = makeTempState("migration/cron-every-anchor");
    const { run } = await migrate(paths);
    expect(run.status).toBe("completed");
    expect(run.sources[0]!.notes[0]).toBe("legacy job shapes normalized: anchorMs from createdAtMs, anchorMs from updatedAtMs, everyMs as string, sessionTarget");
    expect(jobs(paths.globalDbPath).map((r) => [r.job_id, r.every_ms, r.anchor_ms])).toEqual([
      ["hourly", 3600000, 1767225600123],
      ["anchored", 60000, 5000],
      ["updated-only", 120000, 1767300000000],
      // No time to anchor at: left for the runtime (upstream's doctor would anchor it at the moment it runs).
      ["timeless", 90000, null],
    ]);
    const hourly = jobs(paths.globalDbPath)[0]!;
    expect(hourly.schedule_identity).toBe('{"version":1,"enabled":true,"schedule":{"kind":"every","everyMs":3600000,"anchorMs":1767225600123}}');
  });

  it("reaches OpenClaw's cron_jobs with the anchor in the schedule and its identity", async () => {
    const upgradedJobs = await upgraded("migration/cron-every-anchor");
    const hourly = upgradedJobs.get("hourly")!;
    expect(jobJson(hourly).schedule).toEqual({ kind: "every", everyMs: 3600000, anchorMs: 1767225600123 });
    expect(hourly.schedule_identity).toBe('{"version":2,"enabled":true,"schedule":{"kind":"every","everyMs":3600000,"anchorMs":1767225600123},"hasTrigger":false}');
    expect(jobJson(upgradedJobs.get("updated-only")).schedule).toEqual({ kind: "every", everyMs: 120000, anchorMs: 1767300000000 });
  });
});
