// inspect: every database with sizes, schema, row counts, integrity, leases and last runs; read-only.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { inspectState } from "../../src/inspect/inspect-state.js";
import { GATEWAY_SCOPE } from "../../src/state/lease.js";
import { openAgentDatabase, openGlobalDatabase } from "../../src/state/state-databases.js";
import { insertLease } from "../helpers/leases.js";
import { makeTempState, runInProcess, snapshotTree } from "../helpers/temp-state.js";

describe("inspect", () => {
  it("lists the global and agent databases with row counts, runs and leases", async () => {
    const { paths, env, stateDir } = makeTempState();
    openAgentDatabase(paths, "main", { mode: "write", create: true }).close();
    openAgentDatabase(paths, "ops", { mode: "write", create: true }).close();
    const g = openGlobalDatabase(paths, { mode: "write" });
    g.run(g.q.insertInto("migration_runs").values({ id: "run-1", started_at: 1000, finished_at: 2000, status: "completed", report_json: "{}" }));
    g.run(g.q.insertInto("backup_runs").values({ id: "b-1", created_at: 3000, archive_path: "/x.tar.gz", status: "completed", manifest_json: "{}" }));
    insertLease(g, GATEWAY_SCOPE, process.pid, Date.now() + 60_000);
    g.close();
    const before = snapshotTree(stateDir);

    const result = inspectState({ paths, check: true });
    expect(result.databases.map((d) => [d.role, d.agentId ?? null, d.status, d.integrity])).toEqual([
      ["global", null, "ok", "ok"],
      ["agent", "main", "ok", "ok"],
      ["agent", "ops", "ok", "ok"],
    ]);
    // Created here in the design document's format (the importers' staging format): ok, and named with its upgrade.
    expect(result.databases.map((d) => [d.formatStatus, d.upgradeWith])).toEqual(Array(3).fill(["upgradable", "openclaw-state doctor --fix"]));
    expect(result.databases[0]!.tables).toMatchObject({ agent_databases: 2, migration_runs: 1, backup_runs: 1, state_leases: 1 });
    expect(result.databases[1]!.tables.sessions).toBe(0);
    expect(result.lastMigrationRuns[0]).toMatchObject({ id: "run-1", status: "completed" });
    expect(result.lastBackupRuns[0]).toMatchObject({ id: "b-1", archivePath: "/x.tar.gz" });
    expect(result.leases[0]).toMatchObject({ scope: GATEWAY_SCOPE, live: true });

    const human = await runInProcess(["inspect"], env);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/agent ops: .*openclaw-agent\.sqlite/);
    expect(human.stdout).toMatch(/Leases: gateway_locks by the gateway/);
    expect(human.stdout).toMatch(/Last migration: run-1 completed/);
    expect(human.stdout).toContain("format openclaw-state 0.1 (design-document agent format v1): `openclaw-state doctor --fix` upgrades it to OpenClaw 2026.9.6's format");
    expect(snapshotTree(stateDir)).toEqual(before);
  });

  it("skips integrity checks unless --check and reports unopenable files with exit 1", async () => {
    const { paths, env } = makeTempState();
    openGlobalDatabase(paths, { mode: "write", create: true }).close();
    expect(inspectState({ paths }).databases[0]!.integrity).toBe("not-checked");
    const { writeFileSync } = await import("node:fs");
    writeFileSync(paths.globalDbPath, "not sqlite".repeat(50));
    const run = await runInProcess(["inspect", "--json"], env);
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout).databases[0].status).toBe("unopenable");
  });
});

describe("inspect lists legacy state left behind", () => {
  it("counts sources waiting for doctor --fix and names each file that will not be imported (human and --json), read-only", async () => {
    const { env, stateDir } = makeTempState("migration/simple");
    fs.writeFileSync(path.join(stateDir, "device-pair-notify.json"), "{}");
    fs.mkdirSync(path.join(stateDir, "telegram"));
    fs.writeFileSync(path.join(stateDir, "telegram", "update-offset-default.json"), "{}");
    const before = snapshotTree(stateDir);
    const human = await runInProcess(["inspect"], env);
    expect(human.stdout).toMatch(/Legacy sources: 3 waiting for `openclaw-state doctor --fix`/);
    expect(human.stdout).toMatch(/! core — core legacy state this tool does not import: 1 file\(s\)\n\s+device-pair-notify\.json \(2 B\) — → plugin_state_entries/);
    expect(human.stdout).toMatch(/! plugin — owned by a plugin's own migration: 1 file\(s\)\n\s+telegram\/ \(1 file\(s\)\) — Telegram/);
    const json = JSON.parse((await runInProcess(["inspect", "--json"], env)).stdout);
    expect(json.legacy.sources).toBe(3);
    expect(json.legacy.inventory.entries.map((e: { relativePath: string; class: string }) => [e.relativePath, e.class])).toEqual([
      ["device-pair-notify.json", "core"],
      ["telegram", "plugin"],
    ]);
    expect(snapshotTree(stateDir)).toEqual(before);
  });
});
