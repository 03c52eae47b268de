// The backup_runs ledger in the global DB, read back by `backup list` and pruned (create writes it: record-backup-run.ts).
import fs from "node:fs";
import path from "node:path";
import { describeError } from "../core/errors.js";
import type { StatePaths } from "../state/paths.js";
import type { GlobalDB } from "../state/generated/global-db.js";
import { openDatabase, type OpenMode, type StateDatabase } from "../state/database.js";

export interface BackupRunRow {
  id: string;
  createdAt: number;
  archivePath: string | null;
  status: string;
}

/**
 * backup_runs and migration_runs have the same columns in this tool's format and in OpenClaw's (schema/openclaw/),
 * so the ledger is read and written in either; a format without them fails the statement, which callers report.
 */
function openLedger(paths: StatePaths, mode: OpenMode): StateDatabase<GlobalDB> {
  return openDatabase<GlobalDB>({ path: paths.globalDbPath, role: "global", root: paths.stateDir, mode, formats: "any" });
}

/** Every recorded run, newest first; null when there is no global DB (nothing is created to find out). */
export function readBackupRuns(paths: StatePaths): { runs: BackupRunRow[] | null; warning?: string } {
  if (!fs.existsSync(paths.globalDbPath)) return { runs: null };
  try {
    const db = openLedger(paths, "read");
    try {
      const rows = db.all(db.q.selectFrom("backup_runs").select(["id", "created_at", "archive_path", "status"]).orderBy("created_at", "desc"));
      return { runs: rows.map((r) => ({ id: r.id, createdAt: r.created_at, archivePath: r.archive_path === "" ? null : r.archive_path, status: r.status })) };
    } finally {
      db.close();
    }
  } catch (error) {
    return { runs: null, warning: `Could not read backup_runs from ${paths.globalDbPath} (${describeError(error)}).` };
  }
}

/** Every migration run's pre-migration archive (report_json.backupPath). Throws when the ledger cannot be read. */
export function readMigrationBackupPaths(paths: StatePaths): Array<{ runId: string; backupPath: string }> {
  if (!fs.existsSync(paths.globalDbPath)) return [];
  const db = openLedger(paths, "read");
  try {
    const rows = db.all(db.q.selectFrom("migration_runs").select(["id", "report_json"]));
    return rows.flatMap((row) => {
      let report: unknown;
      try {
        report = row.report_json ? JSON.parse(row.report_json) : null;
      } catch {
        return [];
      }
      const backupPath = typeof report === "object" && report !== null ? (report as { backupPath?: unknown }).backupPath : undefined;
      return typeof backupPath === "string" && backupPath !== "" ? [{ runId: row.id, backupPath }] : [];
    });
  } finally {
    db.close();
  }
}

function sameDir(a: string, b: string): boolean {
  const real = (p: string): string => {
    try {
      return fs.realpathSync(p);
    } catch {
      return path.resolve(p);
    }
  };
  return real(a) === real(b);
}

/**
 * Rows `backup prune` forgets: completed runs whose archive in `backupDir` is gone (or about to be: `goingAway`),
 * and failed runs older than the newest completed run whose archive still exists. Rows of archives elsewhere
 * stay (their disk may just not be mounted). Empty when the ledger cannot be read.
 */
export function staleRuns(paths: StatePaths, backupDir: string, goingAway: readonly string[]): Array<{ runId: string; archivePath: string | null; status: string; reason: string }> {
  const { runs } = readBackupRuns(paths);
  if (!runs) return [];
  const gone = new Set(goingAway);
  const present = (p: string | null): boolean => p !== null && !gone.has(p) && fs.existsSync(p);
  const newestOk = runs.find((r) => r.status === "completed" && present(r.archivePath))?.createdAt ?? null;
  return runs.flatMap((r) => {
    if (r.status === "completed" && r.archivePath && sameDir(path.dirname(r.archivePath), backupDir) && !present(r.archivePath)) {
      return [{ runId: r.id, archivePath: r.archivePath, status: r.status, reason: gone.has(r.archivePath) ? "archive pruned" : "archive missing" }];
    }
    if (r.status === "failed" && newestOk !== null && r.createdAt < newestOk) {
      return [{ runId: r.id, archivePath: r.archivePath, status: r.status, reason: "failed run followed by a completed backup" }];
    }
    return [];
  });
}

/** Deletes backup_runs rows by id; returns a warning instead of throwing (the archives are already handled). */
export function forgetRuns(paths: StatePaths, runIds: readonly string[]): string | null {
  if (runIds.length === 0 || !fs.existsSync(paths.globalDbPath)) return null;
  try {
    const db = openLedger(paths, "write");
    try {
      db.immediate(() => {
        for (let i = 0; i < runIds.length; i += 500) db.run(db.q.deleteFrom("backup_runs").where("id", "in", runIds.slice(i, i + 500)));
      });
    } finally {
      db.close();
    }
    return null;
  } catch (error) {
    return `Could not forget ${runIds.length} backup_runs row(s) in ${paths.globalDbPath} (${describeError(error)}); \`backup list\` will still show them.`;
  }
}
