// Session shapes of issue 24 after doctor --fix, in OpenClaw 2026.9.6's tables: recovered, header-less, no seeded main.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { upgradeAgentDb } from "../../../src/state/upgrade/upgrade-agent-db.js";
import { stagedDbFile } from "../../helpers/migration.js";
import { makeTempDir, makeTempState, runInProcess, type TempState } from "../../helpers/temp-state.js";

function cli<T = Record<string, unknown>>(file: string, sql: string): T[] {
  const out = execFileSync("sqlite3", ["-json", `file:${file}?mode=ro`, sql], { encoding: "utf8" }).trim();
  return out === "" ? [] : (JSON.parse(out) as T[]);
}

/** doctor --fix on the fixture (after `prepare`), then the kept design-v1 agent DB upgraded to OpenClaw's format. */
async function upgradedAgent(fixture: string, prepare: (state: TempState) => void = () => {}): Promise<string> {
  const state = makeTempState(fixture);
  prepare(state);
  const run = await runInProcess(["doctor", "--fix", "--yes", "--no-backup"], state.env);
  expect(run.code, run.stderr).toBe(0);
  const target = path.join(makeTempDir(), "agent.sqlite");
  upgradeAgentDb({ source: stagedDbFile(state.paths, "main"), target, agentId: "main", now: 1_800_000_000_000 });
  return target;
}

describe("session shapes after the upgrade to OpenClaw's format", () => {
  it("an unindexed transcript is OpenClaw's recovered session: key, node with archivedAt, window, dated by the file's mtime", async () => {
    const mtime = Date.UTC(2026, 4, 8, 12);
    const target = await upgradedAgent("migration/orphan-transcript", (state) => {
      const file = path.join(state.stateDir, "agents/main/sessions/S-Lost.jsonl");
      fs.utimesSync(file, new Date(mtime), new Date(mtime));
    });
    const [node] = cli<{ session_key: string; current_session_id: string; entry_json: string; updated_at: number }>(
      target,
      "SELECT session_key, current_session_id, entry_json, updated_at FROM session_nodes WHERE current_session_id = 'S-Lost'",
    );
    expect(node).toMatchObject({ session_key: "agent:main:recovered:s-lost", updated_at: mtime });
    expect(JSON.parse(node!.entry_json)).toEqual({ sessionId: "S-Lost", updatedAt: mtime, archivedAt: mtime, delivery: { kind: "none" } });
    expect(cli(target, "SELECT session_key, updated_at FROM session_windows WHERE session_id = 'S-Lost'")).toEqual([{ session_key: "agent:main:recovered:s-lost", updated_at: mtime }]);
    expect(cli(target, "SELECT count(*) AS n FROM transcript_events WHERE session_id = 'S-Lost'")).toEqual([{ n: 2 }]);
    expect(cli(target, "SELECT count(*) AS n FROM session_nodes WHERE session_key LIKE '%:orphan:%'")).toEqual([{ n: 0 }]);
  });

  it("a header-less indexed transcript reaches transcript_events with a version 3 header at seq 0, under the indexed key", async () => {
    const target = await upgradedAgent("migration/transcript-headerless");
    expect(cli(target, "SELECT session_key, current_session_id FROM session_nodes")).toEqual([{ session_key: "agent:main:main", current_session_id: "s-headless" }]);
    const events = cli<{ seq: number; event_json: string }>(target, "SELECT seq, event_json FROM transcript_events WHERE session_id = 's-headless' ORDER BY seq").map(
      (r) => JSON.parse(r.event_json) as Record<string, unknown>,
    );
    expect(events[0]).toEqual({ type: "session", version: 3, id: "s-headless", timestamp: "2026-05-06T00:00:01.000Z", cwd: "" });
    expect(events.slice(1).map((e) => e.type)).toEqual(["message", "message", "message", "compaction"]);
    expect(events.slice(1).every((e) => typeof e.id === "string")).toBe(true);
    expect(events[4]).toMatchObject({ firstKeptEntryId: events[2]!.id });
  });

  it("an agent store without a main key: no agent:main:main node, each direct entry under its own key", async () => {
    const target = await upgradedAgent("migration/main-seeding");
    expect(cli(target, "SELECT session_key, current_session_id FROM session_nodes ORDER BY session_key")).toEqual([
      { session_key: "agent:main:+1555", current_session_id: "s-old-dm" },
      { session_key: "agent:main:+1666", current_session_id: "s-new-dm" },
      { session_key: "agent:main:telegram:direct:42", current_session_id: "s-agent" },
      { session_key: "agent:main:unknown:group:team", current_session_id: "s-team" },
    ]);
    expect(cli(target, "SELECT session_id, session_key FROM session_windows WHERE session_id = 's-new-dm'")).toEqual([{ session_id: "s-new-dm", session_key: "agent:main:+1666" }]);
  });
});
