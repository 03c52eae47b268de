// `migrate history`: the runs recorded in migration_runs, each with the per-source outcomes of its report.
import fs from "node:fs";
import { SchemaFormatError, SchemaVersionError } from "../core/errors.js";
import { listLeases, MAINTENANCE_SCOPE } from "../state/lease.js";
import type { StatePaths } from "../state/paths.js";
import { isOpenclawLedger, openLedgerDatabase, type GlobalDatabase } from "../state/state-databases.js";
import { countRuns, listRuns, parseRunReport } from "./ledger.js";
import type { RunTotals, SourceOutcome } from "./types.js";

export interface MigrationHistoryOptions {
  paths: StatePaths;
  /** Newest first; default 20. */
  limit?: number;
}

export interface MigrationHistoryRun {
  id: string;
  /** `kind: "skip"` for `migrate skip` records. */
  kind: string;
  /**
   * The recorded status, except `interrupted` for a row still `running` while no live maintenance lease
   * exists (the process was killed, or the state was rolled back to an archive taken during the run).
   */
  status: string;
  /** What migration_runs.status says. */
  recordedStatus: string;
  /** The run did not finish: killed, or closed by a later run that completed its work. */
  interrupted: boolean;
  startedAt: number;
  finishedAt: number | null;
  backupPath: string | null;
  /** The run names an archive that is no longer on disk (pruned, moved, deleted). */
  backupMissing: boolean;
  backupSkipped: boolean;
  replanned: boolean;
  totals: RunTotals | null;
  sources: SourceOutcome[];
  changes: string[];
  warnings: string[];
  error?: string;
}

export interface MigrationHistoryResult {
  stateDir: string;
  databasePath: string;
  /** Runs in the ledger (all of them; `runs` holds the newest `limit`). */
  total: number;
  runs: MigrationHistoryRun[];
  /** Set when the global database is in another program's format: no ledger of this tool is in it. */
  notRead?: { code: string; writtenBy: string | null; reason: string };
}

/** Read-only: a missing global database means no runs yet. */
export function migrationHistory(options: MigrationHistoryOptions): MigrationHistoryResult {
  const { paths } = options;
  const base = { stateDir: paths.stateDir, databasePath: paths.globalDbPath };
  if (!fs.existsSync(paths.globalDbPath)) return { ...base, total: 0, runs: [] };
  let db: GlobalDatabase;
  try {
    db = openLedgerDatabase(paths, { mode: "read" });
  } catch (error) {
    // OpenClaw's own databases keep no migration_runs of this tool: an empty history, said why (never a crash).
    if (!(error instanceof SchemaFormatError || error instanceof SchemaVersionError)) throw error;
    const writtenBy = error.writtenBy ?? null;
    return { ...base, total: 0, runs: [], notRead: { code: error.code, writtenBy, reason: `${paths.globalDbPath} was written by ${writtenBy ?? "another program"}: any migration ledger in it is that program's own and is not interpreted here (\`openclaw doctor\` reports it)` } };
  }
  try {
    const rows = listRuns(db, options.limit ?? 20);
    // A `running` row is live only while some process holds the maintenance lease (every run holds it).
    const liveMaintenance = listLeases(db).some((l) => l.scope === MAINTENANCE_SCOPE && l.live);
    return {
      ...base,
      total: countRuns(db),
      runs: rows.map((row) => {
        const report = parseRunReport(row.report_json);
        const abandoned = row.status === "running" && !liveMaintenance;
        const backupPath = typeof report.backupPath === "string" ? report.backupPath : null;
        return {
          id: row.id,
          // A run OpenClaw's own doctor recorded carries its own report (no kind of ours).
          kind: report.kind ?? (isOpenclawLedger(db) ? "openclaw" : "legacy-state"),
          status: abandoned ? "interrupted" : row.status,
          recordedStatus: row.status,
          interrupted: abandoned || report.interrupted === true,
          startedAt: row.started_at,
          finishedAt: row.finished_at,
          backupPath,
          backupMissing: backupPath !== null && !fs.existsSync(backupPath),
          backupSkipped: report.backupSkipped ?? false,
          replanned: report.replanned ?? false,
          totals: report.totals ?? null,
          sources: report.sources ?? [],
          changes: report.changes ?? [],
          warnings: report.warnings ?? [],
          ...(report.error ? { error: report.error } : abandoned ? { error: "interrupted: no process is running it (killed, or the state was rolled back to an archive taken during the run); the next `doctor --fix` closes it" } : {}),
        };
      }),
    };
  } finally {
    db.close();
  }
}
