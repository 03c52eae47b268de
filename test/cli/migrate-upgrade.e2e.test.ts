// The real binary: `migrate upgrade` turns this tool's design-v1 output into OpenClaw's current format, behind a verified backup, keeping the old files.
import { spawnSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { migrate } from "../helpers/migration.js";
import { fixturesDir as repoFixtures, makeTempDir, makeTempState, runBin, snapshotTree } from "../helpers/temp-state.js";

const sha = (file: string): string => crypto.createHash("sha256").update(fs.readFileSync(file)).digest("hex");

/** sqlite3 as an independent reader (one value). */
function sqlite(file: string, sql: string): string {
  const r = spawnSync("sqlite3", [file, sql], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`sqlite3 ${file}: ${r.stderr}`);
  return r.stdout.trim();
}

/** Rows per table, read with sqlite3. */
function tableCounts(file: string): Record<string, number> {
  const tables = sqlite(file, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").split("\n");
  return Object.fromEntries(tables.map((t) => [t, Number(sqlite(file, `SELECT count(*) FROM "${t}"`))]));
}

interface Listed {
  sessions: Array<{ key: string; sessionId: string }>;
}

describe("migrate upgrade", () => {
  it("dry run, consent, upgrade with a verified backup and kept files, then nothing to do", async () => {
    const state = makeTempState("legacy-state");
    const backups = makeTempDir("ocs-upgrade-backups-");
    await migrate(state.paths); // what an earlier openclaw-state's doctor --fix left: the importers' design-v1 state
    const globalDb = path.join(state.stateDir, "state", "openclaw.sqlite");
    const agentDb = path.join(state.stateDir, "agents", "main", "agent", "openclaw-agent.sqlite");
    const before = { global: tableCounts(globalDb), agent: sha(agentDb) };
    const listedBefore = JSON.parse((await runBin(["sessions", "list", "--all-agents", "--json"], state.env)).stdout) as Listed;
    expect(listedBefore.sessions.length).toBeGreaterThan(0);

    const tree = snapshotTree(state.stateDir);
    const dry = await runBin(["migrate", "upgrade", "--dry-run", "--json"], state.env);
    expect(dry.code).toBe(0);
    const planned = JSON.parse(dry.stdout) as { ok: boolean; status: string; alsoCreates: string[]; plan: Array<{ role: string; action: string; writtenBy: string }> };
    expect(planned).toMatchObject({ ok: true, status: "planned" });
    expect(planned.alsoCreates).toEqual([path.join(state.stateDir, "agents", "main", "agent", "models.json")]);
    expect(planned.plan.map((p) => [p.role, p.action])).toEqual([["global", "upgrade"], ["agent", "upgrade"]]);
    expect(planned.plan[0]!.writtenBy).toMatch(/design-document global format v1/);
    expect(snapshotTree(state.stateDir)).toEqual(tree);

    const refused = await runBin(["migrate", "upgrade"], state.env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/--yes/);
    expect(snapshotTree(state.stateDir)).toEqual(tree);

    const run = await runBin(["migrate", "upgrade", "--yes", "--backup-dir", backups, "--json"], state.env);
    expect(run.code, run.stderr).toBe(0);
    const done = JSON.parse(run.stdout) as { ok: boolean; status: string; backupPath: string; keptDir: string; restoredFiles: string[]; databases: Array<{ role: string; keptAt: string; written: Record<string, number> }> };
    expect(done).toMatchObject({ ok: true, status: "completed" });
    expect(fs.existsSync(done.backupPath)).toBe(true);
    expect((await runBin(["backup", "verify", done.backupPath], state.env)).code).toBe(0);

    // The new files are OpenClaw's format; the old ones are kept byte for byte under migrated/.
    expect(sqlite(globalDb, "PRAGMA user_version")).toBe("18");
    expect(sqlite(agentDb, "PRAGMA user_version")).toBe("23");
    expect(sqlite(agentDb, "SELECT count(*) FROM session_nodes")).toBe(String(listedBefore.sessions.length));
    const kept = Object.fromEntries(done.databases.map((d) => [d.role, d.keptAt]));
    expect(kept.global!.startsWith(path.join(state.stateDir, "migrated", "format-upgrade-"))).toBe(true);
    // The global file took the lease row (gone again) and the backup's own backup_runs row before it was moved.
    expect(tableCounts(kept.global!)).toEqual({ ...before.global, backup_runs: before.global.backup_runs! + 1 });
    expect(sqlite(kept.global!, "PRAGMA user_version")).toBe("1");
    expect(sha(kept.agent!)).toBe(before.agent);
    for (const side of ["-wal", "-shm"]) expect(fs.existsSync(`${globalDb}${side}`) && fs.statSync(`${globalDb}${side}`).size > 0).toBe(false);

    // OpenClaw reads the model catalog as a file: the one our doctor retired into a row is written back (0600).
    const catalog = path.join(state.stateDir, "agents", "main", "agent", "models.json");
    expect(done.restoredFiles).toEqual([catalog]);
    expect(JSON.parse(fs.readFileSync(catalog, "utf8"))).toEqual({ providers: { anthropic: { models: ["claude-sonnet-4"] } } });
    expect(fs.statSync(catalog).mode & 0o777).toBe(0o600);

    // Every session is still listed, now read from OpenClaw's tables.
    const listedAfter = JSON.parse((await runBin(["sessions", "list", "--all-agents", "--json"], state.env)).stdout) as Listed;
    expect(listedAfter.sessions.map((s) => [s.key, s.sessionId]).sort()).toEqual(listedBefore.sessions.map((s) => [s.key, s.sessionId]).sort());

    const again = await runBin(["migrate", "upgrade", "--yes", "--json"], state.env);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ ok: true, status: "nothing-to-do" });
  });

  it("creates the agent database OpenClaw reads a non-main agent's auth from, registers it, and leaves no sidecars", async () => {
    const state = makeTempState("migration/auth");
    await migrate(state.paths); // what an earlier openclaw-state's doctor --fix left: the importers' design-v1 state
    const workDb = path.join(state.stateDir, "agents", "work", "agent", "openclaw-agent.sqlite");
    expect(fs.existsSync(workDb)).toBe(false);
    const dry = await runBin(["migrate", "upgrade", "--dry-run", "--json"], state.env);
    expect((JSON.parse(dry.stdout) as { alsoCreates: string[] }).alsoCreates).toContain(workDb);
    expect(fs.existsSync(workDb)).toBe(false);
    const run = await runBin(["migrate", "upgrade", "--yes", "--no-backup", "--json"], state.env);
    expect(run.code, run.stderr).toBe(0);
    const done = JSON.parse(run.stdout) as { databases: Array<{ role: string; agentId?: string; keptAt: string | null; notes: Array<{ code: string }> }>; warnings: string[] };
    const work = done.databases.find((d) => d.agentId === "work");
    expect(work).toMatchObject({ role: "agent", keptAt: null });
    expect(work!.notes.map((n) => n.code)).toContain("agent.created-for-auth");
    expect(done.warnings.join("\n")).toMatch(/--no-backup/);
    expect(sqlite(workDb, "PRAGMA user_version")).toBe("23");
    expect(sqlite(workDb, "SELECT store_key FROM auth_profile_store")).toBe("primary");
    const globalDb = path.join(state.stateDir, "state", "openclaw.sqlite");
    expect(sqlite(globalDb, "SELECT agent_id || '|' || path || '|' || schema_version FROM agent_databases WHERE agent_id = 'work'")).toBe("work|agents/work/agent/openclaw-agent.sqlite|23");
    const leftovers = fs.readdirSync(path.dirname(globalDb)).filter((f) => f !== "openclaw.sqlite");
    expect(leftovers).toEqual([]);
  });

  it("a state with one database already in another format is refused whole: exit 1, the reason, nothing changed", async () => {
    const state = makeTempState("legacy-state");
    await migrate(state.paths); // what an earlier openclaw-state's doctor --fix left: the importers' design-v1 state
    // An agent DB in OpenClaw 2026.6.x's v1 beside our design-v1 global DB.
    const other = path.join(state.stateDir, "agents", "ops", "agent");
    fs.mkdirSync(other, { recursive: true, mode: 0o700 });
    fs.copyFileSync(path.join(repoFixtures, "openclaw-2026.6.33", "legacy-state-migrated", "agents", "main", "agent", "openclaw-agent.sqlite"), path.join(other, "openclaw-agent.sqlite"));
    const tree = snapshotTree(state.stateDir);
    const run = await runBin(["migrate", "upgrade", "--yes", "--json"], state.env);
    expect(run.code).toBe(1);
    const out = JSON.parse(run.stdout) as { ok: boolean; error: { code: string; message: string } };
    expect(out.ok).toBe(false);
    expect(out.error.code).toBe("upgrade_blocked");
    expect(out.error.message).toMatch(/OpenClaw 2026\.6\.33 \(agent format v1\).*openclaw doctor --fix.*nothing was changed/s);
    expect(snapshotTree(state.stateDir)).toEqual(tree);
  });
});
