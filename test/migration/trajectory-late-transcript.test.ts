// Issue 24: a lone trajectory imported in one `doctor --fix` run (kept under agent:<id>:recovered:<sessionId>), its
// transcript and index entry arriving for a later run (fixtures trajectory-late-transcript and …-run2), through the
// real binary. The later run must end where one run over all three files would: the index's session, its transcript
// and the run events on it, no placeholder left, nothing duplicated, the placeholder rows kept.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { fixturesDir, makeTempState, runBin, type CliRun } from "../helpers/temp-state.js";

const SESSIONS = "agents/main/sessions";

/** The sqlite3 CLI, an independent reader. */
function cli<T = Record<string, unknown>>(file: string, sql: string): T[] {
  const out = execFileSync("sqlite3", ["-readonly", "-bail", "-json", file, sql], { encoding: "utf8" });
  return out.trim() === "" ? [] : (JSON.parse(out) as T[]);
}

async function fix(env: NodeJS.ProcessEnv): Promise<CliRun & { json: any }> {
  const run = await runBin(["doctor", "--fix", "--yes", "--no-backup", "--json"], env, { timeoutMs: 120_000 });
  return { ...run, json: JSON.parse(run.stdout) };
}

/** Run 1: the trajectory alone. */
async function firstRun() {
  const state = makeTempState("migration/trajectory-late-transcript");
  const one = await fix(state.env);
  expect(one.code, one.stderr).toBe(0);
  const db = path.join(state.stateDir, "agents/main/agent/openclaw-agent.sqlite");
  expect(cli(db, "SELECT session_key, current_session_id FROM session_nodes")).toEqual([{ session_key: "agent:main:recovered:s-late", current_session_id: "s-late" }]);
  expect(cli(db, "SELECT session_id, seq, run_id FROM trajectory_runtime_events ORDER BY seq")).toEqual([
    { session_id: "s-late", seq: 1, run_id: "run-1" },
    { session_id: "s-late", seq: 2, run_id: "run-1" },
  ]);
  return { ...state, db };
}

/** The files of run 2, copied in (all of them, or only the transcript). */
function addLater(stateDir: string, names: string[]): void {
  fs.mkdirSync(path.join(stateDir, SESSIONS), { recursive: true });
  for (const name of names) fs.copyFileSync(path.join(fixturesDir, "migration/trajectory-late-transcript-run2", SESSIONS, name), path.join(stateDir, SESSIONS, name));
}

describe("a trajectory imported before its transcript (fixture trajectory-late-transcript)", () => {
  it("the later run moves the recovered session under the index's key, with its transcript and run events, nothing lost or doubled", async () => {
    const state = await firstRun();
    addLater(state.stateDir, ["s-late.jsonl", "sessions.json"]);
    const two = await fix(state.env);
    expect(two.code, two.stderr).toBe(0);
    expect(two.json.migration.run.status).toBe("completed");
    expect(two.json.migration.run.sources.map((s: any) => [s.relativePath, s.status])).toEqual([
      [`${SESSIONS}/sessions.json`, "imported"],
      [`${SESSIONS}/s-late.jsonl`, "imported"],
    ]);
    // No "kept OpenClaw's newer row": the placeholder never outranks the index.
    expect(two.json.migration.run.warnings.filter((w: string) => !w.startsWith("NO BACKUP"))).toEqual([]);
    const moved = two.json.migration.run.changes.find((c: string) => c.startsWith("session s-late moved"));
    expect(moved).toMatch(/from agent:main:recovered:s-late \(an earlier run found no index naming it\) to agent:main:main/);

    // One session: the index's key and entry, its window, the transcript's events and the run events on it.
    expect(cli(state.db, "SELECT session_key, current_session_id FROM session_nodes")).toEqual([{ session_key: "agent:main:main", current_session_id: "s-late" }]);
    const [node] = cli<{ entry_json: string }>(state.db, "SELECT entry_json FROM session_nodes");
    expect(JSON.parse(node!.entry_json)).toMatchObject({ sessionId: "s-late", updatedAt: 1778140801000, chatType: "direct", label: "late" });
    expect(cli(state.db, "SELECT session_id, session_key, chat_type, updated_at FROM session_windows")).toEqual([
      { session_id: "s-late", session_key: "agent:main:main", chat_type: "direct", updated_at: 1778140801000 },
    ]);
    expect(cli(state.db, "SELECT seq, json_extract(event_json, '$.id') AS id FROM transcript_events WHERE session_id = 's-late' ORDER BY seq")).toEqual([
      { seq: 0, id: "s-late" },
      { seq: 1, id: "m1" },
      { seq: 2, id: "m2" },
    ]);
    expect(cli(state.db, "SELECT session_id, seq, run_id, json_extract(event_json, '$.type') AS type FROM trajectory_runtime_events ORDER BY seq")).toEqual([
      { session_id: "s-late", seq: 1, run_id: "run-1", type: "session.started" },
      { session_id: "s-late", seq: 2, run_id: "run-1", type: "model.completed" },
    ]);
    expect(cli(state.db, "SELECT count(*) AS n FROM session_nodes WHERE session_key LIKE '%:recovered:%' OR session_key LIKE '%:orphan:%'")).toEqual([{ n: 0 }]);

    // The placeholder's rows are kept beside the merge, not dropped.
    const keptFile = moved.match(/kept in (\S+agent-main\.sqlite)$/)![1];
    const kept = cli<{ side: string; table_name: string; row_json: string }>(keptFile, "SELECT side, table_name, row_json FROM merge_kept ORDER BY table_name");
    expect(kept.map((k) => [k.side, k.table_name, JSON.parse(k.row_json).session_key])).toEqual([
      ["live-replaced", "session_nodes", "agent:main:recovered:s-late"],
      ["live-replaced", "session_windows", "agent:main:recovered:s-late"],
    ]);
    // The sources are retired, the sessions dir is gone.
    expect(fs.existsSync(path.join(state.stateDir, SESSIONS))).toBe(false);

    // A third run has nothing to do and changes nothing; a plain doctor finds nothing left.
    const before = cli(state.db, "SELECT (SELECT count(*) FROM session_nodes) AS nodes, (SELECT count(*) FROM session_windows) AS windows, (SELECT count(*) FROM transcript_events) AS events, (SELECT count(*) FROM trajectory_runtime_events) AS runs");
    const three = await fix(state.env);
    expect(three.code, three.stderr).toBe(0);
    expect(three.json.migration?.run).toBeUndefined();
    expect(cli(state.db, "SELECT (SELECT count(*) FROM session_nodes) AS nodes, (SELECT count(*) FROM session_windows) AS windows, (SELECT count(*) FROM transcript_events) AS events, (SELECT count(*) FROM trajectory_runtime_events) AS runs")).toEqual(before);
    expect(before).toEqual([{ nodes: 1, windows: 1, events: 3, runs: 2 }]);
  }, 240_000);

  it("an index arriving after its transcript and trajectory were recovered: the session takes the index's key and entry, keeps both", async () => {
    const state = makeTempState("migration/trajectory-late-transcript");
    addLater(state.stateDir, ["s-late.jsonl"]);
    const one = await fix(state.env);
    expect(one.code, one.stderr).toBe(0);
    addLater(state.stateDir, ["sessions.json"]);
    const two = await fix(state.env);
    expect(two.code, two.stderr).toBe(0);
    expect(two.json.migration.run.status).toBe("completed");
    expect(two.json.migration.run.changes.some((c: string) => c.startsWith("session s-late moved from agent:main:recovered:s-late"))).toBe(true);
    const db = path.join(state.stateDir, "agents/main/agent/openclaw-agent.sqlite");
    const [node] = cli<{ session_key: string; entry_json: string }>(db, "SELECT session_key, entry_json FROM session_nodes");
    expect(node!.session_key).toBe("agent:main:main");
    // The index's entry, not the recovered one (no archivedAt).
    expect(JSON.parse(node!.entry_json)).not.toHaveProperty("archivedAt");
    expect(JSON.parse(node!.entry_json)).toMatchObject({ chatType: "direct", label: "late" });
    // What only the recovered row knew (the transcript's time) stays.
    expect(cli(db, "SELECT session_key, transcript_updated_at FROM session_windows")).toEqual([{ session_key: "agent:main:main", transcript_updated_at: 1778140801000 }]);
    expect(cli(db, "SELECT (SELECT count(*) FROM transcript_events) AS events, (SELECT count(*) FROM trajectory_runtime_events) AS runs")).toEqual([{ events: 3, runs: 2 }]);
  }, 240_000);

  it("a transcript arriving without an index joins the recovered session (still the placeholder key, as 9.6 files it)", async () => {
    const state = await firstRun();
    addLater(state.stateDir, ["s-late.jsonl"]);
    const two = await fix(state.env);
    expect(two.code, two.stderr).toBe(0);
    // The orphan transcript's warning is the run's only one; the exit code stays 0 (a warning, not a failure).
    expect(two.json.migration.run.status).toBe("warning");
    expect(two.json.migration.run.changes.some((c: string) => c.startsWith("session s-late moved"))).toBe(false);
    expect(cli(state.db, "SELECT session_key, current_session_id FROM session_nodes")).toEqual([{ session_key: "agent:main:recovered:s-late", current_session_id: "s-late" }]);
    expect(cli(state.db, "SELECT session_id, session_key FROM session_windows")).toEqual([{ session_id: "s-late", session_key: "agent:main:recovered:s-late" }]);
    expect(cli(state.db, "SELECT count(*) AS n FROM transcript_events WHERE session_id = 's-late'")).toEqual([{ n: 3 }]);
    expect(cli(state.db, "SELECT count(*) AS n FROM trajectory_runtime_events WHERE session_id = 's-late'")).toEqual([{ n: 2 }]);
  }, 240_000);
});
