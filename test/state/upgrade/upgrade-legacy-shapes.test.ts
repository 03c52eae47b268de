// Legacy shapes of issue 24 that must survive the design-v1 → OpenClaw 2026.9.6 rewrite (doctor --fix, then upgradeGlobalDb).
import { execFileSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { upgradeAgentDb } from "../../../src/state/upgrade/upgrade-agent-db.js";
import { upgradeGlobalDb } from "../../../src/state/upgrade/upgrade-global-db.js";
import { makeTempDir, makeTempState, runInProcess } from "../../helpers/temp-state.js";
import { stagedDbFile } from "../../helpers/migration.js";

function cli<T = Record<string, unknown>>(file: string, sql: string): T[] {
  const out = execFileSync("sqlite3", ["-json", `file:${file}?mode=ro`, sql], { encoding: "utf8" }).trim();
  return out === "" ? [] : (JSON.parse(out) as T[]);
}

async function upgraded(fixture: string): Promise<string> {
  return (await upgradedState(fixture)).target;
}

async function upgradedState(fixture: string): Promise<{ target: string; stateDir: string }> {
  const state = makeTempState(fixture);
  const run = await runInProcess(["doctor", "--fix", "--yes", "--no-backup"], state.env);
  expect(run.code, run.stderr).toBe(0);
  const target = path.join(state.root, "upgraded", "openclaw.sqlite");
  upgradeGlobalDb({ source: stagedDbFile(state.paths), target, stateDir: state.stateDir, now: 1_800_000_000_000 });
  return { target, stateDir: state.stateDir };
}

async function upgradedAgent(fixture: string, agentId = "main"): Promise<string> {
  const state = makeTempState(fixture);
  const run = await runInProcess(["doctor", "--fix", "--yes", "--no-backup"], state.env);
  expect(run.code, run.stderr).toBe(0);
  const target = path.join(makeTempDir(), "agent.sqlite");
  upgradeAgentDb({ source: stagedDbFile(state.paths, agentId), target, agentId, now: 1_800_000_000_000 });
  return target;
}

describe("legacy shapes after the upgrade to OpenClaw's format", () => {
  it("exec approvals: the moved agents.default reaches OpenClaw's `current` row as main", async () => {
    const target = await upgraded("migration/exec-approvals-default-agent");
    const [row] = cli<{ config_key: string; raw_json: string; agent_count: number }>(target, "SELECT config_key, raw_json, agent_count FROM exec_approvals_config");
    expect(row!.config_key).toBe("current");
    expect(row!.agent_count).toBe(2);
    const agents = (JSON.parse(row!.raw_json) as { agents: Record<string, { allowlist: Array<{ id: string }> }> }).agents;
    expect(Object.keys(agents)).toEqual(["main", "ops"]);
    expect(agents.main!.allowlist.map((e) => e.id)).toEqual(["m1", "d2", "d3"]);
  });

  it("transcripts: a v1/v2 hookMessage reaches OpenClaw's transcript_events as custom with customType \"hook\"", async () => {
    const target = await upgradedAgent("migration/transcript-hook-message");
    const messages = cli<{ session_id: string; event_json: string }>(target, "SELECT session_id, event_json FROM transcript_events WHERE seq > 0 ORDER BY session_id, seq")
      .map((r) => [r.session_id, (JSON.parse(r.event_json) as { message: { role: string; customType?: string } }).message])
      .map(([id, m]) => [id, (m as { role: string }).role, (m as { customType?: string }).customType ?? null]);
    expect(messages).toEqual([
      ["hook-v1", "custom", "hook"],
      ["hook-v1", "custom", "deploy"],
      ["hook-v2", "custom", "hook"],
      ["hook-v2", "custom", "hook"],
      ["hook-v2", "user", "not-a-hook"],
      ["hook-v3", "hookMessage", null],
    ]);
  });

  it("sessions: a legacy `provider` is the channel of OpenClaw's delivery, the key itself removed once renamed", async () => {
    const target = await upgradedAgent("migration/session-provider-channel");
    const entry = (key: string): Record<string, unknown> =>
      JSON.parse(cli<{ entry_json: string }>(target, `SELECT entry_json FROM session_nodes WHERE session_key = '${key}'`)[0]!.entry_json) as Record<string, unknown>;
    const slack = entry("agent:main:slack:channel:c42");
    // 9.6 canonicalizes account ids to lower case (its normalizeOptionalAccountId); the origin keeps what was written.
    expect(slack.delivery).toMatchObject({ kind: "external", route: { channel: "slack", accountId: "t1", target: { to: "channel:C42" } } });
    expect(slack).not.toHaveProperty("provider");
    expect(slack).not.toHaveProperty("channel");
    const nullChannel = entry("agent:main:discord:group:g1");
    expect(nullChannel.delivery).toMatchObject({ kind: "external", route: { channel: "discord", target: { to: "group:g1" } } });
    expect(nullChannel).not.toHaveProperty("provider");
    // A string channel wins; provider stays as OpenClaw leaves it.
    const both = entry("agent:main:telegram:direct:99");
    expect(both.delivery).toMatchObject({ kind: "external", route: { channel: "telegram", target: { to: "99" } } });
    expect(both.provider).toBe("slack");
    expect(cli(target, "SELECT session_id, channel FROM session_windows ORDER BY session_id")).toEqual([
      { session_id: "s-both", channel: "telegram" },
      { session_id: "s-null-channel", channel: "discord" },
      { session_id: "s-slack", channel: "slack" },
    ]);
  });

  it("cron: the jobs imported from jobs.json.bak reach OpenClaw's cron_jobs under the store's own key", async () => {
    const { target, stateDir } = await upgradedState("migration/cron-corrupt-store");
    expect(cli(target, "SELECT store_key, job_id, enabled FROM cron_jobs ORDER BY job_id")).toEqual([
      { store_key: path.join(stateDir, "cron", "jobs.json"), job_id: "morning-digest", enabled: 1 },
      { store_key: path.join(stateDir, "cron", "jobs.json"), job_id: "nightly-sweep", enabled: 0 },
    ]);
  });
});
