// Cron importers: jobs.json → cron_jobs, jobs-state.json → runtime columns, runs/*.jsonl → cron_run_logs.
//
// Shapes: SPEC §4.3, and OpenClaw's public sources for what the spec leaves out — src/cron/normalize.ts
// (legacy job fields), src/cron/store/row-codec.ts (typed columns, store key = the store's absolute path),
// src/commands/doctor/cron/legacy-store-migration.ts (jobs-state.json, scheduleIdentity),
// legacy-notify.ts (`notify: true` + cron.webhook) and src/cron/run-log-types.ts (run-log lines).
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { planMigration } from "../../src/migration/plan-migration.js";
import { makeTempState } from "../helpers/temp-state.js";
import { dumpState, ledgerSummary, migrate, rows, sha256Of } from "../helpers/migration.js";

type Job = Record<string, unknown>;

function jobs(db: string): Job[] {
  return rows<Job>(db, "SELECT * FROM cron_jobs ORDER BY store_key, job_id");
}

describe("cron importers", () => {
  it("maps every job, state and run-log field to its typed column and keeps the JSON for replay", async () => {
    const { paths, stateDir } = makeTempState("migration/cron");
    const storeKey = path.join(stateDir, "cron/jobs.json");
    const plan = await planMigration({ paths });
    expect(plan.sources.map((s) => [s.kind, s.relativePath, s.records, s.targetDatabase, s.agentId])).toEqual([
      ["cron-jobs", "cron/jobs.json", 3, "global", null],
      ["cron-state", "cron/jobs-state.json", 3, "global", null],
      ["cron-runs", "cron/runs/daily-brief.jsonl", 2, "global", null],
      ["cron-runs", "cron/runs/every-15m.jsonl", 1, "global", null],
    ]);
    const { run } = await migrate(paths);
    expect(run).toMatchObject({ status: "completed", totals: { imported: 4, retired: 4 } });
    const state = run.sources.find((o) => o.kind === "cron-state")!;
    expect(state.notes.join("\n")).toMatch(/1 state entry for job\(s\) not in the store ignored.*deleted-job/);
    expect(state.notes.join("\n")).toMatch(/1 job\(s\) changed schedule.*nextRunAtMs dropped/);

    const [daily, every, once] = jobs(paths.globalDbPath);
    expect(daily).toMatchObject({
      store_key: storeKey, job_id: "daily-brief", name: "Daily brief", description: "Morning summary", enabled: 1, delete_after_run: 0,
      created_at_ms: 1767225600000, agent_id: "main", session_key: "agent:main:main",
      schedule_kind: "cron", schedule_expr: "0 8 * * *", schedule_tz: "Europe/Lisbon", stagger_ms: 30000, every_ms: null, anchor_ms: null, at: null,
      session_target: "isolated", wake_mode: "next-heartbeat",
      payload_kind: "agentTurn", payload_message: "Summarize my inbox", payload_model: "anthropic/claude-sonnet-4", payload_fallbacks_json: '["openai/gpt-5"]',
      payload_thinking: "low", payload_timeout_seconds: 300, payload_allow_unsafe_external_content: 0, payload_external_content_source_json: '"gmail"',
      payload_light_context: 1, payload_tools_allow_json: '["web_search"]',
      delivery_mode: "announce", delivery_channel: "telegram", delivery_to: "123456", delivery_thread_id: "42", delivery_account_id: "bot-a", delivery_best_effort: 1,
      failure_delivery_mode: "webhook", failure_delivery_channel: "slack", failure_delivery_to: "https://hooks.example/fail", failure_delivery_account_id: "ops",
      failure_alert_disabled: 0, failure_alert_after: 3, failure_alert_channel: "telegram", failure_alert_to: "999", failure_alert_cooldown_ms: 3600000,
      failure_alert_include_skipped: 1, failure_alert_mode: "announce", failure_alert_account_id: "bot-a",
      // From jobs-state.json (same schedule identity: nextRunAtMs kept).
      next_run_at_ms: 1767427200000, running_at_ms: null, last_run_at_ms: 1767340800000, last_run_status: "ok", last_error: null, last_duration_ms: 5123,
      consecutive_errors: 0, consecutive_skipped: 1, schedule_error_count: 0, last_delivery_status: "delivered", last_delivery_error: null, last_delivered: 1,
      last_failure_alert_at_ms: 1767000000000, runtime_updated_at_ms: 1767340800000, sort_order: 0, updated_at: 1767340800000,
      schedule_identity: '{"version":1,"enabled":true,"schedule":{"kind":"cron","expr":"0 8 * * *","tz":"Europe/Lisbon","staggerMs":30000}}',
    });
    expect(JSON.parse(daily!.job_json as string)).toMatchObject({ id: "daily-brief", payload: { toolsAllow: ["web_search"] } });
    expect(JSON.parse(daily!.job_json as string)).not.toHaveProperty("state");
    expect(JSON.parse(daily!.state_json as string)).toMatchObject({ nextRunAtMs: 1767427200000, lastDelivered: true });
    expect(every).toMatchObject({
      job_id: "every-15m", enabled: 0, schedule_kind: "every", every_ms: 900000, anchor_ms: 1767225600000, session_target: "main", wake_mode: "now",
      payload_kind: "systemEvent", payload_message: "ping", payload_model: null, failure_alert_disabled: 1,
      // Stale schedule identity: nextRunAtMs dropped; legacy `lastStatus` read as the run status.
      next_run_at_ms: null, running_at_ms: 1767341600000, last_run_status: "error", last_error: "timeout", consecutive_errors: 2, last_delivery_error: "no route",
    });
    expect(once).toMatchObject({ job_id: "one-shot", schedule_kind: "at", at: "2026-02-01T09:00:00.000Z", delete_after_run: 1, state_json: null, next_run_at_ms: null, sort_order: 2 });

    expect(rows(paths.globalDbPath, "SELECT * FROM cron_run_logs ORDER BY job_id, seq")).toEqual([
      {
        store_key: storeKey, job_id: "daily-brief", seq: 1, ts: 1767254400000, status: "ok", error: null, summary: "3 new emails", diagnostics_summary: "all checks passed",
        delivery_status: "delivered", delivery_error: null, delivered: 1, session_id: "s-cron-1", session_key: "agent:main:cron:daily-brief", run_id: "run-1",
        run_at_ms: 1767254399000, duration_ms: 5123, next_run_at_ms: 1767340800000, model: "claude-sonnet-4", provider: "anthropic", total_tokens: 1200,
        entry_json: fs.readFileSync(path.join(stateDir, "migrated", run.runId, "cron/runs/daily-brief.jsonl"), "utf8").split("\n")[0], created_at: 1767254400000,
      },
      expect.objectContaining({ job_id: "daily-brief", seq: 2, status: "error", error: "rate limited", delivered: 0, delivery_status: "not-delivered", delivery_error: "skipped after the error", run_id: "run-2", duration_ms: 900, total_tokens: null }),
      expect.objectContaining({ job_id: "every-15m", seq: 1, status: "skipped", summary: "disabled" }),
    ]);
  });

  it("normalizes legacy job shapes: jobId, schedule.cron, atMs, string booleans, missing sessionTarget, notify, top-level fields", async () => {
    const { paths } = makeTempState("migration/cron-legacy");
    const plan = await planMigration({ paths });
    expect(plan.sources[0]!.notes[0]).toBe("legacy job shapes normalized: atMs, enabled as string, everyMs as string, jobId, name inferred, notify, payload delivery fields, schedule.cron, sessionTarget");
    const { run } = await migrate(paths);
    // Two rows cannot be keyed (not an object, no id): imported with a warning, the rest is in.
    expect(run.status).toBe("warning");
    expect(run.sources.map((o) => [o.relativePath, o.status, o.warnings])).toEqual([
      ["cron/jobs.json", "warning", ["job #4 is not an object; skipped (it stays in the retired file)", "job #5 has no id; skipped (it stays in the retired file)"]],
      ["cron/runs/legacy-cron.jsonl", "warning", [expect.stringMatching(/legacy-cron\.jsonl:3: truncated final line dropped$/)]],
    ]);
    const [atJob, cronJob, topLevel] = jobs(paths.globalDbPath);
    expect(cronJob).toMatchObject({
      job_id: "legacy-cron", enabled: 1, schedule_kind: "cron", schedule_expr: "*/5 * * * *", session_target: "isolated", payload_kind: "agentTurn",
      // The old payload's delivery hints become the delivery; notify adds a completion webhook to cron.webhook.
      delivery_mode: "announce", delivery_channel: "telegram", delivery_to: "555",
    });
    expect(JSON.parse(cronJob!.job_json as string).delivery.completionDestination).toEqual({ mode: "webhook", to: "https://hooks.example/cron" });
    expect(JSON.parse(cronJob!.job_json as string)).not.toHaveProperty("jobId");
    expect(atJob).toMatchObject({
      job_id: "legacy-at", enabled: 0, schedule_kind: "at", at: "2026-01-02T00:00:00.000Z", delete_after_run: 1, session_target: "main",
      payload_kind: "systemEvent", payload_message: "wake up", delivery_mode: "webhook", delivery_to: "https://hooks.example/cron",
    });
    expect(JSON.parse(atJob!.job_json as string)).not.toHaveProperty("notify");
    expect(topLevel).toMatchObject({ job_id: "top-level", schedule_kind: "every", every_ms: 60000, wake_mode: "now", payload_kind: "agentTurn", payload_message: "tick", payload_model: "gpt-mini", session_target: "isolated", delivery_mode: "announce" });
    expect(rows(paths.globalDbPath, "SELECT seq, status, error, duration_ms, total_tokens FROM cron_run_logs ORDER BY seq")).toEqual([
      { seq: 1, status: "ok", error: null, duration_ms: 250, total_tokens: 15 },
      { seq: 2, status: "error", error: "boom", duration_ms: null, total_tokens: null },
    ]);
  });

  it("honours the config's cron.store and keeps the default store under its own key", async () => {
    const { paths, stateDir } = makeTempState("migration/cron-store-config");
    const { run } = await migrate(paths);
    expect(run.status).toBe("completed");
    expect(run.sources.map((o) => o.relativePath)).toEqual(["cron/jobs.json", "custom/cron-store.json", "custom/cron-store-state.json", "custom/runs/nightly.jsonl"]);
    const custom = path.join(stateDir, "custom/cron-store.json");
    expect(rows(paths.globalDbPath, "SELECT store_key, job_id, last_run_status FROM cron_jobs ORDER BY store_key")).toEqual([
      { store_key: path.join(stateDir, "cron/jobs.json"), job_id: "old-default", last_run_status: null },
      { store_key: custom, job_id: "nightly", last_run_status: "ok" },
    ]);
    expect(rows(paths.globalDbPath, "SELECT store_key, job_id, seq FROM cron_run_logs")).toEqual([{ store_key: custom, job_id: "nightly", seq: 1 }]);
  });

  it("keeps a malformed jobs.json in place (its state waits for it), imports the run logs, ends warning", async () => {
    const { paths, stateDir } = makeTempState("migration/cron");
    const jobsFile = path.join(stateDir, "cron/jobs.json");
    fs.writeFileSync(jobsFile, '{"version": 1, "jobs": [ {"id": "x", ');
    const plan = await planMigration({ paths });
    expect(plan.sources[0]!.notes).toEqual([expect.stringMatching(/^will fail: .*jobs\.json: invalid JSON/)]);
    const { run } = await migrate(paths);
    expect(run.status).toBe("warning");
    expect(run.sources.map((o) => [o.kind, o.status])).toEqual([
      ["cron-jobs", "failed"],
      ["cron-state", "failed"],
      ["cron-runs", "imported"],
      ["cron-runs", "imported"],
    ]);
    expect(run.sources[0]!.reason).toMatch(/jobs\.json: invalid JSON at line 1.*left in place/);
    expect(run.sources[1]!.reason).toMatch(/has not been imported; the file was left in place until it is/);
    expect(fs.existsSync(jobsFile)).toBe(true);
    expect(fs.existsSync(path.join(stateDir, "cron/jobs-state.json"))).toBe(true);
    expect(rows(paths.globalDbPath, "SELECT count(*) AS n FROM cron_run_logs")).toEqual([{ n: 3 }]);
    expect(ledgerSummary(paths, "cron/jobs.json")).toMatchObject({ status: "failed", removed_source: 0 });

    // Fixed by hand: the next run imports the jobs, then their state.
    fs.copyFileSync(path.join(process.cwd(), "fixtures/migration/cron/cron/jobs.json"), jobsFile);
    const again = await migrate(paths);
    expect(again.run.sources.map((o) => [o.kind, o.status])).toEqual([["cron-jobs", "imported"], ["cron-state", "imported"]]);
    expect(rows(paths.globalDbPath, "SELECT job_id, next_run_at_ms FROM cron_jobs WHERE job_id = 'daily-brief'")).toEqual([{ job_id: "daily-brief", next_run_at_ms: 1767427200000 }]);
  });

  it("re-runs change nothing, and a re-imported jobs.json keeps the merged runtime state", async () => {
    const { paths, stateDir } = makeTempState("migration/cron");
    const first = await migrate(paths);
    const dump = dumpState(paths);
    expect((await migrate(paths)).run.sources).toEqual([]);
    expect(dumpState(paths)).toEqual(dump);

    // Crash between commit and retirement: the files come back unchanged, nothing is written again.
    for (const o of first.run.sources) {
      fs.mkdirSync(path.dirname(o.path), { recursive: true });
      fs.renameSync(o.retiredTo!, o.path);
    }
    const replay = await migrate(paths);
    expect(replay.run.sources.map((o) => o.status)).toEqual(Array(4).fill("already-imported"));
    expect(dumpState(paths)).toEqual(dump);

    // The jobs file changes (a renamed job): re-imported by upsert; jobs-state's runtime columns stay.
    const original = fs.readFileSync(path.join(process.cwd(), "fixtures/migration/cron/cron/jobs.json"), "utf8");
    fs.mkdirSync(path.join(stateDir, "cron"), { recursive: true });
    fs.writeFileSync(path.join(stateDir, "cron/jobs.json"), original.replace('"Daily brief"', '"Morning brief"'));
    const changed = await migrate(paths);
    expect(changed.run.sources).toEqual([expect.objectContaining({ action: "changed-since-import", status: "imported" })]);
    expect(rows(paths.globalDbPath, "SELECT name, next_run_at_ms, last_run_status FROM cron_jobs WHERE job_id = 'daily-brief'")).toEqual([{ name: "Morning brief", next_run_at_ms: 1767427200000, last_run_status: "ok" }]);
    expect(rows(paths.globalDbPath, "SELECT count(*) AS n FROM cron_jobs")).toEqual([{ n: 3 }]);
  });

  it("records each file in the ledger with its target table, sha256 and record count", async () => {
    const { paths } = makeTempState("migration/cron");
    const fixture = (rel: string): string => path.join(process.cwd(), "fixtures/migration/cron", rel);
    await migrate(paths);
    expect(ledgerSummary(paths, "cron/jobs.json")).toEqual({ migration_kind: "cron-jobs", target_table: "cron_jobs", source_sha256: sha256Of(fixture("cron/jobs.json")), source_record_count: 3, status: "imported", removed_source: 1 });
    expect(ledgerSummary(paths, "cron/jobs-state.json")).toEqual({ migration_kind: "cron-state", target_table: "cron_jobs", source_sha256: sha256Of(fixture("cron/jobs-state.json")), source_record_count: 3, status: "imported", removed_source: 1 });
    expect(ledgerSummary(paths, "cron/runs/daily-brief.jsonl")).toEqual({ migration_kind: "cron-runs", target_table: "cron_run_logs", source_sha256: sha256Of(fixture("cron/runs/daily-brief.jsonl")), source_record_count: 2, status: "imported", removed_source: 1 });
  });

  it("fails a run log with no valid line, keeps it, and still imports the others", async () => {
    const { paths, stateDir } = makeTempState("migration/cron");
    const bad = path.join(stateDir, "cron/runs/broken.jsonl");
    fs.writeFileSync(bad, "not json\nstill not json\n");
    const { run } = await migrate(paths);
    const outcome = run.sources.find((o) => o.relativePath === "cron/runs/broken.jsonl")!;
    expect(outcome).toMatchObject({ status: "failed", reason: expect.stringMatching(/no line is a JSON run record; the file was left in place/) });
    expect(fs.existsSync(bad)).toBe(true);
    expect(run.sources.filter((o) => o.status === "imported")).toHaveLength(4);
  });
});

describe("cron store: corrupt jobs.json with a valid jobs.json.bak (fixture cron-corrupt-store)", () => {
  it("imports the backup's jobs under the store's key, names both files in a warning, and retires both", async () => {
    const { paths, stateDir } = makeTempState("migration/cron-corrupt-store");
    const storeKey = path.join(stateDir, "cron/jobs.json");
    const plan = await planMigration({ paths });
    expect(plan.sources.map((s) => [s.relativePath, s.action, s.records, s.willFail ?? null])).toEqual([
      ["cron/jobs.json", "import", 0, null],
      ["cron/jobs.json.bak", "import", 2, null],
    ]);
    // Neither file is left over as "unknown to OpenClaw's design": both belong to the cron importer.
    expect(plan.inventory.entries.filter((e) => e.relativePath.startsWith("cron/"))).toEqual([]);
    expect(plan.inventory.counts.unknown).toBe(0);
    const { run } = await migrate(paths);
    expect(run.status).toBe("warning");
    expect(run.sources.map((o) => [o.relativePath, o.status, o.rows, o.retired])).toEqual([
      ["cron/jobs.json", "warning", { cron_jobs: 0 }, "moved"],
      ["cron/jobs.json.bak", "warning", { cron_jobs: 2 }, "moved"],
    ]);
    for (const o of run.sources) expect(o.warnings.join("\n")).toMatch(/cron\/jobs\.json does not parse.*cron\/jobs\.json\.bak/);
    expect(rows(paths.globalDbPath, "SELECT store_key, job_id, enabled, schedule_kind, schedule_expr, payload_kind FROM cron_jobs ORDER BY job_id")).toEqual([
      { store_key: storeKey, job_id: "morning-digest", enabled: 1, schedule_kind: "cron", schedule_expr: "0 7 * * *", payload_kind: "agentTurn" },
      { store_key: storeKey, job_id: "nightly-sweep", enabled: 0, schedule_kind: "cron", schedule_expr: "0 2 * * *", payload_kind: "systemEvent" },
    ]);
    // Both kept under migrated/<run>/: the corrupt store is never deleted.
    expect(fs.existsSync(path.join(stateDir, "migrated", run.runId, "cron/jobs.json"))).toBe(true);
    expect(fs.existsSync(path.join(stateDir, "cron/jobs.json"))).toBe(false);
    expect((await migrate(paths)).run.sources).toEqual([]);
  });

  it("with a store that parses, reads nothing from the backup and retires it with the store", async () => {
    const { paths, stateDir } = makeTempState("migration/cron-corrupt-store");
    fs.writeFileSync(path.join(stateDir, "cron/jobs.json"), JSON.stringify({ version: 1, jobs: [{ id: "only-live", schedule: { kind: "every", everyMs: 60000 }, payload: { kind: "systemEvent", text: "x" } }] }));
    const { run } = await migrate(paths);
    expect(run.status).toBe("completed");
    expect(run.sources.map((o) => [o.relativePath, o.status, o.rows, o.retired])).toEqual([
      ["cron/jobs.json", "imported", { cron_jobs: 1 }, "moved"],
      ["cron/jobs.json.bak", "imported", { cron_jobs: 0 }, "moved"],
    ]);
    expect(rows(paths.globalDbPath, "SELECT job_id FROM cron_jobs")).toEqual([{ job_id: "only-live" }]);
  });

  it("with both corrupt, the store fails loudly and the backup is left in place for a human", async () => {
    const { paths, stateDir } = makeTempState("migration/cron-corrupt-store");
    fs.writeFileSync(path.join(stateDir, "cron/jobs.json.bak"), "{ not json");
    const plan = await planMigration({ paths });
    expect(plan.sources.map((s) => [s.relativePath, s.action, s.attention ?? false])).toEqual([
      ["cron/jobs.json", "import", false],
      ["cron/jobs.json.bak", "skip", true],
    ]);
    expect(plan.sources[1]!.reason).toMatch(/neither cron\/jobs\.json nor this backup of it parses/);
    const { run } = await migrate(paths);
    expect(run.sources.find((o) => o.relativePath === "cron/jobs.json")).toMatchObject({ status: "failed", reason: expect.stringMatching(/invalid JSON/) });
    expect(fs.existsSync(path.join(stateDir, "cron/jobs.json.bak"))).toBe(true);
    expect(rows(paths.globalDbPath, "SELECT job_id FROM cron_jobs")).toEqual([]);
  });

  it("a backup without its store is left in place, not imported", async () => {
    const { paths, stateDir } = makeTempState("migration/cron-corrupt-store");
    fs.rmSync(path.join(stateDir, "cron/jobs.json"));
    const plan = await planMigration({ paths });
    expect(plan.sources.map((s) => [s.relativePath, s.action, s.reason])).toEqual([["cron/jobs.json.bak", "skip", "backup of a cron store that is not there: not imported, left in place"]]);
  });
});
