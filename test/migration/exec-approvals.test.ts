// exec-approvals.json → exec_approvals_config (singleton with typed counts/defaults and the raw text).
//
// Shape: OpenClaw src/infra/exec-approvals.ts (ExecApprovalsFile: version, socket {path, token},
// defaults {security, ask, askFallback, autoAllowSkills}, agents {<id>: {…, allowlist: [{pattern, …}]}}).
// The SPEC places the file in <home>/.openclaw/; the state dir is checked too.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { planMigration } from "../../src/migration/plan-migration.js";
import { resolveStatePaths } from "../../src/state/paths.js";
import { fixturesDir, makeTempDir, makeTempState } from "../helpers/temp-state.js";
import { dumpState, ledgerSummary, migrate, rows, sha256Of } from "../helpers/migration.js";

const FIXTURE = path.join(fixturesDir, "migration/exec-approvals/exec-approvals.json");

describe("exec approvals importer", () => {
  it("fills every typed column and keeps the raw text; the socket token never reaches a report", async () => {
    const { paths } = makeTempState("migration/exec-approvals");
    const { plan, run } = await migrate(paths);
    expect(plan!.sources.map((s) => [s.kind, s.relativePath, s.records, s.notes])).toEqual([["exec-approvals", "exec-approvals.json", 1, ["2 agent(s), 3 allowlist entries"]]]);
    expect(run.status).toBe("completed");
    expect(rows(paths.globalDbPath, "SELECT * FROM exec_approvals_config")).toEqual([
      {
        config_key: "default", raw_json: fs.readFileSync(FIXTURE, "utf8"), socket_path: "/tmp/openclaw-exec.sock", has_socket_token: 1,
        default_security: "allowlist", default_ask: "on-miss", default_ask_fallback: "deny", auto_allow_skills: 1, agent_count: 2, allowlist_count: 3,
        updated_at_ms: run.sources[0]!.mtimeMs,
      },
    ]);
    expect(JSON.stringify({ plan, run })).not.toContain("FIXTURE-SECRET");
    expect(rows<{ r: string }>(paths.globalDbPath, "SELECT report_json AS r FROM migration_sources UNION ALL SELECT report_json FROM migration_runs").map((x) => x.r).join()).not.toContain("FIXTURE-SECRET");
    expect(ledgerSummary(paths, "exec-approvals.json")).toEqual({ migration_kind: "exec-approvals", target_table: "exec_approvals_config", source_sha256: sha256Of(FIXTURE), source_record_count: 1, status: "imported", removed_source: 1 });
    const dump = dumpState(paths);
    expect((await migrate(paths)).run.sources).toEqual([]);
    expect(dumpState(paths)).toEqual(dump);
  });

  it("reads the legacy shape: JSON5, no version, no token, string booleans, missing askFallback", async () => {
    const { paths } = makeTempState("migration/exec-approvals-legacy");
    const { run } = await migrate(paths);
    expect(run.status).toBe("completed");
    expect(rows(paths.globalDbPath, "SELECT socket_path, has_socket_token, default_security, default_ask, default_ask_fallback, auto_allow_skills, agent_count, allowlist_count FROM exec_approvals_config")).toEqual([
      { socket_path: "/tmp/old-exec.sock", has_socket_token: 0, default_security: "full", default_ask: "off", default_ask_fallback: null, auto_allow_skills: 0, agent_count: 1, allowlist_count: 1 },
    ]);
  });

  it("keeps a malformed file in place (warning run) while the other kinds import", async () => {
    const { paths, stateDir } = makeTempState("migration/cron");
    fs.writeFileSync(path.join(stateDir, "exec-approvals.json"), '{"socket": {"token": "FIXTURE-SECRET-broken"');
    const { run } = await migrate(paths);
    expect(run.status).toBe("warning");
    const outcome = run.sources.find((o) => o.kind === "exec-approvals")!;
    expect(outcome).toMatchObject({ status: "failed", reason: expect.stringMatching(/exec-approvals\.json: invalid JSON/) });
    expect(run.sources.filter((o) => o.kind.startsWith("cron") && o.status === "imported")).toHaveLength(4);
    expect(fs.existsSync(path.join(stateDir, "exec-approvals.json"))).toBe(true);
    expect(JSON.stringify(run)).not.toContain("FIXTURE-SECRET");
  });

  it("with the state dir elsewhere, imports <home>/.openclaw's copy and leaves a different state-dir copy for a human", async () => {
    const home = makeTempDir();
    const stateDir = path.join(home, "state-elsewhere");
    fs.mkdirSync(path.join(home, ".openclaw"), { recursive: true });
    fs.mkdirSync(stateDir, { recursive: true });
    fs.copyFileSync(FIXTURE, path.join(home, ".openclaw/exec-approvals.json"));
    fs.copyFileSync(path.join(fixturesDir, "migration/exec-approvals-legacy/exec-approvals.json"), path.join(stateDir, "exec-approvals.json"));
    const paths = resolveStatePaths({ env: { HOME: home, OPENCLAW_STATE_DIR: stateDir } });
    const plan = await planMigration({ paths });
    const homeCopy = path.join(home, ".openclaw/exec-approvals.json");
    expect(plan.sources.map((s) => [s.relativePath, s.action, s.attention ?? false])).toEqual([
      [homeCopy, "import", false],
      ["exec-approvals.json", "skip", true],
    ]);
    const { run } = await migrate(paths);
    expect(run.status).toBe("warning");
    expect(rows(paths.globalDbPath, "SELECT default_security FROM exec_approvals_config")).toEqual([{ default_security: "allowlist" }]);
    // Outside the state dir: moved under migrated/ (absolute path mirrored), never deleted.
    expect(run.sources[0]!.retiredTo).toBe(path.join(stateDir, "migrated", run.runId, homeCopy));
    expect(fs.existsSync(path.join(stateDir, "exec-approvals.json"))).toBe(true);
  });
});

describe("exec approvals: legacy agents.default (fixture exec-approvals-default-agent)", () => {
  it("moves agents.default to main, merged as OpenClaw 2026.9.6 merges it: main wins, allowlists combined without case duplicates", async () => {
    const { paths } = makeTempState("migration/exec-approvals-default-agent");
    const { run } = await migrate(paths);
    expect(run.status).toBe("completed");
    expect(run.sources[0]!.notes).toEqual(["2 agent(s), 4 allowlist entries", "legacy agents.default moved to agents.main (merged into the existing main entry; main's settings win, allowlists combined)"]);
    const [row] = rows<Record<string, unknown>>(paths.globalDbPath, "SELECT raw_json, agent_count, allowlist_count, default_security FROM exec_approvals_config");
    expect(row).toMatchObject({ agent_count: 2, allowlist_count: 4, default_security: "allowlist" });
    const raw = row!.raw_json as string;
    expect(raw.endsWith("}\n")).toBe(true);
    const stored = JSON.parse(raw) as { agents: Record<string, unknown>; socket: unknown };
    expect(Object.keys(stored.agents)).toEqual(["main", "ops"]);
    expect(stored.agents.main).toEqual({
      security: "allowlist",
      ask: "always", // main's null falls back to the legacy value
      askFallback: "deny",
      allowlist: [
        { id: "m1", pattern: "/usr/bin/git" },
        { id: "d2", pattern: "/usr/bin/rg" },
        { id: "d3", pattern: "/usr/bin/git", argPattern: "^status$" },
      ],
      mcpTools: [{ server: "files", tool: "read" }, { server: "files", tool: "write" }],
    });
    expect(stored.socket).toEqual({ path: "/tmp/openclaw-exec.sock" });
  });

  it("with no main entry, agents.default becomes main unchanged", async () => {
    const { paths, stateDir } = makeTempState("migration/exec-approvals-default-agent");
    const file = path.join(stateDir, "exec-approvals.json");
    const value = JSON.parse(fs.readFileSync(file, "utf8")) as { agents: Record<string, unknown> };
    const legacy = value.agents.default;
    delete value.agents.main;
    fs.writeFileSync(file, JSON.stringify(value));
    const { run } = await migrate(paths);
    expect(run.status).toBe("completed");
    expect(run.sources[0]!.notes).toEqual(["2 agent(s), 4 allowlist entries", "legacy agents.default moved to agents.main"]);
    const stored = JSON.parse(rows<{ raw_json: string }>(paths.globalDbPath, "SELECT raw_json FROM exec_approvals_config")[0]!.raw_json) as { agents: Record<string, unknown> };
    expect(Object.keys(stored.agents)).toEqual(["ops", "main"]);
    expect(stored.agents.main).toEqual(legacy);
  });
});
