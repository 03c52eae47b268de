// Appends one backup_runs row with a raw handle: backup create's one write to the state, without the Kysely-backed storage core.
import Database from "better-sqlite3";

export interface BackupRunInsert {
  id: string;
  createdAt: number;
  archivePath: string | null;
  status: "completed" | "failed";
  manifestJson: string | null;
}

/**
 * backup_runs has the same columns in this tool's format and in OpenClaw's, which declares archive_path and
 * manifest_json NOT NULL: there a missing value goes in as "" / "{}" (the table's own declaration decides). A file
 * without the table fails the statement, which the caller reports. Nothing else is read or changed: loading the
 * storage core for this one row cost ~0.2 CPU-s, a tenth of an unchanged create.
 */
export function appendBackupRun(file: string, row: BackupRunInsert, busyTimeoutMs: number): void {
  const handle = new Database(file, { fileMustExist: true });
  try {
    // First statement on the handle: nothing after it can fail with an unprotected SQLITE_BUSY.
    handle.pragma(`busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`);
    handle.pragma("foreign_keys = ON");
    const columns = handle.pragma("table_info(backup_runs)") as Array<{ name: string; notnull: number }>;
    const required = new Set(columns.filter((c) => c.notnull).map((c) => c.name));
    handle
      .prepare("INSERT INTO backup_runs (id, created_at, archive_path, status, manifest_json) VALUES (?, ?, ?, ?, ?)")
      .run(row.id, row.createdAt, row.archivePath ?? (required.has("archive_path") ? "" : null), row.status, row.manifestJson ?? (required.has("manifest_json") ? "{}" : null));
  } finally {
    handle.close();
  }
}
