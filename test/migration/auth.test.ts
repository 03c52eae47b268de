// Auth importers: auth-profiles.json, auth-state.json, auth.json, credentials/oauth.json → auth_profile_stores/state.
//
// Shapes: OpenClaw's public sources — src/agents/auth-profiles/ (paths.ts: auth-profiles.json, auth-state.json
// "sidecar for mutable usage/order state", legacy auth.json; legacy-flat-credential.ts: flat provider-keyed
// stores, `mode`/`apiKey` fields) and docs/concepts/oauth.md (credentials/oauth.json, import-only).
// Every fixture secret starts with FIXTURE-SECRET: none may appear in any result, report or ledger row.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { planMigration } from "../../src/migration/plan-migration.js";
import { makeTempState } from "../helpers/temp-state.js";
import { dumpState, ledgerSummary, migrate, rows, sha256Of } from "../helpers/migration.js";

type Obj = Record<string, unknown>;

function store(db: string, storeKey: string): { source_kind: string; profiles: Obj; version: number } {
  const [row] = rows<{ source_kind: string; profiles_json: string; agent_dir: string }>(db, "SELECT * FROM auth_profile_stores WHERE store_key = ?", storeKey);
  expect(row!.agent_dir).toBe(storeKey);
  const parsed = JSON.parse(row!.profiles_json) as { profiles: Obj; version: number };
  return { source_kind: row!.source_kind, ...parsed };
}

function state(db: string, storeKey: string): Obj {
  const [row] = rows<{ state_json: string }>(db, "SELECT state_json FROM auth_profile_state WHERE store_key = ?", storeKey);
  return JSON.parse(row!.state_json) as Obj;
}

function reportsOf(db: string): string {
  return rows<{ report_json: string }>(db, "SELECT report_json FROM migration_sources UNION ALL SELECT report_json FROM migration_runs").map((r) => r.report_json).join("\n");
}

describe("auth importers", () => {
  it("imports every profile keyed by agent dir, merges the legacy files without overriding, and never reports a secret", async () => {
    const { paths, stateDir } = makeTempState("migration/auth");
    const mainDir = path.join(stateDir, "agents/main/agent");
    const workDir = path.join(stateDir, "agents/work/agent");
    const plan = await planMigration({ paths });
    expect(plan.sources.map((s) => [s.kind, s.relativePath, s.agentId, s.records])).toEqual([
      ["auth-profiles", "agents/main/agent/auth-profiles.json", "main", 3],
      ["auth-profiles", "agents/work/agent/auth-profiles.json", "work", 1],
      ["auth-state", "agents/main/agent/auth-state.json", "main", 3],
      ["auth-json", "agents/main/agent/auth.json", "main", 2],
      ["oauth-credentials", "credentials/oauth.json", "main", 2],
    ]);
    const { run } = await migrate(paths);
    expect(run).toMatchObject({ status: "completed", totals: { imported: 5, retired: 5 } });

    const main = store(paths.globalDbPath, mainDir);
    expect(main.source_kind).toBe("auth-profiles");
    expect(main.version).toBe(1);
    expect(main.profiles).toEqual({
      "anthropic:default": { type: "api_key", provider: "anthropic", key: "FIXTURE-SECRET-anthropic-api-key" },
      "openai-codex:work": { type: "oauth", provider: "openai-codex", access: "FIXTURE-SECRET-codex-access", refresh: "FIXTURE-SECRET-codex-refresh", expires: 1767400000000, email: "me@example.com", accountId: "acct-1" },
      "github-copilot:default": { type: "token", provider: "github-copilot", token: "FIXTURE-SECRET-copilot-token", expires: 1767500000000 },
      // auth.json: anthropic:default already existed (kept), google added.
      "google:default": { type: "oauth", provider: "google", access: "FIXTURE-SECRET-google-access", refresh: "FIXTURE-SECRET-google-refresh", expires: 1767400000000 },
      // credentials/oauth.json: anthropic:default kept, openai added as OAuth.
      "openai:default": { type: "oauth", provider: "openai", access: "FIXTURE-SECRET-oauth-openai-access", refresh: "FIXTURE-SECRET-oauth-openai-refresh", expires: 1767000000000, email: "me@example.com" },
    });
    expect(store(paths.globalDbPath, workDir).profiles).toEqual({ "openrouter:default": { type: "api_key", provider: "openrouter", key: "FIXTURE-SECRET-openrouter-key" } });
    expect(state(paths.globalDbPath, mainDir)).toEqual(JSON.parse(fs.readFileSync(path.join(process.cwd(), "fixtures/migration/auth/agents/main/agent/auth-state.json"), "utf8")));
    expect(run.sources.find((o) => o.kind === "auth-json")!.notes).toEqual(["1 profile(s) added: google:default", "1 already in the store (kept as they are): anthropic:default"]);

    // Secrets are in the database (that is the point) and nowhere else.
    expect(JSON.stringify({ plan, run })).not.toContain("FIXTURE-SECRET");
    expect(reportsOf(paths.globalDbPath)).not.toContain("FIXTURE-SECRET");
  });

  it("reads legacy shapes: a flat provider-keyed store, mode/apiKey fields, inline order/lastGood/usageStats", async () => {
    const { paths, stateDir } = makeTempState("migration/auth-legacy");
    const plan = await planMigration({ paths });
    expect(plan.sources.map((s) => [s.relativePath, s.notes])).toEqual([
      ["agents/main/agent/auth-profiles.json", ["flat legacy layout (credentials keyed by provider): read as <provider>:default profiles"]],
      ["agents/ops/agent/auth-profiles.json", ["inline order, lastGood, usageStats moved to auth_profile_state"]],
    ]);
    const { run } = await migrate(paths);
    expect(run.status).toBe("warning");
    expect(run.sources[1]!.warnings).toEqual(['profile "broken" is not an object; skipped (it stays in the retired file)']);
    expect(store(paths.globalDbPath, path.join(stateDir, "agents/main/agent")).profiles).toEqual({
      "anthropic:default": { type: "api_key", provider: "anthropic", key: "FIXTURE-SECRET-flat-anthropic-key" },
      "openai:default": { type: "oauth", provider: "openai", access: "FIXTURE-SECRET-flat-openai-access", refresh: "FIXTURE-SECRET-flat-openai-refresh", expires: 1767000000000 },
    });
    const opsDir = path.join(stateDir, "agents/ops/agent");
    expect(store(paths.globalDbPath, opsDir).profiles).toEqual({ "anthropic:ops": { type: "api_key", provider: "anthropic", key: "FIXTURE-SECRET-ops-anthropic-key" } });
    expect(state(paths.globalDbPath, opsDir)).toEqual({ version: 1, order: { anthropic: ["anthropic:ops"] }, lastGood: { anthropic: "anthropic:ops" }, usageStats: { "anthropic:ops": { lastUsed: 1767300000000, errorCount: 1 } } });
    expect(JSON.stringify(run)).not.toContain("FIXTURE-SECRET");
  });

  it("keeps a malformed credentials file in place without echoing it; the other auth files still import", async () => {
    const { paths, stateDir } = makeTempState("migration/auth");
    const file = path.join(stateDir, "agents/main/agent/auth-profiles.json");
    fs.writeFileSync(file, '{ "profiles": { "anthropic:default": { "type": "api_key", "key": "FIXTURE-SECRET-in-a-broken-file" ');
    const plan = await planMigration({ paths });
    expect(plan.sources[0]!.notes).toEqual([expect.stringMatching(/^will fail: .*auth-profiles\.json: invalid JSON/)]);
    const { run } = await migrate(paths);
    expect(run.status).toBe("warning");
    expect(run.sources.map((o) => [o.relativePath, o.status])).toEqual([
      ["agents/main/agent/auth-profiles.json", "failed"],
      ["agents/work/agent/auth-profiles.json", "imported"],
      ["agents/main/agent/auth-state.json", "imported"],
      ["agents/main/agent/auth.json", "imported"],
      ["credentials/oauth.json", "imported"],
    ]);
    expect(fs.existsSync(file)).toBe(true);
    expect(JSON.stringify({ plan, run })).not.toContain("FIXTURE-SECRET");
    expect(reportsOf(paths.globalDbPath)).not.toContain("FIXTURE-SECRET");
  });

  it("re-runs change nothing; the ledger names the table, the sha256 and the record count", async () => {
    const { paths } = makeTempState("migration/auth");
    await migrate(paths);
    const dump = dumpState(paths);
    expect((await migrate(paths)).run.sources).toEqual([]);
    expect(dumpState(paths)).toEqual(dump);
    const fixture = (rel: string): string => path.join(process.cwd(), "fixtures/migration/auth", rel);
    expect(ledgerSummary(paths, "agents/main/agent/auth-profiles.json")).toEqual({ migration_kind: "auth-profiles", target_table: "auth_profile_stores", source_sha256: sha256Of(fixture("agents/main/agent/auth-profiles.json")), source_record_count: 3, status: "imported", removed_source: 1 });
    expect(ledgerSummary(paths, "agents/main/agent/auth-state.json")).toMatchObject({ target_table: "auth_profile_state", source_record_count: 3 });
    expect(ledgerSummary(paths, "credentials/oauth.json")).toEqual({ migration_kind: "oauth-credentials", target_table: "auth_profile_stores", source_sha256: sha256Of(fixture("credentials/oauth.json")), source_record_count: 2, status: "imported", removed_source: 1 });
  });

  it("imports the auth profiles of a pre-multi-agent agent/ dir in the same run that moves it", async () => {
    const { paths, stateDir } = makeTempState("migration/old-layout");
    const { run } = await migrate(paths);
    expect(run.status).toBe("completed");
    expect(run.sources.find((o) => o.kind === "auth-profiles")).toMatchObject({ relativePath: "agents/main/agent/auth-profiles.json", status: "imported", retired: "moved" });
    expect(rows(paths.globalDbPath, "SELECT store_key FROM auth_profile_stores")).toEqual([{ store_key: path.join(stateDir, "agents/main/agent") }]);
  });
});
