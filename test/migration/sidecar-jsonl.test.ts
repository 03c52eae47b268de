// JSONL sidecars in a sessions dir are not transcripts: trajectory files import as run events, ACP stream logs
// and run-event files under a transcript's name are reported (skipped with a reason), never "missing session header".
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { makeTempState } from "../helpers/temp-state.js";
import { agentDbFile, migrate, rows } from "../helpers/migration.js";

describe("sidecar JSONL files", () => {
  it("classifies each file by name and shape, imports trajectories, and the run converges without warnings", async () => {
    const { paths, stateDir } = makeTempState("migration/sidecar-jsonl");
    const { plan, run } = await migrate(paths);
    const byPath = Object.fromEntries(plan!.sources.map((s) => [path.posix.basename(s.relativePath), s]));
    expect(Object.fromEntries(Object.entries(byPath).map(([name, s]) => [name, [s.kind, s.action]]))).toEqual({
      "sessions.json": ["sessions-index", "import"],
      "s-1.jsonl": ["transcript", "import"],
      "misnamed.jsonl": ["transcript", "skip"],
      "s-1.trajectory.jsonl": ["trajectory", "import"],
      "s-gone.trajectory.jsonl": ["trajectory", "import"],
      "s-1.acp-stream.jsonl": ["acp-stream", "skip"],
    });
    expect(byPath["misnamed.jsonl"]!.reason).toMatch(/not a transcript: its first line is a run event/);
    expect(byPath["s-1.acp-stream.jsonl"]!.reason).toMatch(/ACP parent-stream debug log: not a transcript and not imported/);
    expect(JSON.stringify(run)).not.toMatch(/missing session header/);
    const db = agentDbFile(paths);
    const events = rows<{ session_id: string; run_id: string; seq: number; event_json: string; created_at: number }>(db, "SELECT * FROM trajectory_runtime_events ORDER BY session_id, seq");
    expect(events.map((e) => [e.session_id, e.run_id, e.seq, JSON.parse(e.event_json).type, e.created_at])).toEqual([
      ["s-1", "run-1", 1, "session.started", Date.parse("2026-05-02T10:00:05.000Z")],
      ["s-1", "run-1", 2, "model.completed", Date.parse("2026-05-02T10:00:09.250Z")],
      ["s-1", "run-1", 3, "session.ended", Date.parse("2026-05-02T10:00:09.500Z")],
      ["s-gone", "run-9", 1, "session.started", Date.parse("2026-05-03T10:00:00.000Z")],
      ["s-gone", "run-9", 2, "session.ended", Date.parse("2026-05-03T10:00:01.000Z")],
    ]);
    // A trajectory of a session nothing else names keeps its events under the key 2026.9.6 gives unregistered history.
    expect(rows(db, "SELECT session_key FROM sessions WHERE session_id = 's-gone'")).toEqual([{ session_key: "agent:main:recovered:s-gone" }]);
    const gone = run.sources.find((s) => s.relativePath.endsWith("s-gone.trajectory.jsonl"))!;
    expect(gone.warnings.join()).toMatch(/s-gone\.trajectory\.jsonl:3: truncated final line dropped/);
    // The reported files stay where they are.
    for (const name of ["misnamed.jsonl", "s-1.acp-stream.jsonl"]) expect(fs.existsSync(path.join(stateDir, "agents/main/sessions", name))).toBe(true);
    // A second run imports nothing new and only reports the two files again (skipped, not failed).
    const again = await migrate(paths);
    expect(again.run.status).toBe("completed");
    expect(again.run.sources.map((s) => [path.posix.basename(s.relativePath), s.status])).toEqual([["misnamed.jsonl", "skipped"], ["s-1.acp-stream.jsonl", "skipped"]]);
  });

  it("fails a trajectory with a bad middle line with file:line, quoting nothing", async () => {
    const { paths, stateDir } = makeTempState();
    const dir = path.join(stateDir, "agents/main/sessions");
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, "t.trajectory.jsonl"), '{"type":"session.started","runId":"r"}\nSECRET-TOKEN-123 {\n{"type":"session.ended","runId":"r"}\n');
    const { run } = await migrate(paths);
    expect(run.sources[0]).toMatchObject({ status: "failed" });
    expect(run.sources[0]!.reason).toMatch(/t\.trajectory\.jsonl:2: invalid JSON/);
    expect(JSON.stringify(run)).not.toContain("SECRET");
  });
});
