// The run report goes in as UTF-8 bytes stored as TEXT: the same JSON, inserted or updated, readable by sqlite3.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { finishRun, parseRunReport, runReportBytes, startRun, type RunReport } from "../../src/migration/ledger.js";
import type { SourceOutcome } from "../../src/migration/types.js";
import { openGlobalDatabase } from "../../src/state/state-databases.js";
import { makeTempState } from "../helpers/temp-state.js";

function report(count: number): RunReport {
  const sources = Array.from({ length: count }, (_, i) => ({ kind: "transcript", relativePath: `agents/main/sessions/s-${i}.jsonl`, status: "imported", note: "é \u2028 😀" }) as unknown as SourceOutcome);
  return {
    kind: "legacy-state",
    stateDir: "/state",
    backupPath: null,
    backupSkipped: false,
    replanned: false,
    plan: { fingerprint: "f" },
    sources,
    changes: ["imported"],
    warnings: [],
    totals: { sources: count, imported: count, alreadyImported: 0, failed: 0, skipped: 0, retired: 0, records: 0, bytes: 0 },
  };
}

describe("finishRun", () => {
  it("writes the same JSON as JSON.stringify (sources last), for no, one and many outcomes", () => {
    for (const n of [0, 1, 3000]) expect(JSON.parse(runReportBytes(report(n)).toString("utf8"))).toEqual(JSON.parse(JSON.stringify(report(n))));
  });

  it("updates the running row, inserts a missing one, and stores TEXT", () => {
    const { paths, stateDir } = makeTempState();
    fs.mkdirSync(stateDir, { recursive: true });
    const db = openGlobalDatabase(paths, { mode: "write", create: true });
    try {
      startRun(db, "run-a", 1, { kind: "legacy-state", stateDir: "/state", backupPath: "/b/a.tar.gz", backupSkipped: false, phase: "importing" });
      finishRun(db, { runId: "run-a", startedAt: 1, finishedAt: 2, status: "completed" }, { ...report(2), backupPath: "/b/a.tar.gz" });
      finishRun(db, { runId: "run-b", startedAt: 3, finishedAt: 4, status: "failed" }, { ...report(0), error: "backup failed" });
      const rows = db.prepare("SELECT id, started_at, finished_at, status, typeof(report_json) AS type, report_json FROM migration_runs ORDER BY id").all() as Array<Record<string, unknown>>;
      expect(rows.map(({ report_json: _, ...r }) => r)).toEqual([
        { id: "run-a", started_at: 1, finished_at: 2, status: "completed", type: "text" },
        { id: "run-b", started_at: 3, finished_at: 4, status: "failed", type: "text" },
      ]);
      expect(parseRunReport(rows[0]!.report_json as string)).toMatchObject({ backupPath: "/b/a.tar.gz", sources: [{ relativePath: "agents/main/sessions/s-0.jsonl" }, { note: "é \u2028 😀" }] });
    } finally {
      db.close();
    }
    // An independent reader sees valid JSON text.
    const cli = spawnSync("sqlite3", [paths.globalDbPath, "SELECT json_valid(report_json), json_extract(report_json, '$.sources[1].note') FROM migration_runs WHERE id = 'run-a'"], { encoding: "utf8" });
    expect(cli.stdout.trim()).toBe("1|é \u2028 😀");
  });
});
