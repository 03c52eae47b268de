// Issue 24: compaction checkpoints whose id is not a UUID (fixture checkpoint-numbered). OpenClaw 2026.9.6 knows a
// checkpoint only by a UUID id (artifacts.ts: COMPACTION_CHECKPOINT_TRANSCRIPT_RE) and lists `<sid>.checkpoint.3.jsonl`
// as a primary transcript, then refuses it: its file-name id (`<sid>.checkpoint.3`) is not its header's (`<sid>`), so
// readLegacyPrimaryTranscriptIdentity throws and the file is deferred (historical_transcript_deferred), never imported.
// Ours imports no checkpoint of any id either: the session comes from its transcript alone, the files stay.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { classifyPath } from "../../src/migration/legacy-inventory.js";
import { planMigration } from "../../src/migration/plan-migration.js";
import { makeTempState, runBin } from "../helpers/temp-state.js";

const SESSIONS = "agents/main/sessions";
const TOPIC = "0d4c3b2a-1e0f-4a9b-8c7d-6e5f4a3b2c1d";
const CHECKPOINTS = [`${SESSIONS}/s-num.checkpoint.3.jsonl`, `${SESSIONS}/s-gone.checkpoint.1.jsonl`, `${SESSIONS}/${TOPIC}-topic-7.checkpoint.2.jsonl`];

/** The sqlite3 CLI, an independent reader. */
function cli<T = Record<string, unknown>>(file: string, sql: string): T[] {
  const out = execFileSync("sqlite3", ["-readonly", "-bail", "-json", file, sql], { encoding: "utf8" });
  return out.trim() === "" ? [] : (JSON.parse(out) as T[]);
}

describe("numbered compaction checkpoints (fixture checkpoint-numbered)", () => {
  it("plans only the transcript; each numbered checkpoint is kept OpenClaw state, with what 9.6 does with it", async () => {
    const { paths, stateDir } = makeTempState("migration/checkpoint-numbered");
    const plan = await planMigration({ paths });
    expect(plan.sources.map((s) => [s.kind, s.relativePath]).sort()).toEqual([
      ["sessions-index", `${SESSIONS}/sessions.json`],
      ["transcript", `${SESSIONS}/s-num.jsonl`],
    ]);
    for (const rel of CHECKPOINTS) {
      const c = classifyPath(stateDir, path.join(stateDir, rel), new Set());
      expect(c, rel).toMatchObject({ class: "current", owner: "OpenClaw" });
      expect(c.reason).toMatch(/non-UUID id, `\.checkpoint\.3`, it reads as a transcript whose header names another session and does not import either/);
    }
  });

  it("doctor --fix (the binary) imports s-num once from its transcript; no checkpoint becomes a session or adds an event; the files stay byte for byte", async () => {
    const state = makeTempState("migration/checkpoint-numbered");
    const before = CHECKPOINTS.map((rel) => fs.readFileSync(path.join(state.stateDir, rel)));
    const run = await runBin(["doctor", "--fix", "--yes", "--no-backup", "--json"], state.env, { timeoutMs: 120_000 });
    expect(run.code, run.stderr).toBe(0);
    const json = JSON.parse(run.stdout);
    expect(json.migration.run.status).toBe("completed");
    const db = path.join(state.stateDir, "agents/main/agent/openclaw-agent.sqlite");
    expect(cli(db, "SELECT session_key, current_session_id FROM session_nodes")).toEqual([{ session_key: "agent:main:main", current_session_id: "s-num" }]);
    expect(cli(db, "SELECT session_id FROM session_windows")).toEqual([{ session_id: "s-num" }]);
    // The transcript's three lines, not doubled by the checkpoint's copy of its first two.
    expect(cli(db, "SELECT json_extract(event_json, '$.id') AS id FROM transcript_events ORDER BY seq")).toEqual([{ id: "s-num" }, { id: "e1" }, { id: "e2" }]);
    CHECKPOINTS.forEach((rel, i) => expect(fs.readFileSync(path.join(state.stateDir, rel))).toEqual(before[i]));
    // A second doctor finds nothing waiting: the checkpoints are OpenClaw's own files, listed as such (info), exit 0.
    const again = await runBin(["doctor", "--json"], state.env, { timeoutMs: 120_000 });
    expect(again.code, again.stderr).toBe(0);
    const report = JSON.parse(again.stdout) as { summary: { errors: number; warnings: number }; findings: Array<{ id: string; severity: string; detail?: string }> };
    expect(report.summary).toMatchObject({ errors: 0, warnings: 0 });
    const legacy = report.findings.filter((f) => f.id.startsWith("legacy"));
    expect(legacy.map((f) => [f.id, f.severity])).toEqual([["legacy.openclaw-own", "info"]]);
    expect(legacy[0]!.detail!.split("\n").map((line) => line.split(" (file)")[0]).sort()).toEqual([...CHECKPOINTS].sort());
  }, 240_000);
});
