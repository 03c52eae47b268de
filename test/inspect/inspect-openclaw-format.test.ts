// inspect on databases a released (or newer) OpenClaw wrote: format named, every table counted, nothing else read.
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { inspectState } from "../../src/inspect/inspect-state.js";
import { agentDbPath } from "../../src/state/paths.js";
import { makeTempState, runInProcess, snapshotTree } from "../helpers/temp-state.js";

function counts(file: string): Record<string, number> {
  const db = new Database(file, { readonly: true });
  try {
    const names = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as Array<{ name: string }>).map((r) => r.name);
    return Object.fromEntries(names.map((n) => [n, (db.prepare(`SELECT count(*) AS n FROM "${n}"`).get() as { n: number }).n]));
  } finally {
    db.close();
  }
}

describe("inspect on OpenClaw-format databases", () => {
  it("OpenClaw 2026.9.6 (the format this tool writes): status ok, format current, row counts, registry and sessions; read-only", async () => {
    const { paths, env, stateDir } = makeTempState("openclaw-2026.9.6/legacy-state-migrated");
    const before = snapshotTree(stateDir);
    const result = inspectState({ paths });
    const [global, agent] = result.databases;
    expect(global).toMatchObject({ role: "global", status: "ok", formatStatus: "current", upgradeWith: null, schemaVersion: 18, format: { id: "openclaw", current: true, writtenBy: "OpenClaw 2026.9.6 (global format v18)" } });
    expect(agent).toMatchObject({ role: "agent", agentId: "main", status: "ok", formatStatus: "current", upgradeWith: null, schemaVersion: 23 });
    expect(global!.message).toBeUndefined();
    expect(global!.tables).toEqual(counts(paths.globalDbPath));
    expect(agent!.tables).toEqual(counts(agentDbPath(paths, "main")));
    expect(Object.values(agent!.tables).some((n) => n > 0)).toBe(true);
    // The sessions summary reads the same projection `sessions list` does: 4 keys, one window each, 12 events.
    expect(agent!.sessions).toMatchObject({ sessionCount: 4, transcriptEvents: 12, newest: { key: "agent:main:recovered:s-lost", sessionId: "s-lost" }, oldest: { key: "agent:main:+15550002", sessionId: "s-root-dm" } });
    expect(agent!.sessions!.transcriptBytes).toBeGreaterThan(0);
    expect(result.legacy?.waitFor).toBeUndefined();

    const human = await runInProcess(["inspect", "--verbose"], env);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain("format OpenClaw 2026.9.6 (global format v18): current (the format openclaw-state writes)");
    expect(human.stdout).toContain("format OpenClaw 2026.9.6 (agent format v23): current (the format openclaw-state writes)");
    expect(human.stdout).not.toMatch(/foreign|row counts only|written by/);
    expect(human.stdout).toMatch(/^ {2}sessions 4, transcripts 12 event\(s\)/m);
    expect(human.stdout).toMatch(/^ {2}session_nodes +4$/m);
    expect(human.stderr).toBe("");

    const json = await runInProcess(["inspect", "--json"], env);
    expect(json.code).toBe(0);
    const doc = JSON.parse(json.stdout) as { databases: Array<{ status: string; formatStatus: string; format: { current: boolean } }> };
    expect(doc.databases.map((d) => [d.status, d.formatStatus, d.format.current])).toEqual([["ok", "current", true], ["ok", "current", true]]);
    expect(snapshotTree(stateDir)).toEqual(before);
  });

  it("after our own `doctor --fix` of a legacy tree (which ends in 9.6's format): every database current, none foreign", async () => {
    const { paths, env } = makeTempState("legacy-state");
    const fix = await runInProcess(["doctor", "--fix", "--yes"], env);
    expect(fix.code).toBe(0);
    const result = inspectState({ paths, check: true });
    expect(result.databases.length).toBeGreaterThan(1);
    for (const d of result.databases) {
      expect([d.role, d.agentId, d.status, d.formatStatus, d.integrity, d.format?.current]).toEqual([d.role, d.agentId, "ok", "current", "ok", true]);
      expect(d.schemaVersion).toBe(d.role === "global" ? 18 : 23);
      if (d.role === "agent") expect(d.sessions).toBeDefined();
    }
    expect(result.lastMigrationRuns.length).toBeGreaterThan(0);
    const human = await runInProcess(["inspect"], env);
    expect(human.code).toBe(0);
    expect(human.stdout).not.toMatch(/foreign|row counts only/);
    expect(human.stdout.match(/: current \(the format openclaw-state writes\)$/gm)?.length).toBe(result.databases.length);
    const json = JSON.parse((await runInProcess(["inspect", "--json"], env)).stdout) as { databases: Array<{ status: string; formatStatus: string }> };
    expect(new Set(json.databases.map((d) => `${d.status}/${d.formatStatus}`))).toEqual(new Set(["ok/current"]));
  });

  it("the registry of a current-format global DB names an agent DB outside agents/: found, counted, current", async () => {
    const { paths } = makeTempState("openclaw-2026.9.6/legacy-state-migrated");
    const elsewhere = path.join(paths.stateDir, "elsewhere", "openclaw-agent.sqlite");
    fs.mkdirSync(path.dirname(elsewhere));
    fs.copyFileSync(agentDbPath(paths, "main"), elsewhere);
    const db = new Database(paths.globalDbPath);
    const cols = (db.prepare("SELECT name FROM pragma_table_info('agent_databases')").all() as Array<{ name: string }>).map((c) => c.name);
    const row = db.prepare("SELECT * FROM agent_databases WHERE agent_id = 'main'").get() as Record<string, unknown>;
    db.prepare(`INSERT INTO agent_databases (${cols.join(", ")}) VALUES (${cols.map(() => "?").join(", ")})`).run(...cols.map((c) => (c === "agent_id" ? "ops" : c === "path" ? "elsewhere/openclaw-agent.sqlite" : row[c])));
    db.close();
    const result = inspectState({ paths });
    const ops = result.databases.find((d) => d.agentId === "ops");
    expect(ops).toMatchObject({ path: elsewhere, status: "ok", formatStatus: "current" });
    expect(ops!.tables).toEqual(counts(elsewhere));
  });

  it("OpenClaw 2026.6.33: its session files are counted as waiting for `openclaw doctor --fix`; models.json is current", async () => {
    const { paths, env } = makeTempState("openclaw-2026.6.33/legacy-state-migrated");
    const result = inspectState({ paths });
    expect(result.databases.map((d) => [d.status, d.format?.id, d.formatStatus, d.upgradeWith, Object.keys(d.tables).length > 0])).toEqual([
      ["foreign", "openclaw-v1", "older-openclaw", "openclaw doctor --fix", true],
      ["foreign", "openclaw-v1", "older-openclaw", "openclaw doctor --fix", true],
    ]);
    expect(result.databases[1]!.tables.auth_profile_store).toBe(1);
    expect(result.legacy?.sources).toBe(5);
    expect(result.legacy?.waitFor).toMatch(/OpenClaw 2026\.6\.33 .*run `openclaw doctor --fix`/);
    expect(result.legacy?.inventory.current.find((e) => e.relativePath === "agents/main/agent/models.json")?.owner).toBe("OpenClaw");
    const human = await runInProcess(["inspect"], env);
    expect(human.stdout).toMatch(/Legacy sources: 5 not imported here: .*`openclaw doctor --fix`/);
    expect(human.stdout).toContain("written by OpenClaw 2026.6.33 (agent format v1): row counts only; `openclaw doctor --fix` upgrades it to OpenClaw 2026.9.6's format");
  });

  it("a newer OpenClaw's database: too-new, still counted and attributed, exit 1 (text and --json)", async () => {
    const { paths, env } = makeTempState("openclaw-2026.9.6/legacy-state-migrated");
    const db = new Database(paths.globalDbPath);
    db.pragma("user_version = 99");
    db.close();
    const result = inspectState({ paths });
    expect(result.databases[0]).toMatchObject({ status: "too-new", formatStatus: "newer", upgradeWith: null, format: { id: "openclaw-newer", current: false } });
    // The agent DB beside it is still the current format.
    expect(result.databases[1]).toMatchObject({ status: "ok", formatStatus: "current" });
    expect(result.databases[0]!.tables).toEqual(counts(paths.globalDbPath));
    const human = await runInProcess(["inspect"], env);
    expect(human.code).toBe(1);
    expect(human.stdout + human.stderr).toMatch(/too-new: .*newer OpenClaw than 2026\.9\.6/);
    expect(human.stdout).not.toContain("format OpenClaw 2026.9.6 (global format v18)");
    const json = await runInProcess(["inspect", "--json"], env);
    expect(json.code).toBe(1);
    const doc = JSON.parse(json.stdout) as { databases: Array<{ status: string; formatStatus: string; message?: string }> };
    expect(doc.databases[0]).toMatchObject({ status: "too-new", formatStatus: "newer", message: expect.stringMatching(/written by a newer OpenClaw than 2026\.9\.6/) });
    expect(fs.existsSync(path.join(paths.stateDir, "state", "openclaw.sqlite-wal"))).toBe(false);
  });
});
