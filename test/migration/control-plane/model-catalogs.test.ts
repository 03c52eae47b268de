// agents/<id>/agent/models.json → agent_model_catalogs, catalog_key = the agent dir relative to the state dir.
// Shape ({providers: {<name>: {baseUrl, apiKey, models: […]}}}) from OpenClaw's agents/<id>/agent/models.json.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { makeTempState, runInProcess } from "../../helpers/temp-state.js";
import { migrate, rows, stagedDbFile } from "../../helpers/migration.js";
import { corrupt, expectLedger, expectReimportIdempotent } from "../../helpers/control-plane.js";

const KEY = "sk-or-PLANTED-MODEL-KEY-123";

describe("model-catalog importer", () => {
  it("imports one row per agent dir with the raw catalog, records the ledger, and re-imports idempotently", async () => {
    const { paths, stateDir } = makeTempState("migration/model-catalogs");
    const raw = JSON.parse(fs.readFileSync(path.join(stateDir, "agents/main/agent/models.json"), "utf8"));
    const mtime = Math.trunc(fs.statSync(path.join(stateDir, "agents/main/agent/models.json")).mtimeMs);
    const { plan, run } = await migrate(paths);
    expect(plan!.sources.map((s) => [s.kind, s.agentId, s.records, s.targetDatabase])).toEqual([
      ["model-catalog", "main", 2, "global"],
      ["model-catalog", "ops", 1, "global"],
    ]);
    expect(run.status).toBe("completed");
    const got = rows<{ catalog_key: string; agent_dir: string; raw_json: string; updated_at: number }>(paths.globalDbPath, "SELECT * FROM agent_model_catalogs ORDER BY catalog_key");
    expect(got.map((r) => [r.catalog_key, r.agent_dir])).toEqual([
      ["agents/main/agent", path.join(stateDir, "agents/main/agent")],
      ["agents/ops/agent", path.join(stateDir, "agents/ops/agent")],
    ]);
    expect(JSON.parse(got[0]!.raw_json)).toEqual(raw);
    expect(got[0]!.updated_at).toBe(mtime);
    // Model catalogs are global rows: no agent database is created for them.
    expect(fs.existsSync(path.join(stateDir, "agents/main/agent/openclaw-agent.sqlite"))).toBe(false);
    expectLedger(paths, run, "model-catalog", "agent_model_catalogs", { "agents/main/agent/models.json": 2, "agents/ops/agent/models.json": 1 });
    expect(JSON.stringify(run)).not.toContain(KEY);
    await expectReimportIdempotent(paths, run);
  });

  it("imports the pre-multi-agent agent/models.json after the layout step moves it to agents/main/agent", async () => {
    const { env, paths, stateDir } = makeTempState();
    fs.mkdirSync(path.join(stateDir, "agent"), { recursive: true });
    fs.writeFileSync(path.join(stateDir, "agent/models.json"), JSON.stringify({ providers: { a: {} } }));
    const res = await runInProcess(["doctor", "--fix", "--yes", "--no-backup", "--json"], env);
    expect(res.code, res.stdout).toBe(0);
    expect(rows(stagedDbFile(paths), "SELECT catalog_key FROM agent_model_catalogs")).toEqual([{ catalog_key: "agents/main/agent" }]);
    // OpenClaw's format reads the catalog as a file: written back where the layout step put it, and left live there.
    expect(JSON.parse(fs.readFileSync(path.join(stateDir, "agents/main/agent/models.json"), "utf8"))).toEqual({ providers: { a: {} } });
    expect((await runInProcess(["doctor", "--strict"], env)).code).toBe(0);
  });

  it("keeps a malformed catalog in place (failed), the other agent's is imported", async () => {
    const { paths, stateDir } = makeTempState("migration/model-catalogs");
    corrupt(stateDir, "agents/ops/agent/models.json", '{"providers": {"x": {"apiKey": "sk-NEVER-IN-REASON-42"');
    const { run } = await migrate(paths);
    expect(run.status).toBe("warning");
    expect(run.sources.map((o) => o.status)).toEqual(["imported", "failed"]);
    expect(run.sources[1]!.reason).toMatch(/models\.json: invalid JSON/);
    expect(JSON.stringify(run)).not.toContain("sk-NEVER-IN-REASON-42");
    expect(fs.existsSync(path.join(stateDir, "agents/ops/agent/models.json"))).toBe(true);
  });
});
