// The apply pipeline (SPEC §5): idempotent re-runs, changed sources, crash between commit and retirement, layouts.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { planMigration } from "../../src/migration/plan-migration.js";
import { openGlobalDatabase } from "../../src/state/state-databases.js";
import { makeTempState, snapshotTree } from "../helpers/temp-state.js";
import { agentDbFile, dumpState, fakeBackup, migrate, rows } from "../helpers/migration.js";

type Ledger = { source_path: string; status: string; removed_source: number; source_record_count: number; last_run_id: string };

/** Puts a retired file back where it was (its now-empty directory was removed by the run). */
function unretire(o: { retiredTo?: string; path: string }): void {
  fs.mkdirSync(path.dirname(o.path), { recursive: true });
  fs.renameSync(o.retiredTo!, o.path);
}

function ledger(paths: { globalDbPath: string }): Ledger[] {
  return rows<Ledger>(paths.globalDbPath, "SELECT source_path, status, removed_source, source_record_count, last_run_id FROM migration_sources ORDER BY source_path, imported_at");
}

describe("applyMigration", () => {
  it("imports, retires under migrated/<runId>/ and records the run and every source", async () => {
    const { paths, stateDir } = makeTempState("migration/simple");
    const backup = fakeBackup(path.join(stateDir, "..", "backups"));
    const { run } = await migrate(paths, { backup: true, takeBackup: backup });
    expect(run).toMatchObject({ status: "completed", backupSkipped: false, totals: { imported: 3, retired: 3, failed: 0 } });
    expect(backup.calls).toBe(1);
    expect(run.backupPath).toMatch(/fake-1\.tar\.gz$/);
    for (const o of run.sources) {
      expect(o.retiredTo).toBe(path.join(stateDir, "migrated", run.runId, o.relativePath));
      expect(fs.existsSync(o.retiredTo!)).toBe(true);
      expect(fs.existsSync(o.path)).toBe(false);
    }
    expect(fs.statSync(path.join(stateDir, "migrated", run.runId)).mode & 0o777).toBe(0o700);
    expect(ledger(paths).map((r) => [r.source_path, r.status, r.removed_source, r.source_record_count])).toEqual([
      ["agents/main/sessions/s-main.jsonl", "imported", 1, 3],
      ["agents/main/sessions/s-ops.jsonl", "imported", 1, 4],
      ["agents/main/sessions/sessions.json", "imported", 1, 2],
    ]);
    const [runRow] = rows<{ status: string; report_json: string }>(paths.globalDbPath, "SELECT status, report_json FROM migration_runs");
    const report = JSON.parse(runRow!.report_json) as Record<string, unknown>;
    expect(runRow!.status).toBe("completed");
    expect(report).toMatchObject({ kind: "legacy-state", stateDir, backupPath: run.backupPath, sources: expect.any(Array), changes: expect.any(Array), warnings: [] });
  });

  it("converges: a second run on the migrated tree changes nothing", async () => {
    const { paths } = makeTempState("migration/simple");
    await migrate(paths);
    const before = dumpState(paths);
    const plan = await planMigration({ paths });
    expect(plan.pending).toBe(false);
    const { run } = await migrate(paths);
    expect(run.sources).toEqual([]);
    expect(dumpState(paths)).toEqual(before);
  });

  it("finishes a crash between commit and retirement: the unchanged source is a no-op import that is still retired", async () => {
    const { paths, stateDir } = makeTempState("migration/simple");
    const first = await migrate(paths);
    const dump = dumpState(paths);
    // The state a kill -9 after commit (and after the ledger's retirement note) but before the rename leaves.
    for (const o of first.run.sources) unretire(o);
    const plan = await planMigration({ paths });
    expect(plan.sources.map((s) => s.action)).toEqual(["already-imported", "already-imported", "already-imported"]);
    const { run } = await migrate(paths);
    expect(run.sources.map((o) => [o.status, o.retired])).toEqual(Array(3).fill(["already-imported", "moved"]));
    expect(run.totals).toMatchObject({ imported: 0, alreadyImported: 3, retired: 3 });
    for (const o of run.sources) expect(o.retiredTo).toBe(path.join(stateDir, "migrated", run.runId, o.relativePath));
    expect(dumpState(paths)).toEqual(dump);
    expect(ledger(paths).every((r) => r.last_run_id === run.runId && r.removed_source === 1)).toBe(true);
  });

  it("re-imports an already-imported source whose rows are gone from the database", async () => {
    const { paths } = makeTempState("migration/simple");
    const first = await migrate(paths);
    for (const o of first.run.sources) unretire(o);
    const db = agentDbFile(paths);
    const Database = (await import("better-sqlite3")).default;
    const raw = new Database(db);
    raw.prepare("DELETE FROM transcript_events WHERE session_id = 's-ops'").run();
    raw.close();
    const { run } = await migrate(paths);
    const ops = run.sources.find((o) => o.relativePath.endsWith("s-ops.jsonl"))!;
    expect(ops).toMatchObject({ status: "imported", retired: "moved" });
    expect(ops.notes.join()).toMatch(/the ledger said imported, but .*expected 4 event/);
    expect(rows(db, "SELECT count(*) AS n FROM transcript_events WHERE session_id = 's-ops'")).toEqual([{ n: 4 }]);
  });

  it("re-imports a source that changed since its import, by upsert, without duplicates", async () => {
    const { paths, stateDir } = makeTempState("migration/simple");
    const first = await migrate(paths);
    const retired = first.run.sources.find((o) => o.relativePath.endsWith("s-main.jsonl"))!;
    const original = fs.readFileSync(retired.retiredTo!, "utf8");
    fs.mkdirSync(path.dirname(retired.path), { recursive: true });
    fs.writeFileSync(retired.path, `${original}{"type":"message","id":"e3","parentId":"e2","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"user","content":"one more"}}\n`);
    const plan = await planMigration({ paths });
    expect(plan.sources).toHaveLength(1);
    expect(plan.sources[0]).toMatchObject({ action: "changed-since-import", reason: expect.stringMatching(/changed since it was imported/) });
    const { run } = await migrate(paths);
    expect(run.sources[0]).toMatchObject({ action: "changed-since-import", status: "imported", retired: "moved" });
    const db = agentDbFile(paths);
    expect(rows(db, "SELECT seq FROM transcript_events WHERE session_id = 's-main' ORDER BY seq")).toEqual([0, 1, 2, 3].map((seq) => ({ seq })));
    expect(rows(db, "SELECT event_id FROM transcript_event_identities WHERE session_id = 's-main' ORDER BY seq")).toEqual(["e1", "e2", "e3"].map((event_id) => ({ event_id })));
    expect(ledger(paths).filter((r) => r.source_path.endsWith("s-main.jsonl")).map((r) => r.source_record_count)).toEqual([3, 4]);
    expect(fs.existsSync(path.join(stateDir, "agents/main/sessions/s-main.jsonl"))).toBe(false);
  });

  it("deletes sources with removeSources and records removed_source", async () => {
    const { paths, stateDir } = makeTempState("migration/simple");
    const { run } = await migrate(paths, { removeSources: true });
    expect(run.sources.map((o) => o.retired)).toEqual(["deleted", "deleted", "deleted"]);
    expect(fs.existsSync(path.join(stateDir, "migrated"))).toBe(false);
    expect(fs.existsSync(path.join(stateDir, "agents/main/sessions"))).toBe(false);
    expect(ledger(paths).every((r) => r.removed_source === 1)).toBe(true);
  });

  it("fails the run, imports nothing and keeps every source when the backup fails", async () => {
    const { paths, stateDir } = makeTempState("migration/simple");
    const before = snapshotTree(path.join(stateDir, "agents"));
    const { run } = await migrate(paths, { backup: true, takeBackup: async () => Promise.reject(new Error("disk full")) });
    expect(run).toMatchObject({ status: "failed", backupPath: null, sources: [] });
    expect(run.error).toMatch(/pre-migration backup failed \(disk full\); nothing was imported/);
    expect(snapshotTree(path.join(stateDir, "agents"))).toEqual(before);
    expect(rows(paths.globalDbPath, "SELECT status FROM migration_runs")).toEqual([{ status: "failed" }]);
  });

  it("re-plans under the lease when the tree changed since the plan and says so", async () => {
    const { paths, stateDir } = makeTempState("migration/simple");
    const plan = await planMigration({ paths });
    fs.appendFileSync(path.join(stateDir, "agents/main/sessions/s-main.jsonl"), '{"type":"message","id":"e9","parentId":"e2","message":{"role":"user","content":"late"}}\n');
    const global = openGlobalDatabase(paths, { mode: "write", create: true });
    const { applyMigration } = await import("../../src/migration/apply-migration.js");
    const shown = plan.fingerprint;
    const run = await applyMigration({ paths, global, plan, backup: false });
    global.close();
    expect(run.replanned).toBe(true);
    // The caller's plan object now holds the plan applied (one plan in memory, and the report shows what ran).
    expect(plan.fingerprint).not.toBe(shown);
    expect(plan.sources.find((s) => s.relativePath.endsWith("s-main.jsonl"))!.sizeBytes).toBe(fs.statSync(path.join(stateDir, "migrated", run.runId, "agents/main/sessions/s-main.jsonl")).size);
    expect(run.warnings.join()).toMatch(/changed since the plan was shown: re-planned/);
    expect(rows(agentDbFile(paths), "SELECT count(*) AS n FROM transcript_events WHERE session_id = 's-main'")).toEqual([{ n: 4 }]);
  });

  it("records the verified archive in a running row before the first import, and a killed run keeps it", async () => {
    const { paths, stateDir } = makeTempState("migration/simple");
    const backup = fakeBackup(path.join(stateDir, "..", "backups"));
    let seen: unknown[] = [];
    const { run } = await migrate(paths, {
      backup: true,
      takeBackup: backup,
      onProgress: (e) => {
        if (e.phase === "import" && seen.length === 0) seen = rows(paths.globalDbPath, "SELECT status, json_extract(report_json, '$.backupPath') AS backup FROM migration_runs");
      },
    });
    expect(seen).toEqual([{ status: "running", backup: run.backupPath }]);
    // A run killed mid-import: the next run closes it as failed, and it still names its archive.
    const global = openGlobalDatabase(paths, { mode: "write" });
    global.run(global.q.insertInto("migration_runs").values({ id: "killed-run", started_at: 2, status: "running", report_json: JSON.stringify({ kind: "legacy-state", stateDir, backupPath: "/b/pre.tar.gz", backupSkipped: false, phase: "importing" }) }));
    global.close();
    await migrate(paths);
    expect(rows(paths.globalDbPath, "SELECT status, json_extract(report_json, '$.backupPath') AS backup, json_extract(report_json, '$.interrupted') AS interrupted FROM migration_runs WHERE id = 'killed-run'")).toEqual([
      { status: "failed", backup: "/b/pre.tar.gz", interrupted: 1 },
    ]);
  });

  it("records a run that stopped before it started (the backup failed) as failed, with its error", async () => {
    const { paths } = makeTempState("migration/simple");
    const { run } = await migrate(paths, { backup: true, takeBackup: async () => { throw new Error("disk full"); } });
    expect(run.status).toBe("failed");
    expect(rows(paths.globalDbPath, "SELECT status, json_extract(report_json, '$.error') AS error FROM migration_runs")).toEqual([
      { status: "failed", error: "the pre-migration backup failed (disk full); nothing was imported" },
    ]);
  });

  it("closes a run a killed process left running", async () => {
    const { paths } = makeTempState("migration/simple");
    const global = openGlobalDatabase(paths, { mode: "write", create: true });
    global.run(global.q.insertInto("migration_runs").values({ id: "dead-run", started_at: 1, status: "running", report_json: null }));
    global.close();
    const { run } = await migrate(paths);
    expect(run.changes.join()).toMatch(/closed 1 interrupted run\(s\) \(dead-run\)/);
    expect(rows(paths.globalDbPath, "SELECT status FROM migration_runs WHERE id = 'dead-run'")).toEqual([{ status: "failed" }]);
  });
});

describe("old layouts", () => {
  it("imports the root sessions/ store for agent main, moves agent/, reports leftovers and bad agent dirs", async () => {
    const { paths, stateDir } = makeTempState("migration/old-layout");
    const plan = await planMigration({ paths });
    expect(plan.sources.map((s) => [s.relativePath, s.agentId, s.legacyRoot, s.action])).toEqual([
      ["sessions/sessions.json", "main", true, "import"],
      ["agents/main/sessions/sessions.json", "main", false, "import"],
      ["sessions/s-root.jsonl", "main", true, "import"],
    ]);
    expect(plan.leftovers.map((l) => l.pattern).sort()).toEqual(["bak", "deleted", "reset"]);
    expect(plan.layout).toEqual([expect.objectContaining({ kind: "legacy-agent-dir", action: "move", target: path.join(stateDir, "agents/main/agent") })]);
    expect(plan.notes).toEqual([expect.stringMatching(/agents\/Bad_Name\/sessions ignored/)]);

    const { run } = await migrate(paths, { backup: false });
    expect(run.status).toBe("completed");
    // auth-profiles.json and models.json moved with agent/ are imported in the same run (re-planned after the move), then retired.
    expect(fs.readdirSync(path.join(stateDir, "agents/main/agent")).sort()).toEqual(["openclaw-agent.sqlite"]);
    expect(rows(paths.globalDbPath, "SELECT catalog_key FROM agent_model_catalogs")).toEqual([{ catalog_key: "agents/main/agent" }]);
    expect(fs.existsSync(path.join(stateDir, "agent"))).toBe(false);
    const db = agentDbFile(paths);
    // Same key in both stores with the same updatedAt: the agent's own store (imported last) wins the tie.
    const [entry] = rows<{ entry_json: string }>(db, "SELECT entry_json FROM session_entries WHERE session_key = 'agent:main:main'");
    expect(JSON.parse(entry!.entry_json)).toMatchObject({ sessionId: "s-root", label: "agent store wins the tie" });
    expect(rows(db, "SELECT session_key FROM session_routes ORDER BY session_key")).toEqual([{ session_key: "agent:main:+1999" }, { session_key: "agent:main:main" }]);
    expect(rows(db, "SELECT count(*) AS n FROM transcript_events WHERE session_id = 's-root'")).toEqual([{ n: 2 }]);
    for (const l of plan.leftovers) expect(fs.existsSync(l.path)).toBe(true);
    expect(fs.existsSync(path.join(stateDir, "sessions"))).toBe(false);
  });
});

describe("the demo's legacy tree", () => {
  it("migrates every store; the old root store does not seed main when the agent's index has it", async () => {
    const { paths, stateDir } = makeTempState("legacy-state");
    const plan = await planMigration({ paths });
    expect(plan.sources.find((s) => s.relativePath === "sessions/sessions.json")!.mainKeyElsewhere).toBe(true);
    const { run } = await migrate(paths);
    // 6 session sources, cron jobs + state + 1 run log, auth profiles + auth state, the moved models.json.
    // s-lost.jsonl is an orphan transcript (no index names it): always a warning.
    expect(run).toMatchObject({ status: "warning", totals: { imported: 12, retired: 12 } });
    expect(run.sources.filter((o) => o.status === "warning").map((o) => o.relativePath)).toEqual(["agents/main/sessions/s-lost.jsonl"]);
    const main = agentDbFile(paths, "main");
    expect(rows(main, "SELECT session_key, session_id FROM session_routes ORDER BY session_key")).toEqual([
      { session_key: "agent:main:+15550002", session_id: "s-root-dm" },
      { session_key: "agent:main:main", session_id: "s-main" },
      { session_key: "agent:main:recovered:s-lost", session_id: "s-lost" },
      { session_key: "agent:main:unknown:group:ops", session_id: "s-ops" },
    ]);
    expect(rows(main, "SELECT session_id, session_key FROM sessions ORDER BY session_id")).toEqual([
      { session_id: "s-lost", session_key: "agent:main:recovered:s-lost" },
      { session_id: "s-main", session_key: "agent:main:main" },
      { session_id: "s-ops", session_key: "agent:main:unknown:group:ops" },
      { session_id: "s-root-dm", session_key: "agent:main:+15550002" },
    ]);
    expect(rows(paths.globalDbPath, "SELECT job_id, last_run_status FROM cron_jobs")).toEqual([{ job_id: "daily-brief", last_run_status: "ok" }]);
    expect(rows(paths.globalDbPath, "SELECT count(*) AS n FROM cron_run_logs")).toEqual([{ n: 2 }]);
    const [auth] = rows<{ profiles_json: string }>(paths.globalDbPath, "SELECT profiles_json FROM auth_profile_stores");
    expect(Object.keys((JSON.parse(auth!.profiles_json) as { profiles: object }).profiles).sort()).toEqual(["anthropic:default", "openai-codex:default"]);
    expect(fs.existsSync(path.join(stateDir, "agents/main/agent/models.json"))).toBe(false);
    expect(fs.existsSync(path.join(stateDir, "agents/main/sessions/s-main-old.jsonl.reset.2025-12-31T00-00-00.000Z"))).toBe(true);
  });
});

describe("per-agent failures", () => {
  it("keeps going when one agent's database cannot be opened", async () => {
    const { paths, stateDir } = makeTempState("legacy-state");
    fs.mkdirSync(path.join(stateDir, "agents/work/sessions"), { recursive: true });
    fs.cpSync(path.join(stateDir, "agents/main/sessions/s-main.jsonl"), path.join(stateDir, "agents/work/sessions/w-main.jsonl"));
    fs.writeFileSync(path.join(stateDir, "agents/work/sessions/sessions.json"), '{ "main": { "sessionId": "s-main", "updatedAt": 1 } }');
    const work = path.join(stateDir, "agents/work/agent/openclaw-agent.sqlite");
    fs.mkdirSync(path.dirname(work), { recursive: true });
    fs.writeFileSync(work, "not a database at all, just some text that is long enough to be a header".repeat(10));
    const { run } = await migrate(paths);
    expect(run.status).toBe("warning");
    const failed = run.sources.filter((o) => o.status === "failed");
    expect(failed.map((o) => o.relativePath).sort()).toEqual(["agents/work/sessions/sessions.json", "agents/work/sessions/w-main.jsonl"]);
    expect(failed[0]!.reason).toMatch(/agent database "work" \(agents\/work\/agent\/openclaw-agent.sqlite\) cannot be opened/);
    expect(run.skippedDatabases?.map((b) => b.agentId)).toEqual(["work"]);
    // 12 imported, one of them (the orphan s-lost.jsonl) with a warning.
    expect(run.sources.filter((o) => o.status === "imported" || o.status === "warning")).toHaveLength(12);
    expect(fs.existsSync(path.join(stateDir, "agents/work/sessions/w-main.jsonl"))).toBe(true);
  });
});
