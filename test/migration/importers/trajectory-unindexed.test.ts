// Trajectory sidecars of unindexed sessions (issue 24), fixture trajectory-unindexed. What openclaw@2026.9.6's dist
// does (doctor-session-sqlite-*.mjs: discoverLegacyHistoricalTranscripts, planImportedTranscriptArtifactsToArchive,
// archiveLegacyArtifacts): an unindexed transcript becomes `agent:<id>:recovered:<sessionId>` and its trajectory is
// archived under that key; a trajectory with no transcript is archived as unreferenced history. It imports no
// trajectory event; we keep them, under the same key (docs/migration.md, "where we differ").
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { makeTempState } from "../../helpers/temp-state.js";
import { agentDbFile, migrate, rows } from "../../helpers/migration.js";

describe("trajectory of an unindexed session (fixture trajectory-unindexed)", () => {
  it("joins the recovered transcript's session, and a lone one gets agent:<id>:recovered:<sessionId> (no orphan: key)", async () => {
    const { paths, stateDir } = makeTempState("migration/trajectory-unindexed");
    const mtime = Date.UTC(2026, 4, 7, 9);
    fs.utimesSync(path.join(stateDir, "agents/main/sessions/Gone-1.trajectory.jsonl"), new Date(mtime), new Date(mtime));
    const { run } = await migrate(paths);
    const db = agentDbFile(paths);
    expect(rows(db, "SELECT session_id, session_key FROM sessions ORDER BY session_id")).toEqual([
      // The session id as written (not lower-cased), like a recovered transcript.
      { session_id: "Gone-1", session_key: "agent:main:recovered:gone-1" },
      { session_id: "S-Lost", session_key: "agent:main:recovered:s-lost" },
      { session_id: "s-known", session_key: "agent:main:main" },
    ]);
    expect(rows(db, "SELECT count(*) AS n FROM sessions WHERE session_key LIKE '%:orphan:%'")).toEqual([{ n: 0 }]);
    expect(rows(db, "SELECT session_id, run_id, seq FROM trajectory_runtime_events ORDER BY session_id, seq")).toEqual([
      { session_id: "Gone-1", run_id: "run-g", seq: 1 },
      { session_id: "Gone-1", run_id: "run-g", seq: 2 },
      { session_id: "S-Lost", run_id: "run-l", seq: 1 },
      { session_id: "S-Lost", run_id: "run-l", seq: 2 },
      { session_id: "s-known", run_id: "run-k", seq: 1 },
      { session_id: "s-known", run_id: "run-k", seq: 2 },
    ]);
    // A trajectory alone is no session upstream: a bare row holds its events (dated by the file), no entry, no route.
    expect(rows(db, "SELECT created_at, updated_at FROM sessions WHERE session_id = 'Gone-1'")).toEqual([{ created_at: mtime, updated_at: mtime }]);
    expect(rows(db, "SELECT count(*) AS n FROM session_entries WHERE session_id = 'Gone-1'")).toEqual([{ n: 0 }]);
    // The recovered transcript's entry stays the only one for S-Lost (the trajectory adds no row).
    expect(rows(db, "SELECT session_key FROM session_entries WHERE session_id = 'S-Lost'")).toEqual([{ session_key: "agent:main:recovered:s-lost" }]);
    const outcome = (name: string) => run.sources.find((s) => s.relativePath.endsWith(name))!;
    expect(outcome("Gone-1.trajectory.jsonl")).toMatchObject({ status: "imported", rows: { sessions: 1, trajectory_runtime_events: 2 } });
    expect(outcome("Gone-1.trajectory.jsonl").notes.join()).toMatch(/no session Gone-1 in the index or transcripts: its run events are kept under agent:main:recovered:gone-1/);
    expect(outcome("S-Lost.trajectory.jsonl")).toMatchObject({ status: "imported", rows: { sessions: 0, trajectory_runtime_events: 2 } });
    expect(outcome("S-Lost.trajectory.jsonl").notes.join()).toMatch(/session S-Lost is unindexed: its run events are kept under agent:main:recovered:s-lost/);
    expect(outcome("s-known.trajectory.jsonl").notes.join()).not.toMatch(/unindexed|recovered/);
  });

  it("an orphan: row an earlier release wrote is still recognized on re-import: the events join it, no second session", async () => {
    const { paths, stateDir } = makeTempState("migration/trajectory-unindexed");
    const { run } = await migrate(paths);
    const db = agentDbFile(paths);
    // The shape our releases before issue 24 left for a lone trajectory: the lower-cased orphan key.
    const handle = new Database(db);
    handle.prepare("UPDATE sessions SET session_key = 'agent:main:orphan:gone-1' WHERE session_id = 'Gone-1'").run();
    handle.close();
    // The file comes back with one more event (restored from the retired copy and appended to).
    const retired = run.sources.find((s) => s.relativePath.endsWith("Gone-1.trajectory.jsonl"))!.retiredTo!;
    const file = path.join(stateDir, "agents/main/sessions/Gone-1.trajectory.jsonl");
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.copyFileSync(retired, file);
    fs.appendFileSync(file, '{"type":"session.started","ts":"2026-05-07T09:00:00.000Z","runId":"run-h","data":{}}\n');
    const again = await migrate(paths);
    expect(again.run.sources.map((s) => [path.basename(s.relativePath), s.status])).toEqual([["Gone-1.trajectory.jsonl", "imported"]]);
    expect(again.run.sources[0]!.notes.join()).toMatch(/session Gone-1 is unindexed: its run events are kept under agent:main:orphan:gone-1/);
    expect(rows(db, "SELECT session_key FROM sessions WHERE session_id = 'Gone-1'")).toEqual([{ session_key: "agent:main:orphan:gone-1" }]);
    expect(rows(db, "SELECT count(*) AS n FROM sessions WHERE session_key LIKE '%:recovered:gone-1'")).toEqual([{ n: 0 }]);
    expect(rows(db, "SELECT run_id, seq FROM trajectory_runtime_events WHERE session_id = 'Gone-1' ORDER BY seq")).toEqual([
      { run_id: "run-g", seq: 1 },
      { run_id: "run-g", seq: 2 },
      { run_id: "run-h", seq: 3 },
    ]);
  });
});
