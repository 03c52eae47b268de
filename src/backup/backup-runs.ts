// The backup_runs ledger in the global DB: one row per create (completed or failed), read back by `backup list`.
import fs from "node:fs";
import { describeError, isOpenclawStateError } from "../core/errors.js";
import type { StatePaths } from "../state/paths.js";
import { openGlobalDatabase } from "../state/state-databases.js";
import type { ManifestSummary } from "./manifest.js";
import type { LedgerReuseRow, ReuseRecord } from "./snapshot-reuse.js";

export interface BackupRunRow {
  id: string;
  createdAt: number;
  archivePath: string | null;
  status: string;
}

export interface RecordRunInput {
  runId: string;
  createdAt: Date;
  /** Null when the run failed before its archive path was known. */
  archivePath: string | null;
  status: "completed" | "failed";
  manifest?: ManifestSummary;
  /** Snapshots the next run may copy (verified runs only). */
  reuse?: ReuseRecord;
  error?: unknown;
}

/**
 * Records a run when the global DB exists; never creates it (a backup must not create state). Returns a
 * warning instead of throwing: a finished archive is not undone because its ledger row could not be written.
 */
export function recordBackupRun(paths: StatePaths, input: RecordRunInput): string | null {
  if (!fs.existsSync(paths.globalDbPath)) {
    return `No global database at ${paths.globalDbPath}, so this run was not recorded in backup_runs.`;
  }
  try {
    const db = openGlobalDatabase(paths, { mode: "write" });
    try {
      const error = input.error === undefined ? undefined : { code: isOpenclawStateError(input.error) ? input.error.code : "internal_error", message: describeError(input.error) };
      const payload = input.manifest ? { ...input.manifest, ...(input.reuse ? { reuse: input.reuse } : {}) } : error ? { error } : null;
      db.immediate(() =>
        db.run(
          db.q.insertInto("backup_runs").values({
            id: input.runId,
            created_at: input.createdAt.getTime(),
            archive_path: input.archivePath,
            status: input.status,
            manifest_json: payload === null ? null : JSON.stringify(payload),
          }),
        ),
      );
    } finally {
      db.close();
    }
    return null;
  } catch (error) {
    return `Could not record this run in backup_runs of ${paths.globalDbPath} (${describeError(error)}).`;
  }
}

/** Every recorded run, newest first; null when there is no global DB (nothing is created to find out). */
export function readBackupRuns(paths: StatePaths): { runs: BackupRunRow[] | null; warning?: string } {
  if (!fs.existsSync(paths.globalDbPath)) return { runs: null };
  try {
    const db = openGlobalDatabase(paths, { mode: "read" });
    try {
      const rows = db.all(db.q.selectFrom("backup_runs").select(["id", "created_at", "archive_path", "status"]).orderBy("created_at", "desc"));
      return { runs: rows.map((r) => ({ id: r.id, createdAt: r.created_at, archivePath: r.archive_path, status: r.status })) };
    } finally {
      db.close();
    }
  } catch (error) {
    return { runs: null, warning: `Could not read backup_runs from ${paths.globalDbPath} (${describeError(error)}).` };
  }
}

/** Rows that may hold reusable snapshots, newest first (at most `limit`); empty on any doubt. */
export function readReuseRows(paths: StatePaths, limit = 10): LedgerReuseRow[] {
  if (!fs.existsSync(paths.globalDbPath)) return [];
  try {
    const db = openGlobalDatabase(paths, { mode: "read" });
    try {
      const rows = db.all(
        db.q.selectFrom("backup_runs").select(["archive_path", "status", "manifest_json"]).where("status", "=", "completed").orderBy("created_at", "desc").limit(limit),
      );
      return rows.map((r) => ({ archivePath: r.archive_path, status: r.status, manifestJson: r.manifest_json }));
    } finally {
      db.close();
    }
  } catch {
    return [];
  }
}
