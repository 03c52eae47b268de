// recordBackupRun writes create's backup_runs row with a raw handle: same rows as the typed path, in this tool's format and in OpenClaw's.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { recordBackupRun } from "../../src/backup/record-backup-run.js";
import { readBackupRuns } from "../../src/backup/backup-runs.js";
import { OperationError } from "../../src/core/errors.js";
import { seedState } from "../helpers/backup-state.js";
import { readRawEntries } from "../helpers/tar-tools.js";
import { makeTempState, repoRoot } from "../helpers/temp-state.js";

const FIXTURE = path.join(repoRoot, "fixtures", "backup", "openclaw-2026.9.6", "tiny-state.tar.gz");
const summary = { runId: "r1", createdAt: "2026-12-06T00:00:00.000Z", totals: { files: 1, databases: 1, bytes: 10 } } as never;

function rows(file: string): Array<Record<string, unknown>> {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare("SELECT id, created_at, archive_path, status, manifest_json FROM backup_runs ORDER BY created_at").all() as Array<Record<string, unknown>>;
  } finally {
    db.close();
  }
}

describe("recordBackupRun", () => {
  it("records completed and failed runs in this tool's format, nulls where nothing is known, read back by backup list", () => {
    const state = makeTempState();
    seedState(state);
    const reuse = { compression: "gzip", archiveSize: 100, payloadStart: 42, snapshots: [] } as never;
    expect(recordBackupRun(state.paths, { runId: "ok", createdAt: new Date(1000), archivePath: "/b/a.tar.gz", status: "completed", manifest: summary, reuse })).toBeNull();
    expect(recordBackupRun(state.paths, { runId: "bad", createdAt: new Date(2000), archivePath: null, status: "failed", error: new OperationError("snapshot_failed", "no") })).toBeNull();
    expect(recordBackupRun(state.paths, { runId: "streamed", createdAt: new Date(3000), archivePath: null, status: "completed", manifest: summary })).toBeNull();
    const got = rows(state.paths.globalDbPath);
    expect(got.map((r) => [r.id, r.created_at, r.archive_path, r.status])).toEqual([
      ["ok", 1000, "/b/a.tar.gz", "completed"],
      ["bad", 2000, null, "failed"],
      ["streamed", 3000, null, "completed"],
    ]);
    expect(JSON.parse(got[0]!.manifest_json as string)).toEqual({ ...(summary as object), reuse: { compression: "gzip", archiveSize: 100, payloadStart: 42, snapshots: [] } });
    expect(JSON.parse(got[1]!.manifest_json as string)).toEqual({ error: { code: "snapshot_failed", message: "no" } });
    expect(readBackupRuns(state.paths).runs?.map((r) => r.id)).toEqual(["streamed", "bad", "ok"]);
  });

  it("in OpenClaw's format (archive_path, manifest_json NOT NULL) a failed run's missing values go in as empty ones", () => {
    const state = makeTempState();
    const global = readRawEntries(FIXTURE).find((e) => e.path.endsWith("/state/openclaw.sqlite"))!;
    fs.mkdirSync(path.dirname(state.paths.globalDbPath), { recursive: true, mode: 0o700 });
    fs.writeFileSync(state.paths.globalDbPath, global.data, { mode: 0o600 });
    const before = rows(state.paths.globalDbPath).length;
    expect(recordBackupRun(state.paths, { runId: "failed-oc", createdAt: new Date(5000), archivePath: null, status: "failed" })).toBeNull();
    expect(recordBackupRun(state.paths, { runId: "ok-oc", createdAt: new Date(6000), archivePath: "/b/x.tar.gz", status: "completed", manifest: summary })).toBeNull();
    const added = rows(state.paths.globalDbPath).slice(before);
    expect(added.map((r) => [r.id, r.archive_path, r.status, r.manifest_json === "{}"])).toEqual([
      ["failed-oc", "", "failed", true],
      ["ok-oc", "/b/x.tar.gz", "completed", false],
    ]);
  });

  it("warns instead of throwing when the ledger cannot take the row, and never creates a global DB", () => {
    const none = makeTempState();
    expect(recordBackupRun(none.paths, { runId: "x", createdAt: new Date(), archivePath: null, status: "failed" })).toMatch(/No global database .* not recorded in backup_runs/);
    expect(fs.existsSync(none.paths.globalDbPath)).toBe(false);

    const foreign = makeTempState();
    fs.mkdirSync(path.dirname(foreign.paths.globalDbPath), { recursive: true, mode: 0o700 });
    const db = new Database(foreign.paths.globalDbPath);
    db.exec("CREATE TABLE t (x)");
    db.close();
    expect(recordBackupRun(foreign.paths, { runId: "x", createdAt: new Date(), archivePath: "/a", status: "completed", manifest: summary })).toMatch(/Could not record this run in backup_runs of .*no such table: backup_runs/);
  });

  it("never writes through a symlink at the ledger's path (it could lead out of the state dir) nor into a FIFO", () => {
    const outside = makeTempState();
    seedState(outside);
    const before = rows(outside.paths.globalDbPath).length;
    const linked = makeTempState();
    fs.mkdirSync(path.dirname(linked.paths.globalDbPath), { recursive: true, mode: 0o700 });
    fs.symlinkSync(outside.paths.globalDbPath, linked.paths.globalDbPath);
    expect(recordBackupRun(linked.paths, { runId: "x", createdAt: new Date(), archivePath: "/a", status: "completed", manifest: summary })).toMatch(/openclaw\.sqlite cannot be used: it is a symbolic link \(never followed\), so this run was not recorded/);
    expect(rows(outside.paths.globalDbPath).length).toBe(before);

    const fifo = makeTempState();
    fs.mkdirSync(path.dirname(fifo.paths.globalDbPath), { recursive: true, mode: 0o700 });
    expect(spawnSync("mkfifo", [fifo.paths.globalDbPath]).status).toBe(0);
    expect(recordBackupRun(fifo.paths, { runId: "x", createdAt: new Date(), archivePath: "/a", status: "completed", manifest: summary })).toMatch(/cannot be used: it is a FIFO, so this run was not recorded/);
  });
});
