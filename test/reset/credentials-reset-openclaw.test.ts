// reset --scope config+creds+sessions on states a released OpenClaw wrote: 2026.9.6's format is cleared (shared store
// rows, per-agent stores with their agent DBs); 2026.6.33's and a newer format are refused with nothing removed.
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { createOpenclawDatabase } from "../../src/state/openclaw-database.js";
import { agentDbPath } from "../../src/state/paths.js";
import { makeTempState, runInProcess, snapshotTree, type TempState } from "../helpers/temp-state.js";

const V96 = "openclaw-2026.9.6/legacy-state-migrated";
const V633 = "openclaw-2026.6.33/legacy-state-migrated";
const OPS_SECRET = "sk-ops-PLANTED-agent-store-42";

function openclawState(fixture: string): TempState {
  const state = makeTempState(fixture);
  fs.rmSync(path.join(state.stateDir, "README.md"));
  fs.writeFileSync(path.join(state.stateDir, "openclaw.json"), "{}\n");
  return state;
}

function count(file: string, sql: string): number {
  const db = new Database(file, { readonly: true });
  try {
    return (db.prepare(sql).get() as { n: number }).n;
  } finally {
    db.close();
  }
}

/** A second agent as 9.6 keeps it: its own agent DB holding its auth store, registered with a relative path. */
function addOpsAgent(state: TempState): string {
  const file = agentDbPath(state.paths, "ops");
  const db = createOpenclawDatabase({ path: file, role: "agent", agentId: "ops" });
  try {
    db.prepare("INSERT INTO auth_profile_store (store_key, store_json, updated_at) VALUES ('primary', ?, 1)").run(JSON.stringify({ version: 1, profiles: { "anthropic:ops": { type: "api_key", provider: "anthropic", key: OPS_SECRET } } }));
  } finally {
    db.close();
  }
  const global = new Database(state.paths.globalDbPath);
  try {
    global.prepare("INSERT INTO agent_databases (agent_id, path, schema_version, last_seen_at, size_bytes) VALUES ('ops', 'agents/ops/agent/openclaw-agent.sqlite', 23, 1, 4096)").run();
  } finally {
    global.close();
  }
  return file;
}

function filesContaining(dir: string, needles: string[]): string[] {
  return Object.entries(snapshotTree(dir))
    .filter(([rel, e]) => e.type === "file" && needles.some((n) => fs.readFileSync(path.join(dir, rel)).toString("latin1").includes(n)))
    .map(([rel]) => rel)
    .sort();
}

describe("reset --scope config+creds+sessions on OpenClaw 2026.9.6's format", () => {
  it("lists then clears the shared auth store rows and removes every agent DB (per-agent stores) and its registry row", async () => {
    const state = openclawState(V96);
    const opsDb = addOpsAgent(state);
    const secrets = ["sk-ant-demo-not-a-real-key", OPS_SECRET];
    expect(filesContaining(state.stateDir, secrets)).toEqual(["agents/ops/agent/openclaw-agent.sqlite", "state/openclaw.sqlite"]);

    const before = snapshotTree(state.stateDir);
    const dry = await runInProcess(["reset", "--scope", "config+creds+sessions", "--dry-run", "--json"], state.env);
    expect(dry.code, dry.stderr).toBe(0);
    const plan = JSON.parse(dry.stdout);
    expect(plan.tablesCleared).toEqual([
      { table: "config_machine_state", key: "authProfiles.store", rows: 1, reason: expect.stringMatching(/API keys and OAuth tokens/) },
      { table: "config_machine_state", key: "authProfiles.state", rows: 1, reason: expect.any(String) },
    ]);
    const removed = (plan.removed as Array<{ path: string; kind: string }>).map((r) => [path.relative(state.stateDir, r.path), r.kind]);
    expect(removed).toEqual([
      ["openclaw.json", "config"],
      ["agents/main/agent/openclaw-agent.sqlite", "agent-db"],
      ["agents/ops/agent/openclaw-agent.sqlite", "agent-db"],
    ]);
    expect(snapshotTree(state.stateDir)).toEqual(before);

    const run = await runInProcess(["reset", "--scope", "config+creds+sessions", "--yes", "--json"], state.env);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ ok: true, status: "completed", registryRowsRemoved: ["main", "ops"] });
    expect(fs.existsSync(opsDb)).toBe(false);
    expect(filesContaining(state.stateDir, secrets)).toEqual([]);
    const g = state.paths.globalDbPath;
    expect(count(g, "SELECT count(*) AS n FROM config_machine_state WHERE state_key LIKE 'authProfiles.%'")).toBe(0);
    // Not credentials: the shared-store marker, the plugin index, cron jobs, the ledger stay.
    expect(count(g, "SELECT count(*) AS n FROM config_machine_state WHERE state_key IN ('auth.sharedStore', 'plugins.installedIndex')")).toBe(2);
    expect(count(g, "SELECT count(*) AS n FROM cron_jobs")).toBe(2);
    expect(count(g, "SELECT count(*) AS n FROM migration_sources")).toBe(6);
    expect(count(g, "SELECT count(*) AS n FROM agent_databases")).toBe(0);
    expect(count(g, "SELECT count(*) AS n FROM state_leases")).toBe(0);
    expect(count(g, "SELECT user_version AS n FROM pragma_user_version")).toBe(18);
  });

  it("refuses formats whose credential tables it does not know (2026.6.33, a newer one): exit 1, nothing removed", async () => {
    const newer = openclawState(V96);
    const db = new Database(newer.paths.globalDbPath);
    db.pragma("user_version = 19");
    db.close();
    for (const [state, who] of [[openclawState(V633), /OpenClaw 2026\.6\.33/], [newer, /a newer OpenClaw than 2026\.9\.6/]] as const) {
      const before = snapshotTree(state.stateDir);
      for (const extra of [["--dry-run"], ["--yes"]]) {
        const r = await runInProcess(["reset", "--scope", "config+creds+sessions", ...extra, "--json"], state.env);
        expect(r.code).toBe(1);
        const doc = JSON.parse(r.stdout);
        expect(doc).toMatchObject({ ok: false, error: { code: "reset_foreign_format" } });
        expect(doc.error.message).toMatch(who);
        expect(doc.error.message).toMatch(/nothing was removed/);
        expect(snapshotTree(state.stateDir)).toEqual(before);
      }
    }
  });
});
