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
  it("OpenClaw 2026.9.6: status foreign, format named, row counts of every table; read-only", async () => {
    const { paths, env, stateDir } = makeTempState("openclaw-2026.9.6/legacy-state-migrated");
    const before = snapshotTree(stateDir);
    const result = inspectState({ paths });
    const [global, agent] = result.databases;
    expect(global).toMatchObject({ role: "global", status: "foreign", schemaVersion: 18, format: { id: "openclaw", current: true, writtenBy: "OpenClaw 2026.9.6 (global format v18)" } });
    expect(agent).toMatchObject({ role: "agent", agentId: "main", status: "foreign", schemaVersion: 23 });
    expect(global!.tables).toEqual(counts(paths.globalDbPath));
    expect(agent!.tables).toEqual(counts(agentDbPath(paths, "main")));
    expect(Object.values(agent!.tables).some((n) => n > 0)).toBe(true);
    expect(agent!.sessions).toBeUndefined();
    expect(result.legacy?.waitFor).toBeUndefined();

    const human = await runInProcess(["inspect", "--verbose"], env);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain("written by OpenClaw 2026.9.6 (agent format v23): row counts only");
    expect(human.stdout).toMatch(/^ {2}session_nodes +\d+$/m);
    expect(snapshotTree(stateDir)).toEqual(before);
  });

  it("OpenClaw 2026.6.33: its session files are counted as waiting for `openclaw doctor --fix`; models.json is current", async () => {
    const { paths, env } = makeTempState("openclaw-2026.6.33/legacy-state-migrated");
    const result = inspectState({ paths });
    expect(result.databases.map((d) => [d.status, d.format?.id, Object.keys(d.tables).length > 0])).toEqual([["foreign", "openclaw-v1", true], ["foreign", "openclaw-v1", true]]);
    expect(result.databases[1]!.tables.auth_profile_store).toBe(1);
    expect(result.legacy?.sources).toBe(5);
    expect(result.legacy?.waitFor).toMatch(/OpenClaw 2026\.6\.33 .*run `openclaw doctor --fix`/);
    expect(result.legacy?.inventory.current.find((e) => e.relativePath === "agents/main/agent/models.json")?.owner).toBe("OpenClaw");
    const human = await runInProcess(["inspect"], env);
    expect(human.stdout).toMatch(/Legacy sources: 5 not imported here: .*`openclaw doctor --fix`/);
  });

  it("a newer OpenClaw's database: too-new, still counted, exit 1", async () => {
    const { paths, env } = makeTempState("openclaw-2026.9.6/legacy-state-migrated");
    const db = new Database(paths.globalDbPath);
    db.pragma("user_version = 99");
    db.close();
    const result = inspectState({ paths });
    expect(result.databases[0]).toMatchObject({ status: "too-new", format: { id: "openclaw-newer" } });
    expect(result.databases[0]!.tables).toEqual(counts(paths.globalDbPath));
    const human = await runInProcess(["inspect"], env);
    expect(human.code).toBe(1);
    expect(human.stdout + human.stderr).toMatch(/too-new: .*newer OpenClaw than 2026\.9\.6/);
    expect(fs.existsSync(path.join(paths.stateDir, "state", "openclaw.sqlite-wal"))).toBe(false);
  });
});
