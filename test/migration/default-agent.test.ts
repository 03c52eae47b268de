// Main-agent-by-default legacy data (root sessions/, the old agent/ dir) lands in the config's default agent, as
// openclaw@2026.9.6's doctor moves it (resolveInstallAgentDir.migrationTarget): fixture default-agent-root-sessions.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { resolveLegacyDefaultAgent } from "../../src/migration/legacy-default-agent.js";
import { planMigration } from "../../src/migration/plan-migration.js";
import { upgradeAgentDb } from "../../src/state/upgrade/upgrade-agent-db.js";
import { makeTempDir, makeTempState, runInProcess } from "../helpers/temp-state.js";
import { agentDbFile, migrate, rows, stagedDbFile } from "../helpers/migration.js";

function cli<T = Record<string, unknown>>(file: string, sql: string): T[] {
  const out = execFileSync("sqlite3", ["-json", `file:${file}?mode=ro`, sql], { encoding: "utf8" }).trim();
  return out === "" ? [] : (JSON.parse(out) as T[]);
}

describe("resolveLegacyDefaultAgent: upstream's legacy data owner", () => {
  const owner = (config: Record<string, unknown> | null): string => resolveLegacyDefaultAgent(config).agentId;

  it("is main with no config, no roster, or a roster naming only main", () => {
    expect(resolveLegacyDefaultAgent(null)).toEqual({ agentId: "main", reason: null });
    expect(resolveLegacyDefaultAgent({ session: { mainKey: "home" } })).toEqual({ agentId: "main", reason: null });
    expect(resolveLegacyDefaultAgent({ agents: { list: [{ id: "main" }] } })).toEqual({ agentId: "main", reason: null });
  });

  it("is the one entry marked default: true, in agents.list or keyed agents.entries (entries win)", () => {
    expect(owner({ agents: { list: [{ id: "main" }, { id: "Work", default: true }] } })).toBe("work");
    expect(owner({ agents: { entries: { main: {}, ops: { default: true } }, list: [{ id: "work", default: true }] } })).toBe("ops");
  });

  it("is the sole configured agent when none is marked", () => {
    expect(resolveLegacyDefaultAgent({ agents: { list: [{ id: "solo" }] } })).toEqual({ agentId: "solo", reason: '"solo" is the only configured agent' });
  });

  it("prefers agents.defaults.systemAgent.agentId when it names a configured agent", () => {
    expect(owner({ agents: { defaults: { systemAgent: { agentId: "ops" } }, list: [{ id: "work", default: true }, { id: "ops" }] } })).toBe("ops");
    // Not a configured agent: ignored, the marker decides.
    expect(owner({ agents: { defaults: { systemAgent: { agentId: "ghost" } }, list: [{ id: "work", default: true }, { id: "ops" }] } })).toBe("work");
  });

  it("ignores the marker under explicit ownership, and two markers, and falls back to main with the reason", () => {
    const explicit = resolveLegacyDefaultAgent({ agents: { ownership: "explicit", list: [{ id: "work", default: true }, { id: "ops" }] } });
    expect(explicit.agentId).toBe("main");
    expect(explicit.reason).toMatch(/several agents are configured and none is the default/);
    expect(owner({ agents: { list: [{ id: "a", default: true }, { id: "b", default: true }] } })).toBe("main");
    // An id that is not a safe agent id is never a path segment.
    expect(owner({ agents: { list: [{ id: "../evil", default: true }, { id: "b" }] } })).toBe("main");
  });
});

describe("root sessions/ and agent/ under a default agent other than main (fixture default-agent-root-sessions)", () => {
  it("plans and imports them into agent work (agent:work:main …), and moves agent/ to agents/work/agent", async () => {
    const { paths, stateDir } = makeTempState("migration/default-agent-root-sessions");
    const plan = await planMigration({ paths });
    expect(plan.sources.map((s) => [s.relativePath, s.agentId, s.legacyRoot, s.action])).toEqual([
      ["sessions/sessions.json", "work", true, "import"],
      ["sessions/s-root.jsonl", "work", true, "import"],
    ]);
    expect(plan.layout).toEqual([expect.objectContaining({ kind: "legacy-agent-dir", action: "move", target: path.join(stateDir, "agents/work/agent") })]);
    expect(plan.notes).toEqual(['root sessions/ and agent/ belong to agent "work": the config marks agent "work" default: true']);

    const { run } = await migrate(paths, { backup: false });
    expect(run.status).toBe("completed");
    expect(fs.existsSync(path.join(stateDir, "agents/main"))).toBe(false);
    const db = agentDbFile(paths, "work");
    expect(rows(db, "SELECT session_key, session_id FROM session_routes ORDER BY session_key")).toEqual([
      { session_key: "agent:work:+1999", session_id: "s-root-dm" },
      { session_key: "agent:work:main", session_id: "s-root" },
    ]);
    expect(rows(db, "SELECT count(*) AS n FROM transcript_events WHERE session_id = 's-root'")).toEqual([{ n: 2 }]);
    // models.json moved with agent/ is imported for agent work in the same run.
    expect(rows(paths.globalDbPath, "SELECT catalog_key FROM agent_model_catalogs")).toEqual([{ catalog_key: "agents/work/agent" }]);
    expect(fs.existsSync(path.join(stateDir, "sessions"))).toBe(false);
    expect(fs.existsSync(path.join(stateDir, "agent"))).toBe(false);
  });

  it("reaches OpenClaw's agent tables for agent work after doctor --fix and the format upgrade", async () => {
    const state = makeTempState("migration/default-agent-root-sessions");
    const cliRun = await runInProcess(["doctor", "--fix", "--yes", "--no-backup"], state.env);
    expect(cliRun.code, cliRun.stderr).toBe(0);
    const target = path.join(makeTempDir(), "agent.sqlite");
    upgradeAgentDb({ source: stagedDbFile(state.paths, "work"), target, agentId: "work", now: 1_800_000_000_000 });
    expect(cli(target, "SELECT session_key FROM session_nodes ORDER BY session_key")).toEqual([{ session_key: "agent:work:+1999" }, { session_key: "agent:work:main" }]);
    expect(cli(target, "SELECT count(*) AS n FROM transcript_events WHERE session_id = 's-root'")).toEqual([{ n: 2 }]);
    expect(fs.existsSync(path.join(state.stateDir, "agents/main"))).toBe(false);
  });
});
