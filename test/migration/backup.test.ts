// The pre-migration backup: taken through createBackup() before any import, verified, holding the original files.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { verifyBackup } from "../../src/backup/verify-archive.js";
import { makeTempDir, makeTempState, runInProcess } from "../helpers/temp-state.js";
import { rows, stagedDbFile } from "../helpers/migration.js";

function sha256(file: string): string {
  return crypto.createHash("sha256").update(fs.readFileSync(file)).digest("hex");
}

describe("pre-migration backup", () => {
  it("is written before the import, verifies, and holds every legacy file as it was", async () => {
    const { env, stateDir, paths } = makeTempState("legacy-state");
    const legacy = ["agents/main/sessions/sessions.json", "agents/main/sessions/s-main.jsonl", "agents/main/sessions/s-ops.jsonl", "sessions/sessions.json", "sessions/s-root-dm.jsonl", "agent/models.json"];
    const originals = Object.fromEntries(legacy.map((rel) => [rel, sha256(path.join(stateDir, rel))]));
    const backupDir = makeTempDir("ocs-backups-");

    const run = await runInProcess(["doctor", "--fix", "--yes", "--json", "--backup-dir", backupDir], env);
    expect(run.code).toBe(0);
    const doc = JSON.parse(run.stdout);
    const { backupPath, status, backupSkipped } = doc.migration.run;
    // "warning": the fixture's s-lost.jsonl is an orphan transcript (always a warning); the exit code stays 0.
    expect({ status, backupSkipped }).toEqual({ status: "warning", backupSkipped: false });
    expect(path.dirname(backupPath)).toBe(backupDir);
    expect(fs.statSync(backupPath).mode & 0o777).toBe(0o600);
    for (const rel of legacy) expect(fs.existsSync(path.join(stateDir, rel))).toBe(false);

    const verified = await verifyBackup(backupPath);
    expect(verified.problems).toEqual([]);
    expect(verified.ok).toBe(true);
    const archived = new Map(verified.manifest!.files.map((f) => [f.archivePath, f.sha256]));
    // The state dir's asset prefix inside the archive, found from a file only it holds.
    const config = [...archived.keys()].find((p) => p.endsWith("/openclaw.json"))!;
    const prefix = config.slice(0, -"openclaw.json".length);
    for (const [rel, sum] of Object.entries(originals)) expect(archived.get(`${prefix}${rel}`), rel).toBe(sum);
    // No agent DB existed before the migration, so the archive holds none: it is the pre-import state.
    expect(verified.manifest!.databases.filter((d) => d.role === "agent")).toEqual([]);
    // The run ends in OpenClaw's format, whose word for a good backup is "ok" (the staging ledger said "completed").
    expect(rows(paths.globalDbPath, "SELECT status FROM backup_runs")).toEqual([{ status: "ok" }]);
    const [report] = rows<{ report_json: string }>(stagedDbFile(paths), "SELECT report_json FROM migration_runs");
    expect(JSON.parse(report!.report_json).backupPath).toBe(backupPath);
  });

  it("is not taken with --no-backup, and the run says so", async () => {
    const { env } = makeTempState("migration/simple");
    const backupDir = makeTempDir("ocs-backups-");
    const run = await runInProcess(["doctor", "--fix", "--yes", "--json", "--no-backup", "--backup-dir", backupDir], env);
    const doc = JSON.parse(run.stdout);
    expect(doc.migration.run).toMatchObject({ backupPath: null, backupSkipped: true, warnings: [expect.stringMatching(/^NO BACKUP/)] });
    expect(fs.readdirSync(backupDir)).toEqual([]);
  });
});
