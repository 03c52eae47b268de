// upgradeGlobalDb: a design-v1 global DB made by our own doctor --fix → OpenClaw's global format, read back with the sqlite3 CLI.
import { execFileSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createOpenclawDatabase } from "../../../src/state/openclaw-database.js";
import { agentAuthRows, upgradeGlobalDb } from "../../../src/state/upgrade/upgrade-global-db.js";
import { makeTempState, runInProcess, type TempState } from "../../helpers/temp-state.js";
import { stagedDbFile } from "../../helpers/migration.js";

/** An independent reader: the sqlite3 CLI, JSON mode. */
function cli<T = Record<string, unknown>>(file: string, sql: string): T[] {
  const out = execFileSync("sqlite3", ["-json", `file:${file}?mode=ro`, sql], { encoding: "utf8" }).trim();
  return out === "" ? [] : (JSON.parse(out) as T[]);
}

const sha256 = (file: string): string => crypto.createHash("sha256").update(fs.readFileSync(file)).digest("hex");

/** A state tree migrated by our doctor --fix (design-v1), and the path the upgrade writes to. */
async function designV1(fixture: string): Promise<{ state: TempState; source: string; target: string }> {
  const state = makeTempState(fixture);
  const run = await runInProcess(["doctor", "--fix", "--yes", "--no-backup"], state.env);
  expect(run.code, run.stderr).toBe(0);
  // doctor --fix ends in OpenClaw's format: the design-v1 file it imported into is kept under migrated/.
  const source = stagedDbFile(state.paths);
  return { state, source, target: path.join(state.root, "upgraded", "openclaw.sqlite") };
}

describe("upgradeGlobalDb", () => {
  it("moves cron jobs and run logs where OpenClaw 2026.9.6 reads them, and leaves the source as it was", async () => {
    const { state, source, target } = await designV1("migration/cron");
    const before = sha256(source);
    const result = upgradeGlobalDb({ source, target, stateDir: state.stateDir, now: 1_800_000_000_000 });
    expect(sha256(source)).toBe(before);
    // Closed cleanly: WAL checkpointed and truncated, nothing beside the file (checked before any reader opens it).
    expect(fs.readdirSync(path.dirname(target)).sort()).toEqual(["openclaw.sqlite"]);
    expect(cli(target, "PRAGMA user_version")).toEqual([{ user_version: 18 }]);
    expect(cli(target, "PRAGMA integrity_check")).toEqual([{ integrity_check: "ok" }]);
    const storeKey = path.join(state.stateDir, "cron", "jobs.json");
    const jobs = cli<Record<string, string | number>>(target, "SELECT * FROM cron_jobs ORDER BY sort_order");
    expect(jobs.map((j) => [j.store_key, j.job_id, j.enabled, j.payload_kind, j.sort_order])).toEqual([
      [storeKey, "daily-brief", 1, "agentTurn", 0],
      [storeKey, "every-15m", 0, "systemEvent", 1],
      [storeKey, "one-shot", 1, "systemEvent", 2],
    ]);
    const [daily, every, once] = jobs as Array<Record<string, string>>;
    // The value 9.6's own doctor wrote for this fixture (docs/openclaw-format/global-db.md §2.1).
    expect(daily!.grant_definition_revision).toBe("sha256:cD2FWd1tSstmxopH6cDOI4vSRRnC4RQ24RidbtkRAwQ");
    expect(JSON.parse(daily!.schedule_identity!)).toEqual({ version: 2, enabled: true, schedule: { kind: "cron", expr: "0 8 * * *", tz: "Europe/Lisbon", staggerMs: 30000 }, hasTrigger: false });
    expect(JSON.parse(daily!.job_json!)).toMatchObject({ id: "daily-brief", schedule: { kind: "cron", expr: "0 8 * * *" }, state: {} });
    expect(Object.keys(JSON.parse(daily!.job_json!)).at(-1)).toBe("state");
    expect(JSON.parse(every!.state_json!)).toEqual({ lastStatus: "error", lastError: "timeout", consecutiveErrors: 2, lastDeliveryError: "no route", lastRunStatus: "error" });
    expect(JSON.parse(once!.schedule_identity!).schedule).toEqual({ kind: "at", at: "2026-02-01T09:00:00.000Z" });
    // An enabled one-shot job with no state runs next at its `at` time: what 9.6's doctor writes for this fixture.
    expect(JSON.parse(once!.state_json!)).toEqual({ nextRunAtMs: Date.parse("2026-02-01T09:00:00.000Z") });
    expect(result.notes.find((n) => n.code === "global.cron.one-shot-next-run")?.message).toMatch(/^cron job one-shot: /);
    const runs = cli<Record<string, string | number | null>>(target, "SELECT task_id, runtime, source_id, status, owner_key, scope_kind, child_session_key, created_at, ended_at, detail_json FROM task_runs ORDER BY task_id");
    expect(runs.map((r) => [r.task_id, r.runtime, r.source_id, r.status, r.owner_key, r.scope_kind])).toEqual([
      ["cron-runlog-import:daily-brief:1767254400000:1", "cron", "daily-brief", "succeeded", "", "system"],
      ["cron-runlog-import:daily-brief:1767340800000:1", "cron", "daily-brief", "failed", "", "system"],
      ["cron-runlog-import:every-15m:1767341600000:1", "cron", "every-15m", "failed", "", "system"],
    ]);
    expect(JSON.parse(String(runs[0]!.detail_json))).toMatchObject({ kind: "cron-run", status: "ok", completionStatus: "succeeded", storeKey, runId: "run-1" });
    expect(result.read).toMatchObject({ cron_jobs: 3, cron_run_logs: 3 });
    expect(result.written).toMatchObject({ cron_jobs: 3, task_runs: 3 });
    expect(result.unmapped).toEqual({});
    expect(result.notes.map((n) => n.code)).toContain("global.cron.running-cleared");
    // Our ledger history is kept, with absolute paths as OpenClaw records them.
    const sources = cli<{ source_path: string; migration_kind: string }>(target, "SELECT source_path, migration_kind FROM migration_sources ORDER BY source_path");
    expect(sources.length).toBe(cli(source, "SELECT * FROM migration_sources").length);
    for (const s of sources) expect(s.source_path.startsWith(state.stateDir + path.sep)).toBe(true);
  });

  it("puts main's auth profiles in config_machine_state and hands other agents' rows to the agent upgrade", async () => {
    const { state, source, target } = await designV1("migration/auth");
    const result = upgradeGlobalDb({ source, target, stateDir: state.stateDir });
    const rows = Object.fromEntries(cli<{ state_key: string; value_json: string }>(target, "SELECT state_key, value_json FROM config_machine_state").map((r) => [r.state_key, JSON.parse(r.value_json) as Record<string, unknown>]));
    expect(rows["auth.sharedStore"]).toEqual({ location: "state-db" });
    const sourceMain = cli<{ profiles_json: string }>(source, "SELECT profiles_json FROM auth_profile_stores WHERE agent_dir LIKE '%/agents/main/agent'");
    const mainIds = Object.keys((JSON.parse(sourceMain[0]!.profiles_json) as { profiles: object }).profiles).sort();
    expect(mainIds).toContain("anthropic:default");
    expect(Object.keys((rows["authProfiles.store"] as { profiles: object }).profiles).sort()).toEqual(mainIds);
    expect(rows["authProfiles.state"]).toMatchObject({ version: 1, order: { anthropic: ["anthropic:default"] } });
    expect(result.unmapped).toMatchObject({ auth_profile_stores: 1 });
    expect(result.notes.find((n) => n.code === "global.auth.agent-db")?.message).toMatch(/agent work/);
    const work = agentAuthRows(source, "work");
    expect(work.auth_profile_store.map((r) => r.store_key)).toEqual(["primary"]);
    expect(Object.keys((JSON.parse(work.auth_profile_store[0]!.store_json) as { profiles: object }).profiles)).toEqual(["openrouter:default"]);
    expect(agentAuthRows(source, "main")).toEqual({ auth_profile_store: [], auth_profile_state: [] });
  });

  it("writes no authProfiles.store row for a store without profiles, as 9.6 writes none", async () => {
    const { state, source, target } = await designV1("migration/old-layout");
    const result = upgradeGlobalDb({ source, target, stateDir: state.stateDir });
    expect(cli(target, "SELECT state_key FROM config_machine_state ORDER BY state_key").map((r) => r.state_key)).toEqual(["auth.sharedStore"]);
    expect(result.notes.map((n) => n.code)).toContain("global.auth.empty-store");
  });

  it("puts the restart sentinel under the one key OpenClaw 2026.9.6 reads ('current', its RESTART_SENTINEL_KEY)", async () => {
    const { state, source, target } = await designV1("migration/restart-sentinel");
    upgradeGlobalDb({ source, target, stateDir: state.stateDir });
    expect(cli(source, "SELECT sentinel_key FROM gateway_restart_sentinel")).toEqual([{ sentinel_key: "default" }]);
    // A numeric threadId (2026.9.6's doctor discards such a file) is kept as the text its runtime reads.
    expect(cli(target, "SELECT sentinel_key, kind, status, thread_id, session_key FROM gateway_restart_sentinel")).toEqual([
      { sentinel_key: "current", kind: "config-apply", status: "ok", thread_id: "42", session_key: "agent:main:whatsapp:dm:+15555550123" },
    ]);
  });

  it("names sandbox registry kinds as OpenClaw 2026.9.6 reads them ('container', 'browser'; design-v1 names them after the files)", async () => {
    const { state, source, target } = await designV1("migration/sandbox-registry");
    upgradeGlobalDb({ source, target, stateDir: state.stateDir });
    const kinds = (file: string): string[] => cli<{ k: string }>(file, "SELECT registry_kind || '/' || container_name AS k FROM sandbox_registry_entries ORDER BY k").map((r) => r.k);
    expect(kinds(source)).toEqual(["browsers/openclaw-sbx-browser-main", "browsers/openclaw-sbx-browser-ops", "containers/openclaw-sbx-main", "containers/openclaw-sbx-ops"]);
    expect(kinds(target)).toEqual(["browser/openclaw-sbx-browser-main", "browser/openclaw-sbx-browser-ops", "container/openclaw-sbx-main", "container/openclaw-sbx-ops"]);
  });

  it("writes the ACPX gateway instance id as the ACPX runtime reads it ({instanceId, createdAt}), also a {version, id} row an earlier build stored", async () => {
    const { state, source, target } = await designV1("migration/acpx");
    const gateway = (file: string) => cli<{ value_json: string; created_at: number }>(file, "SELECT value_json, created_at FROM plugin_state_entries WHERE plugin_id = 'acpx' AND namespace = 'gateway-instance' AND entry_key = 'current'");
    const [staged] = gateway(source);
    expect(JSON.parse(staged!.value_json)).toEqual({ instanceId: "gw-instance-42", createdAt: staged!.created_at });
    upgradeGlobalDb({ source, target, stateDir: state.stateDir });
    expect(gateway(target)).toEqual([staged]);
    // A design-v1 file an earlier build wrote: the one shape it used is rewritten, nothing else about the row changes.
    execFileSync("sqlite3", [source, `UPDATE plugin_state_entries SET value_json = '{"version":1,"id":"gw-instance-42"}' WHERE namespace = 'gateway-instance'`]);
    const again = path.join(state.root, "upgraded-2", "openclaw.sqlite");
    const result = upgradeGlobalDb({ source, target: again, stateDir: state.stateDir });
    expect(gateway(again)).toEqual([staged]);
    expect(result.notes.map((n) => n.code)).toContain("global.acpx-gateway-instance");
    expect(cli(again, "SELECT entry_key FROM plugin_state_entries WHERE namespace = 'process-leases'")).toEqual([{ entry_key: "lease-1" }]);
  });

  it("copies the same-meaning tables of the kitchen sink and names every row it cannot map", async () => {
    const { state, source, target } = await designV1("migration/kitchen-sink");
    const result = upgradeGlobalDb({ source, target, stateDir: state.stateDir });
    for (const table of ["plugin_state_entries", "channel_pairing_allow_entries", "config_health_entries", "delivery_queue_entries", "subagent_runs", "sandbox_registry_entries", "exec_approvals_config"]) {
      const n = cli<{ n: number }>(source, `SELECT count(*) AS n FROM ${table}`)[0]!.n;
      expect(n, table).toBeGreaterThan(0);
      // A delivery entry held for review (the fixture's was queued in 2026-01, long past 72 h) stays out of OpenClaw's queue.
      const held = table === "delivery_queue_entries" ? cli<{ n: number }>(source, "SELECT count(*) AS n FROM delivery_queue_entries WHERE status = 'held'")[0]!.n : 0;
      // Config audit lines move to diagnostic_events, where OpenClaw 2026.9.6 keeps them (upgrade-global-config-audit.test.ts).
      const audit = table === "plugin_state_entries" ? cli<{ n: number }>(source, "SELECT count(*) AS n FROM plugin_state_entries WHERE plugin_id = 'core' AND namespace = 'config-audit'")[0]!.n : 0;
      expect(cli<{ n: number }>(target, `SELECT count(*) AS n FROM ${table}`)[0]!.n, table).toBe(n - held - audit);
      if (audit > 0) expect(cli<{ n: number }>(target, "SELECT count(*) AS n FROM diagnostic_events WHERE scope = 'config-audit' AND event_key LIKE 'legacy:config:%'")[0]!.n).toBe(audit);
    }
    expect(cli(source, "SELECT id, status FROM delivery_queue_entries")).toEqual([{ id: "d-1", status: "held" }]);
    // OpenClaw 2026.9.6 reads exec approvals only under config_key 'current' (design-v1 wrote 'default').
    expect(cli(source, "SELECT config_key FROM exec_approvals_config")).toEqual([{ config_key: "default" }]);
    expect(cli(target, "SELECT config_key FROM exec_approvals_config")).toEqual([{ config_key: "current" }]);
    expect(result.notes.find((n) => n.code === "global.delivery.held")?.message).toMatch(/^delivery_queue_entries: 1 entry held for review \(outbound-delivery\/d-1\)/);
    const agentDbs = cli(target, "SELECT agent_id, path, schema_version FROM agent_databases");
    expect(agentDbs).toEqual([{ agent_id: "main", path: "agents/main/agent/openclaw-agent.sqlite", schema_version: 23 }]);
    for (const [table, n] of Object.entries(result.unmapped)) {
      expect(n).toBe(cli<{ n: number }>(source, `SELECT count(*) AS n FROM ${table}`)[0]!.n);
      expect(result.notes.some((note) => note.message.startsWith(`${table}:`)), table).toBe(true);
    }
    // OpenClaw 2026.9.6 discards commitments and orphan node pairings itself; everything else has its place.
    expect(result.unmapped).toMatchObject({ commitments: 1, node_pairing_entries: 1, delivery_queue_entries: 1 });
    expect(result.unmapped.current_conversation_bindings).toBeUndefined();
    expect(result.unmapped.device_pairing_entries).toBeUndefined();
    expect(cli(target, "PRAGMA foreign_key_check")).toEqual([]);
  });

  it("keeps the ledger history of a legacy-state migration and fills a job's missing createdAtMs where OpenClaw puts it", async () => {
    const { state, source, target } = await designV1("legacy-state");
    const result = upgradeGlobalDb({ source, target, stateDir: state.stateDir });
    const [job] = cli<{ job_json: string }>(target, "SELECT job_json FROM cron_jobs WHERE job_id = 'daily-brief'");
    expect(Object.keys(JSON.parse(job!.job_json) as object).slice(-2)).toEqual(["createdAtMs", "state"]);
    expect(result.notes.map((n) => n.code)).toContain("global.cron.created-at");
    const runIds = (file: string): string[] => cli<{ id: string }>(file, "SELECT id FROM migration_runs ORDER BY id").map((r) => r.id);
    expect(runIds(target)).toEqual([...runIds(source), "state:cron-run-logs-to-task-runs:v1"].sort());
    expect(cli(target, "SELECT status FROM migration_sources WHERE status NOT IN ('imported', 'completed', 'warning')")).toEqual([]);
    expect(cli(target, "SELECT state_key FROM config_machine_state ORDER BY state_key").map((r) => r.state_key)).toEqual(["auth.sharedStore", "authProfiles.state", "authProfiles.store"]);
  });

  it("copies each run's report byte for byte (non-ASCII text included) and writes {} for a run without one", async () => {
    const { state, source, target } = await designV1("legacy-state");
    const report = JSON.stringify({ note: "kept → até já ✓", big: "x".repeat(100_000) });
    execFileSync("sqlite3", [source, `INSERT INTO migration_runs (id, started_at, finished_at, status, report_json) VALUES ('run-utf8', 1, 2, 'completed', '${report}'), ('run-null', 3, NULL, 'failed', NULL)`]);
    const result = upgradeGlobalDb({ source, target, stateDir: state.stateDir });
    const reports = (file: string): Record<string, string> =>
      Object.fromEntries(cli<{ id: string; t: string; h: string }>(file, "SELECT id, typeof(report_json) AS t, hex(report_json) AS h FROM migration_runs WHERE id <> 'state:cron-run-logs-to-task-runs:v1' ORDER BY id").map((r) => [r.id, `${r.t}:${r.h}`]));
    const before = reports(source);
    expect(before["run-null"]).toBe("null:");
    expect(reports(target)).toEqual({ ...before, "run-null": `text:${Buffer.from("{}").toString("hex").toUpperCase()}` });
    expect(cli<{ r: string }>(target, "SELECT report_json AS r FROM migration_runs WHERE id = 'run-utf8'")[0]!.r).toBe(report);
    expect(result.notes.map((n) => n.code)).toContain("global.ledger.empty-report");
  });

  it("upgrades a design-v1 file whose ledger tables are missing (nothing to copy, nothing refused)", async () => {
    const { state, source, target } = await designV1("legacy-state");
    execFileSync("sqlite3", [source, "DROP TABLE migration_sources; DROP TABLE migration_runs;"]);
    const result = upgradeGlobalDb({ source, target, stateDir: state.stateDir });
    expect(result.read.migration_runs).toBeUndefined();
    expect(cli(target, "SELECT id FROM migration_runs")).toEqual([{ id: "state:cron-run-logs-to-task-runs:v1" }]);
  });

  it("leaves a one-shot job unscheduled when it already ran successfully after its time, or is disabled", async () => {
    const at = Date.parse("2026-02-01T09:00:00.000Z");
    const cases: Array<[string, string]> = [
      [`state_json = '{"lastRunAtMs":${at + 1000},"lastRunStatus":"ok"}'`, `{"lastRunAtMs":${at + 1000},"lastRunStatus":"ok"}`],
      ["enabled = 0, state_json = NULL", "{}"],
    ];
    for (const [change, expected] of cases) {
      const { state, source, target } = await designV1("migration/cron");
      execFileSync("sqlite3", [source, `UPDATE cron_jobs SET ${change} WHERE job_id = 'one-shot'`]);
      const result = upgradeGlobalDb({ source, target, stateDir: state.stateDir });
      expect(cli(target, "SELECT state_json FROM cron_jobs WHERE job_id = 'one-shot'"), change).toEqual([{ state_json: expected }]);
      expect(result.notes.map((n) => n.code)).not.toContain("global.cron.one-shot-next-run");
    }
  });

  it("gives every exec allowlist entry without an id one, as 9.6 stores the file, and keeps the ids it has", async () => {
    const { state, source, target } = await designV1("migration/exec-approvals");
    const result = upgradeGlobalDb({ source, target, stateDir: state.stateDir });
    const [row] = cli<{ raw_json: string; allowlist_count: number }>(target, "SELECT raw_json, allowlist_count FROM exec_approvals_config WHERE config_key = 'current'");
    const agents = (JSON.parse(row!.raw_json) as { agents: Record<string, { allowlist: Array<Record<string, unknown>> }> }).agents;
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    expect(agents.main!.allowlist).toEqual([
      { id: "a1", pattern: "/usr/bin/git", lastUsedAt: 1767300000000, lastUsedCommand: "git status", lastResolvedPath: "/usr/bin/git" },
      { pattern: "/bin/ls", id: expect.stringMatching(uuid) },
    ]);
    expect(agents.ops!.allowlist).toEqual([{ pattern: "/usr/bin/kubectl", id: expect.stringMatching(uuid) }]);
    expect(agents.main!.allowlist[1]!.id).not.toBe(agents.ops!.allowlist[0]!.id);
    expect(row!.allowlist_count).toBe(3);
    expect(result.notes.find((n) => n.code === "global.exec-approvals.ids")?.message).toMatch(/^exec_approvals_config: 2 allowlist entries without an id/);
    // Derived, not drawn: the same file upgraded again gets the same ids (a re-import finds the row it wrote).
    const again = `${target}.again`;
    upgradeGlobalDb({ source, target: again, stateDir: state.stateDir });
    expect(cli<{ raw_json: string }>(again, "SELECT raw_json FROM exec_approvals_config WHERE config_key = 'current'")[0]!.raw_json).toBe(row!.raw_json);
  });

  it("refuses a file that is not design-v1 and writes nothing", () => {
    const state = makeTempState();
    const source = path.join(state.root, "current.sqlite");
    createOpenclawDatabase({ path: source, role: "global" }).close();
    const target = path.join(state.root, "out.sqlite");
    expect(() => upgradeGlobalDb({ source, target, stateDir: state.stateDir })).toThrow(/not the design-document v1/);
    expect(fs.existsSync(target)).toBe(false);
  });
});
