// Issue 24: compaction checkpoints stay files beside the transcripts (never sessions), and an entry's ACP metadata
// lands in the global acp_sessions table, where OpenClaw 2026.9.6's doctor puts it.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { classifyPath } from "../../src/migration/legacy-inventory.js";
import { isCompactionCheckpointTranscript } from "../../src/migration/legacy-paths.js";
import { planMigration } from "../../src/migration/plan-migration.js";
import { makeTempState, runInProcess } from "../helpers/temp-state.js";

const UUID = "0b9c7d2e-1f3a-4b5c-8d6e-7f8091a2b3c4";
const SESSIONS = "agents/main/sessions";
const CHECKPOINTS = [`${SESSIONS}/s-cp.checkpoint.${UUID}.jsonl`, `${SESSIONS}/s-cp.checkpoint.2.jsonl`];

/** The sqlite3 CLI, an independent reader. */
function cli<T = Record<string, unknown>>(file: string, sql: string): T[] {
  const out = execFileSync("sqlite3", ["-readonly", "-bail", "-json", file, sql], { encoding: "utf8" });
  return out.trim() === "" ? [] : (JSON.parse(out) as T[]);
}

describe("compaction checkpoints (fixture compaction-checkpoints)", () => {
  it("names a checkpoint by 9.6's pattern (and a numbered one), never a transcript or a sidecar", () => {
    expect(isCompactionCheckpointTranscript(`s-cp.checkpoint.${UUID}.jsonl`)).toBe(true);
    expect(isCompactionCheckpointTranscript("s-cp.checkpoint.2.jsonl")).toBe(true);
    expect(isCompactionCheckpointTranscript("s-cp.jsonl")).toBe(false);
    expect(isCompactionCheckpointTranscript("s-cp.checkpoint.2.trajectory.jsonl")).toBe(false);
  });

  it("plans no checkpoint as a source and classifies each as kept OpenClaw state", async () => {
    const { paths, stateDir } = makeTempState("migration/compaction-checkpoints");
    const plan = await planMigration({ paths });
    expect(plan.sources.filter((s) => s.kind === "transcript").map((s) => s.relativePath)).toEqual([`${SESSIONS}/s-cp.jsonl`]);
    for (const rel of CHECKPOINTS) {
      const c = classifyPath(stateDir, path.join(stateDir, rel), new Set());
      expect(c).toMatchObject({ class: "current", owner: "OpenClaw" });
      expect(c.reason).toMatch(/compaction checkpoint/);
    }
    expect(classifyPath(stateDir, path.join(stateDir, "sessions/s-root.checkpoint.1.jsonl"), new Set()).class).toBe("current");
  });

  it("doctor --fix imports one session; the checkpoints stay byte for byte where the entry's compactionCheckpoints names them", async () => {
    const state = makeTempState("migration/compaction-checkpoints");
    const before = CHECKPOINTS.map((rel) => fs.readFileSync(path.join(state.stateDir, rel)));
    const run = await runInProcess(["doctor", "--fix", "--yes", "--no-backup"], state.env);
    expect(run.code, run.stderr).toBe(0);
    const db = path.join(state.stateDir, "agents/main/agent/openclaw-agent.sqlite");
    // 9.6's format (the format upgrade ran): one node, one window, the live transcript only.
    expect(cli(db, "PRAGMA user_version")).toEqual([{ user_version: 23 }]);
    expect(cli(db, "SELECT session_key, current_session_id FROM session_nodes")).toEqual([{ session_key: "agent:main:main", current_session_id: "s-cp" }]);
    expect(cli(db, "SELECT session_id FROM session_windows")).toEqual([{ session_id: "s-cp" }]);
    expect(cli(db, "SELECT session_id, count(*) AS n FROM transcript_events GROUP BY session_id")).toEqual([{ session_id: "s-cp", n: 5 }]);
    // Where 9.6 reads the history (readLegacyCompactionHistory): the entry's compactionCheckpoints, pointers included.
    const [node] = cli<{ entry_json: string }>(db, "SELECT entry_json FROM session_nodes");
    const entry = JSON.parse(node!.entry_json) as { compactionCheckpoints: Array<Record<string, any>> };
    expect(entry.compactionCheckpoints).toHaveLength(1);
    expect(entry.compactionCheckpoints[0]).toMatchObject({
      sessionId: "s-cp",
      tokensBefore: 74871,
      tokensAfter: 1200,
      preCompaction: { sessionId: "s-cp", sessionFile: `/home/demo/.openclaw/agents/main/sessions/s-cp.checkpoint.${UUID}.jsonl` },
      postCompaction: { sessionId: "s-cp", entryId: "c1" },
    });
    CHECKPOINTS.forEach((rel, i) => expect(fs.readFileSync(path.join(state.stateDir, rel))).toEqual(before[i]));
    expect(fs.existsSync(path.join(state.stateDir, SESSIONS, "s-cp.jsonl"))).toBe(false);
    // Nothing waits: the checkpoints are not legacy sources to a second doctor.
    const again = await runInProcess(["doctor", "--json"], state.env);
    expect(again.stdout).not.toMatch(/checkpoint\.[^"]*\.jsonl"[^}]*"(waiting|core|unknown)"/);
  });
});

describe("ACP session metadata (fixture acp-session-meta)", () => {
  it("doctor --fix moves entry.acp into the global acp_sessions row 9.6 reads, and out of the entry", async () => {
    const state = makeTempState("migration/acp-session-meta");
    const run = await runInProcess(["doctor", "--fix", "--yes", "--no-backup"], state.env);
    expect(run.code, run.stderr).toBe(0);
    const global = path.join(state.stateDir, "state/openclaw.sqlite");
    const agent = path.join(state.stateDir, "agents/main/agent/openclaw-agent.sqlite");
    const rows = cli<Record<string, unknown>>(global, "SELECT * FROM acp_sessions ORDER BY session_key");
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      session_key: "agent:main:acp:codex-1",
      session_id: "s-acp",
      backend: "acpx",
      agent: "codex",
      runtime_session_name: "codex-1",
      mode: "persistent",
      cwd: "/home/demo/project",
      state: "idle",
      last_activity_at: 1767225590000,
      last_error: null,
    });
    expect(JSON.parse(rows[0]!.identity_json as string)).toEqual({ state: "resolved", acpxSessionId: "acpx-42", source: "status", lastUpdatedAt: 1767225500000 });
    expect(JSON.parse(rows[0]!.runtime_options_json as string)).toEqual({ model: "gpt-5" });
    // The session itself: no acp left in the entry, acp_owned 0, no provenance (9.6 moves it before its session import).
    const node = cli<{ entry_json: string; legacy_acp_migration_json: string | null }>(agent, "SELECT entry_json, legacy_acp_migration_json FROM session_nodes WHERE session_key = 'agent:main:acp:codex-1'");
    expect(JSON.parse(node[0]!.entry_json)).not.toHaveProperty("acp");
    expect(node[0]!.legacy_acp_migration_json).toBeNull();
    expect(cli(agent, "SELECT acp_owned FROM session_windows WHERE session_id = 's-acp'")).toEqual([{ acp_owned: 0 }]);
    // Metadata 9.6 could not store (no runtimeSessionName, mode, lastActivityAt) stays in the entry, where its runtime reads it.
    const [broken] = cli<{ entry_json: string }>(agent, "SELECT entry_json FROM session_nodes WHERE session_key = 'agent:main:acp:broken'");
    expect(JSON.parse(broken!.entry_json).acp).toEqual({ backend: "acpx", agent: "codex", state: "idle" });
    expect(cli(agent, "SELECT acp_owned FROM session_windows WHERE session_id = 's-acp-broken'")).toEqual([{ acp_owned: 1 }]);
  });
});
