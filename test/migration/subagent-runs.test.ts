// subagents/runs.json → subagent_runs.
//
// Shape: OpenClaw src/agents/subagent-registry.store.ts ({version: 1|2, runs: {runId: record}}; the v1 → v2
// upgrade of announce* fields, requesterChannel/AccountId and the controller default).
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { makeTempState } from "../helpers/temp-state.js";
import { dumpState, ledgerSummary, migrate, rows, sha256Of } from "../helpers/migration.js";

describe("subagent runs importer", () => {
  it("maps every run to its typed columns with the record as payload_json; re-runs change nothing", async () => {
    const { paths } = makeTempState("migration/subagents");
    const { run } = await migrate(paths);
    expect(run.status).toBe("completed");
    const runs = rows<Record<string, unknown>>(paths.globalDbPath, "SELECT * FROM subagent_runs ORDER BY run_id");
    expect(runs.map(({ payload_json: _p, ...r }) => r)).toEqual([
      { run_id: "run-a", child_session_key: "agent:main:subagent:a", requester_session_key: "agent:main:main", controller_session_key: "agent:main:main", created_at: 1767300000000, ended_at: 1767300100000, cleanup_handled: 1 },
      { run_id: "run-b", child_session_key: "agent:ops:subagent:b", requester_session_key: "agent:ops:main", controller_session_key: "agent:main:main", created_at: 1767300300000, ended_at: null, cleanup_handled: 0 },
    ]);
    expect(JSON.parse(runs[0]!.payload_json as string)).toMatchObject({ task: "research flights", requesterOrigin: { channel: "telegram", accountId: "bot-a" }, outcome: { status: "ok" }, spawnMode: "run" });
    expect(ledgerSummary(paths, "subagents/runs.json")).toEqual({
      migration_kind: "subagent-runs", target_table: "subagent_runs", source_sha256: sha256Of(path.join(process.cwd(), "fixtures/migration/subagents/subagents/runs.json")),
      source_record_count: 2, status: "imported", removed_source: 1,
    });
    const dump = dumpState(paths);
    expect((await migrate(paths)).run.sources).toEqual([]);
    expect(dumpState(paths)).toEqual(dump);
  });

  it("upgrades a version 1 registry and skips runs without session keys (warning)", async () => {
    const { paths } = makeTempState("migration/subagents-v1");
    const { plan, run } = await migrate(paths);
    expect(plan!.sources[0]!.notes).toEqual(["version 1 registry: upgraded to version 2 on import", 'run "run-orphan" has no child or requester session key: skipped']);
    expect(run.status).toBe("warning");
    expect(run.sources[0]!.warnings).toEqual(['run "run-orphan" has no child or requester session key; skipped (it stays in the retired file)']);
    const runs = rows<Record<string, unknown>>(paths.globalDbPath, "SELECT run_id, controller_session_key, cleanup_handled, payload_json FROM subagent_runs ORDER BY run_id");
    expect(runs.map((r) => [r.run_id, r.controller_session_key, r.cleanup_handled])).toEqual([
      ["run-old", "agent:main:main", 1],
      ["run-pending", "agent:main:main", 0],
    ]);
    const old = JSON.parse(runs[0]!.payload_json as string) as Record<string, unknown>;
    expect(old).toMatchObject({ cleanupCompletedAt: 1767000200000, cleanupHandled: true, requesterOrigin: { channel: "whatsapp", accountId: "+1555" } });
    expect(old).not.toHaveProperty("announceCompletedAt");
    expect(old).not.toHaveProperty("requesterChannel");
  });

  it("keeps a malformed or unknown-version registry in place while the other kinds import", async () => {
    for (const text of [JSON.stringify({ version: 3, runs: {} }), '{"version": 2, "runs": {"r": ']) {
      const { paths, stateDir } = makeTempState("migration/cron");
      const file = path.join(stateDir, "subagents/runs.json");
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, text);
      const { run } = await migrate(paths);
      expect(run.status).toBe("warning");
      expect(run.sources.find((o) => o.kind === "subagent-runs")).toMatchObject({ status: "failed", reason: expect.stringMatching(/subagent registry version 3 is not supported|invalid JSON/) });
      expect(run.sources.filter((o) => o.kind.startsWith("cron") && o.status === "imported")).toHaveLength(4);
      expect(fs.existsSync(file)).toBe(true);
    }
  });
});
